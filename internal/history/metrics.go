package history

import (
	"context"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/sandbox"
)

// DefaultMetricsInterval is how often the sampler takes a sample of every
// running sandbox: E2B's own sandboxes report every 5 s.
const DefaultMetricsInterval = 5 * time.Second

// maxSamples bounds one sandbox's history (about 60 KB). A full history
// drops every other sample and from then on keeps one sample per twice the
// interval, so a long-lived sandbox's whole life stays covered, at a
// coarser grain, rather than only its last hour.
const maxSamples = 720

// Sampled is the sandbox manager as the metrics history reads it.
type Sampled interface {
	// Census lists the live sandboxes (running or paused) without
	// waiting for any operation in flight.
	Census() []sandbox.Live
	// ReadStats reads a running sandbox on the host; ok is false when it
	// is not running, or, unless wait, busy with a lifecycle operation.
	// A sandbox not live is not found (errdefs.ErrNotFound).
	ReadStats(ctx context.Context, id string, wait bool) (_ sandbox.Reading, ok bool, _ error)
}

// MetricsOptions configure the metrics history.
type MetricsOptions struct {
	// Interval is how often Run samples each running sandbox; 0 means
	// DefaultMetricsInterval.
	Interval time.Duration
	// Retention is how long a killed sandbox's samples stay readable; 0
	// drops them when the sampler finds it gone.
	Retention time.Duration
}

// Metrics is the room that keeps the metrics history of live and recently
// killed sandboxes: it samples them through the manager's Sampled and
// serves the samples to the API edge, the census (telemetry, heartbeat)
// and the usage sampler.
type Metrics struct {
	src Sampled
	h   *metricsHistory
}

// NewMetrics returns the metrics history of src's sandboxes.
func NewMetrics(src Sampled, opts MetricsOptions) *Metrics {
	if opts.Interval <= 0 {
		opts.Interval = DefaultMetricsInterval
	}
	return &Metrics{src: src, h: newMetricsHistory(opts.Interval, opts.Retention, maxSamples)}
}

// Run takes a sample of every running sandbox each interval, until ctx
// ends. Paused sandboxes are not sampled (nothing runs in them, and
// reading them must not wake them), and one busy with a lifecycle
// operation is skipped until the next tick.
func (m *Metrics) Run(ctx context.Context) {
	t := time.NewTicker(m.h.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.sampleAll(ctx, time.Now())
		}
	}
}

func (m *Metrics) sampleAll(ctx context.Context, now time.Time) {
	census := m.src.Census()
	live := make(map[string]bool, len(census))
	for _, l := range census {
		live[l.ID] = true
		if !l.Running || !m.h.due(l.ID, now) {
			continue
		}
		if err := m.sample(ctx, l.ID, now, false); err != nil && !errdefs.IsNotFound(err) {
			log.G(ctx).Debug("sampling sandbox metrics", "sandbox", l.ID, "err", err)
		}
	}
	m.h.sweep(live, now)
}

// sample reads id and adds its sample: CPU use is the share of its CPUs
// used since the previous sample (or since it started, for the first).
func (m *Metrics) sample(ctx context.Context, id string, now time.Time, wait bool) error {
	r, ok, err := m.src.ReadStats(ctx, id, wait)
	if err != nil || !ok {
		return err
	}
	h := m.h
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.seriesOf(id)
	since, prev := s.lastTime, s.lastCPU
	if since.IsZero() {
		since, prev = r.StartedAt, 0
	}
	pct := 0.0
	// A restore starts a new cgroup whose counter is below prev: 0 then.
	if wall := now.Sub(since); wall > 0 && r.CPUCount > 0 && r.CPUNanos >= prev {
		pct = float64(r.CPUNanos-prev) / float64(wall.Nanoseconds()) / float64(r.CPUCount) * 100
	}
	// The first sample of a sandbox this process did not start (re-adopted
	// after a restart) would count CPU time the previous run counted.
	if r.CPUNanos >= prev && (!s.lastTime.IsZero() || r.StartedAt.After(h.born)) {
		h.cpuUsed[r.Team] += time.Duration(r.CPUNanos - prev)
	}
	s.lastTime, s.lastCPU = now, r.CPUNanos
	s.add(sandbox.Metric{
		Timestamp: now.UTC(), CPUCount: r.CPUCount, CPUUsedPct: min(pct, 100),
		MemUsed: r.MemUsed, MemTotal: r.MemTotal, MemCache: r.MemCache,
		DiskUsed: r.DiskUsed, DiskTotal: r.DiskTotal,
	}, h.max)
	return nil
}

// sampleIfNone samples a running sandbox that has no sample yet, waiting
// for an operation in flight; not found when id is not live.
func (m *Metrics) sampleIfNone(ctx context.Context, id string) error {
	if m.h.has(id) {
		return nil
	}
	return m.sample(ctx, id, time.Now(), true)
}

// Metrics returns the sandbox's samples whose timestamp, in whole unix
// seconds, lies in [from, to], oldest first: of a live sandbox or of one
// killed less than the retention ago. A running sandbox not sampled yet
// is sampled now, so a sandbox just created has one.
func (m *Metrics) Metrics(ctx context.Context, id string, from, to int64) ([]sandbox.Metric, error) {
	if err := m.sampleIfNone(ctx, id); err != nil {
		if got, ok := m.h.window(id, from, to); ok && errdefs.IsNotFound(err) {
			return got, nil
		}
		return nil, err
	}
	got, _ := m.h.window(id, from, to)
	if got == nil {
		got = []sandbox.Metric{} // paused before its first sample
	}
	return got, nil
}

// LatestMetric returns the sandbox's newest sample; ok is false when it
// has none (it was paused before its first).
func (m *Metrics) LatestMetric(ctx context.Context, id string) (_ *sandbox.Metric, ok bool, _ error) {
	err := m.sampleIfNone(ctx, id)
	if s, ok := m.h.latest(id); ok {
		return &s, true, nil
	}
	return nil, false, err
}

// Census is the manager's census with each running sandbox's newest
// sample.
func (m *Metrics) Census() []sandbox.Live {
	out := m.src.Census()
	for i := range out {
		if !out[i].Running {
			continue
		}
		if s, ok := m.h.latest(out[i].ID); ok {
			out[i].Latest = &s
		}
	}
	return out
}

// TakeCPUUsed returns the CPU time each team's sandboxes used, as the
// sampler measured it, since the previous call.
func (m *Metrics) TakeCPUUsed() map[string]time.Duration {
	return m.h.takeCPU()
}

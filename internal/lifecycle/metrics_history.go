package lifecycle

import (
	"context"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// DefaultMetricsInterval is how often the sampler takes a sample of every
// running sandbox: E2B's own sandboxes report every 5 s.
const DefaultMetricsInterval = 5 * time.Second

// maxSamples bounds one sandbox's history (about 60 KB). A full history
// drops every other sample and from then on keeps one sample per twice the
// interval, so a long-lived sandbox's whole life stays covered, at a
// coarser grain, rather than only its last hour.
const maxSamples = 720

// metricsHistory holds the samples of every sandbox, live or killed less
// than retention ago.
type metricsHistory struct {
	interval  time.Duration
	retention time.Duration
	max       int

	mu   sync.Mutex
	byID map[string]*series
	// cpuUsed is the CPU time each team's sandboxes used since the last
	// takeCPU; born is when the history was made (see addCPU).
	cpuUsed map[string]time.Duration
	born    time.Time
}

// series is one sandbox's samples, oldest first.
type series struct {
	samples []sandbox.Metric
	stride  int       // one sample is kept per stride intervals
	ended   time.Time // when the sampler found the sandbox gone; zero while it lives
}

func newMetricsHistory(interval, retention time.Duration, max int) *metricsHistory {
	return &metricsHistory{interval: interval, retention: retention, max: max, byID: map[string]*series{},
		cpuUsed: map[string]time.Duration{}, born: time.Now()}
}

// addCPU counts d of CPU time for team.
func (h *metricsHistory) addCPU(team string, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cpuUsed[team] += d
}

// takeCPU returns the CPU time counted per team and starts again at zero.
func (h *metricsHistory) takeCPU() map[string]time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.cpuUsed
	h.cpuUsed = make(map[string]time.Duration, len(out))
	return out
}

// due reports whether id wants a sample at now: it has none, or its newest
// is about stride intervals old (half an interval early, for tick jitter).
func (h *metricsHistory) due(id string, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.byID[id]
	if s == nil || len(s.samples) == 0 {
		return true
	}
	last := s.samples[len(s.samples)-1].Timestamp
	return now.Sub(last) >= time.Duration(s.stride)*h.interval-h.interval/2
}

// add appends a sample, thinning the series first when it is full.
// Samples not newer than the newest are dropped, so a series stays in order.
func (h *metricsHistory) add(id string, m sandbox.Metric) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.byID[id]
	if s == nil {
		s = &series{stride: 1}
		h.byID[id] = s
	}
	if n := len(s.samples); n > 0 && !m.Timestamp.After(s.samples[n-1].Timestamp) {
		return
	}
	if len(s.samples) >= h.max {
		s.thin()
	}
	s.samples = append(s.samples, m)
}

// thin keeps every other sample, the newest included, and doubles the
// stride.
func (s *series) thin() {
	n, j := len(s.samples), 0
	for i := (n - 1) % 2; i < n; i += 2 {
		s.samples[j] = s.samples[i]
		j++
	}
	s.samples = s.samples[:j]
	s.stride *= 2
}

// has reports whether id has at least one sample.
func (h *metricsHistory) has(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.byID[id]
	return s != nil && len(s.samples) > 0
}

// window returns a copy of id's samples whose unix second lies in
// [from, to]; ok is false when id has no history at all.
func (h *metricsHistory) window(id string, from, to int64) (out []sandbox.Metric, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.byID[id]
	if s == nil {
		return nil, false
	}
	out = []sandbox.Metric{}
	for _, m := range s.samples {
		if t := m.Timestamp.Unix(); t >= from && t <= to {
			out = append(out, m)
		}
	}
	return out, true
}

// latest returns id's newest sample.
func (h *metricsHistory) latest(id string) (sandbox.Metric, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.byID[id]
	if s == nil || len(s.samples) == 0 {
		return sandbox.Metric{}, false
	}
	return s.samples[len(s.samples)-1], true
}

// sweep marks the series of sandboxes that are gone as ended at now and
// drops those ended retention ago (at once when retention is 0). live is
// called with h.mu held: lock order h.mu, then the manager's mu.
func (h *metricsHistory) sweep(live func(id string) bool, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, s := range h.byID {
		if s.ended.IsZero() {
			if live(id) {
				continue
			}
			s.ended = now
			s.samples = append([]sandbox.Metric(nil), s.samples...) // give back the spare capacity
		}
		if now.Sub(s.ended) >= h.retention {
			delete(h.byID, id)
		}
	}
}

// SampleMetrics takes a sample of every running sandbox each metrics
// interval, until ctx ends. Paused sandboxes are not sampled (nothing runs
// in them, and reading them must not wake them), and one busy with a
// lifecycle operation is skipped until the next tick.
func (m *Manager) SampleMetrics(ctx context.Context) {
	t := time.NewTicker(m.history.interval)
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

func (m *Manager) sampleAll(ctx context.Context, now time.Time) {
	m.mu.Lock()
	entries := make([]*entry, 0, len(m.live))
	for _, e := range m.live {
		entries = append(entries, e)
	}
	m.mu.Unlock()
	for _, e := range entries {
		m.sampleOne(ctx, e, now)
	}
	m.history.sweep(func(id string) bool { _, err := m.get(id); return err == nil }, now)
}

func (m *Manager) sampleOne(ctx context.Context, e *entry, now time.Time) {
	// The id never changes, so reading it without e.mu is safe.
	if !m.history.due(e.sb.ID, now) {
		return
	}
	// A create, pause, snapshot or kill may hold e.mu for seconds; the
	// sampler waits for nobody.
	if !e.mu.TryLock() {
		return
	}
	defer e.mu.Unlock()
	if e.killed || e.sb.State != store.SandboxRunning {
		return
	}
	s, err := m.sampleLocked(ctx, e, now)
	if err != nil {
		log.G(ctx).Debug("sampling sandbox metrics", "sandbox", e.sb.ID, "err", err)
		return
	}
	m.history.add(e.sb.ID, *s)
}

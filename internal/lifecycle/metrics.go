package lifecycle

import (
	"context"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// Metrics returns the sandbox's samples whose timestamp, in whole unix
// seconds, lies in [from, to], oldest first: the history SampleMetrics
// keeps, of a live sandbox or of one killed less than the retention ago.
// A running sandbox not sampled yet is sampled now, so a sandbox just
// created has one.
func (m *Manager) Metrics(ctx context.Context, id string, from, to int64) ([]sandbox.Metric, error) {
	e, err := m.get(id)
	if err != nil {
		if got, ok := m.history.window(id, from, to); ok {
			return got, nil
		}
		return nil, err
	}
	if err := m.sampleIfNone(ctx, e); err != nil {
		return nil, err
	}
	got, _ := m.history.window(id, from, to)
	if got == nil {
		got = []sandbox.Metric{} // paused before its first sample
	}
	return got, nil
}

// LatestMetric returns the sandbox's newest sample; ok is false when it
// has none (it was paused before its first).
func (m *Manager) LatestMetric(ctx context.Context, id string) (_ *sandbox.Metric, ok bool, _ error) {
	e, err := m.get(id)
	if err == nil {
		err = m.sampleIfNone(ctx, e)
	}
	if s, ok := m.history.latest(id); ok {
		return &s, true, nil
	}
	return nil, false, err
}

// sampleIfNone samples a running sandbox that has no sample yet.
func (m *Manager) sampleIfNone(ctx context.Context, e *entry) error {
	if m.history.has(e.sb.ID) {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.killed || e.sb.State != store.SandboxRunning {
		return nil
	}
	s, err := m.sampleLocked(ctx, e, time.Now())
	if err != nil {
		return err
	}
	m.history.add(e.sb.ID, *s)
	return nil
}

// sampleLocked reads the sandbox's cgroup and disk on the host (envd is
// not asked, so sampling costs the sandbox nothing). CPU use is the share
// of its CPUs used since the previous sample (or since it started, for
// the first). Callers hold e.mu.
func (m *Manager) sampleLocked(ctx context.Context, e *entry, now time.Time) (*sandbox.Metric, error) {
	st, err := e.backend.Stats(ctx, e.sb.ID)
	if err != nil {
		return nil, fmt.Errorf("reading sandbox stats: %w", err)
	}
	since, prev := e.lastTime, e.lastCPU
	if since.IsZero() {
		since, prev = e.sb.StartedAt, 0
	}
	cpus := st.CPUCount
	if cpus <= 0 {
		cpus = e.sb.CPUCount
	}
	pct := 0.0
	// A restore starts a new cgroup whose counter is below prev: 0 then.
	if wall := now.Sub(since); wall > 0 && cpus > 0 && st.CPUUsageNanos >= prev {
		pct = float64(st.CPUUsageNanos-prev) / float64(wall.Nanoseconds()) / float64(cpus) * 100
	}
	// The first sample of a sandbox this process did not start (re-adopted
	// after a restart) would count CPU time the previous run counted.
	if st.CPUUsageNanos >= prev && (!e.lastTime.IsZero() || e.sb.StartedAt.After(m.history.born)) {
		m.history.addCPU(store.TeamOf(e.sb.TeamID), time.Duration(st.CPUUsageNanos-prev))
	}
	e.lastTime, e.lastCPU = now, st.CPUUsageNanos
	return &sandbox.Metric{
		Timestamp:  now.UTC(),
		CPUCount:   cpus,
		CPUUsedPct: min(pct, 100),
		MemUsed:    st.MemoryUsed,
		MemTotal:   st.MemoryLimit,
		MemCache:   st.MemoryCache,
		DiskUsed:   st.DiskUsed,
		DiskTotal:  st.DiskTotal,
	}, nil
}

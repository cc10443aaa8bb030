package sandbox

import (
	"context"
	"fmt"
	"time"
)

// Metric is one sample of a sandbox's resource use, in the units of E2B's
// SandboxMetric.
type Metric struct {
	Timestamp  time.Time
	CPUCount   int
	CPUUsedPct float64
	MemUsed    uint64
	MemTotal   uint64
	MemCache   uint64
	DiskUsed   uint64
	DiskTotal  uint64
}

// Metrics samples the sandbox's cgroup now. CPU use is the share of its CPUs
// used since the previous sample (or since it started, for the first).
func (m *Manager) Metrics(ctx context.Context, id string) (*Metric, error) {
	e, err := m.get(id)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	st, err := e.backend.Stats(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("reading sandbox stats: %w", err)
	}
	now := time.Now()
	since, prev := e.lastTime, e.lastCPU
	if since.IsZero() {
		since, prev = e.sb.StartedAt, 0
	}
	cpus := st.CPUCount
	if cpus <= 0 {
		cpus = e.sb.CPUCount
	}
	pct := 0.0
	if wall := now.Sub(since); wall > 0 && cpus > 0 && st.CPUUsageNanos >= prev {
		pct = float64(st.CPUUsageNanos-prev) / float64(wall.Nanoseconds()) / float64(cpus) * 100
	}
	e.lastTime, e.lastCPU = now, st.CPUUsageNanos
	return &Metric{
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

package lifecycle

import (
	"context"
	"fmt"

	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// ReadStats reads a running sandbox's cgroup and disk on the host, for
// the metrics history room (envd is not asked, so it costs the sandbox
// nothing). ok is false when the sandbox is paused or being killed, and,
// unless wait, while a lifecycle operation holds it: a create, pause,
// snapshot or kill may take seconds, and the periodic sampler waits for
// nobody. A sandbox not live is not found.
func (m *Manager) ReadStats(ctx context.Context, id string, wait bool) (_ sandbox.Reading, ok bool, _ error) {
	e, err := m.get(id)
	if err != nil {
		return sandbox.Reading{}, false, err
	}
	if wait {
		e.mu.Lock()
	} else if !e.mu.TryLock() {
		return sandbox.Reading{}, false, nil
	}
	defer e.mu.Unlock()
	if e.killed || e.sb.State != store.SandboxRunning {
		return sandbox.Reading{}, false, nil
	}
	st, err := e.backend.Stats(ctx, e.sb.ID)
	if err != nil {
		return sandbox.Reading{}, false, fmt.Errorf("reading sandbox stats: %w", err)
	}
	cpus := st.CPUCount
	if cpus <= 0 {
		cpus = e.sb.CPUCount
	}
	return sandbox.Reading{
		Team: store.TeamOf(e.sb.TeamID), StartedAt: e.sb.StartedAt, CPUCount: cpus, CPUNanos: st.CPUUsageNanos,
		MemUsed: st.MemoryUsed, MemCache: st.MemoryCache, MemTotal: st.MemoryLimit,
		DiskUsed: st.DiskUsed, DiskTotal: st.DiskTotal,
	}, true, nil
}

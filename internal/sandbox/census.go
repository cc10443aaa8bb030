package sandbox

import (
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// Lifecycle operations an OpObserver is told about.
const (
	OpCreate = "create"
	OpPause  = "pause"
	OpResume = "resume"
	OpKill   = "kill"
)

// OpObserver is told, after each lifecycle operation (one of the Op
// constants) on a sandbox of runtime, how long it took and how it ended.
// It runs on the operation's goroutine, so it must be quick.
type OpObserver func(op, runtime string, took time.Duration, err error)

// observe reports an operation that began at start to the observer.
func (m *Manager) observe(op, runtime string, start time.Time, err error) {
	if m.opts.ObserveOp != nil {
		m.opts.ObserveOp(op, runtime, time.Since(start), err)
	}
}

// Live is one sandbox in the manager's live view, as Census reports it.
type Live struct {
	ID, TemplateID, Runtime, Team string
	Running                       bool // false: paused
	CPUCount, MemoryMB            int
	// Latest is the newest sample the metrics sampler took of a running
	// sandbox; nil for a paused one or one not sampled yet.
	Latest *Metric
}

// Census returns every live sandbox (running or paused; pooled ones are
// no one's yet and are left out) without waiting for any operation in
// flight: what it reads never changes after the sandbox goes live, or is
// atomic, so a scrape never queues behind a create or a pause.
func (m *Manager) Census() []Live {
	m.mu.Lock()
	out := make([]Live, 0, len(m.live))
	for _, e := range m.live {
		sb := e.sb
		out = append(out, Live{
			ID: sb.ID, TemplateID: sb.TemplateID, Runtime: sb.Backend, Team: store.TeamOf(sb.TeamID),
			Running: e.running.Load(), CPUCount: sb.CPUCount, MemoryMB: sb.MemoryMB,
		})
	}
	m.mu.Unlock()
	for i := range out {
		if !out[i].Running {
			continue
		}
		if s, ok := m.history.latest(out[i].ID); ok {
			out[i].Latest = &s
		}
	}
	return out
}

// TakeCPUUsed returns the CPU time each team's sandboxes used, as the
// metrics sampler measured it, since the previous call.
func (m *Manager) TakeCPUUsed() map[string]time.Duration {
	return m.history.takeCPU()
}

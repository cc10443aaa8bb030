package lifecycle

import (
	"time"

	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// observe reports an operation that began at start to the observer.
func (m *Manager) observe(op, runtime string, start time.Time, err error) {
	if m.opts.ObserveOp != nil {
		m.opts.ObserveOp(op, runtime, time.Since(start), err)
	}
}

// Census returns every live sandbox (running or paused; pooled ones are
// no one's yet and are left out; their samples are the metrics history
// room's) without waiting for any operation in
// flight: what it reads never changes after the sandbox goes live, or is
// atomic, so a scrape never queues behind a create or a pause.
func (m *Manager) Census() []sandbox.Live {
	m.mu.Lock()
	out := make([]sandbox.Live, 0, len(m.live))
	for _, e := range m.live {
		sb := e.sb
		out = append(out, sandbox.Live{
			ID: sb.ID, TemplateID: sb.TemplateID, Runtime: sb.Backend, Team: store.TeamOf(sb.TeamID),
			Running: e.running.Load(), CPUCount: sb.CPUCount, MemoryMB: sb.MemoryMB,
		})
	}
	m.mu.Unlock()
	return out
}

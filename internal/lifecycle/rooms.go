package lifecycle

import (
	"context"
	"time"
)

// KillFor kills a sandbox as Kill does, recording reason (a sandbox.Kill*
// constant) in its killed event: for the rooms that end sandboxes on
// their own account (retention).
func (m *Manager) KillFor(ctx context.Context, id, reason string) error {
	return m.kill(ctx, id, reason)
}

// PausedBefore lists the sandboxes paused before cutoff.
func (m *Manager) PausedBefore(cutoff time.Time) []string {
	m.mu.Lock()
	entries := make([]*entry, 0, len(m.live))
	for _, e := range m.live {
		if !e.running.Load() {
			entries = append(entries, e)
		}
	}
	m.mu.Unlock()
	var out []string
	for _, e := range entries {
		e.mu.Lock()
		if !e.sb.PausedAt.IsZero() && e.sb.PausedAt.Before(cutoff) {
			out = append(out, e.sb.ID)
		}
		e.mu.Unlock()
	}
	return out
}

package lifecycle

import (
	"context"
	"fmt"

	"github.com/warren-sandbox/warren/internal/log"
)

// setIntent records, before an operation acts, what the sandbox is about to
// do, so a server restarted after a crash in the middle knows. The caller
// holds e.mu.
func (m *Manager) setIntent(ctx context.Context, e *entry, intent string) error {
	e.sb.Intent = intent
	if err := m.opts.Store.UpdateSandbox(ctx, e.sb); err != nil {
		e.sb.Intent = ""
		return fmt.Errorf("recording that the sandbox is %s: %w", intent, err)
	}
	return nil
}

// dropIntent forgets the intent of an operation that failed without
// changing the sandbox's state. Should that write fail, the intent stays
// recorded, which a restart reconciles as it would a crash.
func (m *Manager) dropIntent(ctx context.Context, e *entry) {
	if e.sb.Intent == "" {
		return
	}
	e.sb.Intent = ""
	if err := m.opts.Store.UpdateSandbox(context.WithoutCancel(ctx), e.sb); err != nil {
		log.G(ctx).Warn("clearing the intent of a failed operation", "sandbox", e.sb.ID, "err", err)
	}
}

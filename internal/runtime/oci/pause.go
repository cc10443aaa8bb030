package oci

import (
	"context"
	"fmt"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// Pause implements runtime.Backend.Pause (runc: the cgroup freezer; runsc:
// the sentry stops its tasks). errdefs.ErrFailedPrecondition unless running.
func (b *Backend) Pause(ctx context.Context, id string) error {
	return b.transition(ctx, id, "pause", runtime.StateRunning)
}

// Resume implements runtime.Backend.Resume. errdefs.ErrFailedPrecondition
// unless paused.
func (b *Backend) Resume(ctx context.Context, id string) error {
	return b.transition(ctx, id, "resume", runtime.StatePaused)
}

func (b *Backend) transition(ctx context.Context, id, verb string, from runtime.State) error {
	if err := validID(id); err != nil {
		return err
	}
	unlock := b.locks.lock(id)
	defer unlock()
	inst, err := b.Inspect(ctx, id)
	if err != nil {
		return err
	}
	if inst.State != from {
		return fmt.Errorf("%s sandbox %s: it is %s: %w", verb, id, inst.State, errdefs.ErrFailedPrecondition)
	}
	if _, err := b.cli.exec(ctx, verb, id); err != nil {
		return fmt.Errorf("%s sandbox %s: %w", verb, id, err)
	}
	return nil
}

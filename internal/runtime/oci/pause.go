package oci

import (
	"context"
	"fmt"
	"strings"
	"time"

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
	if verb == "pause" {
		err = b.freeze(ctx, id)
	} else {
		err = b.cli.resume(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("%s sandbox %s: %w", verb, id, err)
	}
	return nil
}

// freeze runs the runtime's pause, retried a few times when runc reports
// that the cgroup v1 freezer did not settle: a task in uninterruptible
// sleep (a page fault waiting for the disk, as on a cold page cache) keeps
// the cgroup FREEZING until runc gives up and thaws it again, and a moment
// later the same freeze succeeds.
func (b *Backend) freeze(ctx context.Context, id string) error {
	var err error
	for attempt := range freezeAttempts {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return err
			case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
			}
		}
		err = b.cli.pause(ctx, id)
		if err == nil || !strings.Contains(err.Error(), "unable to freeze") {
			return err
		}
	}
	return err
}

// freezeAttempts bounds freeze's retries (0.6 s of waiting in all).
const freezeAttempts = 4

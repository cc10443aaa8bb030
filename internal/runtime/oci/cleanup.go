package oci

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
)

// cleanupTimeout bounds undoing a failed Create, which runs even when the
// caller's context is already cancelled.
const cleanupTimeout = 30 * time.Second

// cleanup is a stack of undo steps for a multi-step allocation: push one
// after each step succeeds; on failure run them all in reverse order.
type cleanup struct {
	steps []cleanupStep
}

type cleanupStep struct {
	what string
	fn   func(context.Context) error
}

func (c *cleanup) add(what string, fn func(context.Context) error) {
	c.steps = append(c.steps, cleanupStep{what, fn})
}

// run undoes every step, latest first, on a context detached from ctx's
// cancellation, and returns all failures. Each step is attempted even when
// an earlier one failed.
func (c *cleanup) run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	var errs []error
	for i := len(c.steps) - 1; i >= 0; i-- {
		s := c.steps[i]
		if err := s.fn(ctx); err != nil {
			log.G(ctx).Error("cleanup step failed", "step", s.what, "err", err)
			errs = append(errs, fmt.Errorf("%s: %w", s.what, err))
		}
	}
	c.steps = nil
	return errors.Join(errs...)
}

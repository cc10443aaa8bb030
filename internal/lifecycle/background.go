package lifecycle

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// background is the work the manager does on its own, outside any request:
// timeouts, checkpoints of frozen sandboxes, watches of inits and memory,
// parks, collections, retries. All of it runs under ctx, which Shutdown
// cancels, and is counted, so Shutdown can wait for it to finish instead
// of leaving it to run on against a store being closed.
type background struct {
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex // guards closed against wg.Add racing wg.Wait
	closed bool
	wg     sync.WaitGroup
}

func newBackground(parent context.Context) *background {
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	return &background{ctx: ctx, cancel: cancel}
}

// enter counts one piece of work in; false once the manager is shut down
// (or its base context ended), when nothing new may start.
func (b *background) enter() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.ctx.Err() != nil {
		return false
	}
	b.wg.Add(1)
	return true
}

// done reports whether shutdown has begun.
func (b *background) done() bool { return b.ctx.Err() != nil }

// close cancels ctx and refuses new work, then waits for what runs until
// wait ends. It reports the work still running when wait ended first.
func (b *background) close(wait context.Context) error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.cancel()
	finished := make(chan struct{})
	go func() { b.wg.Wait(); close(finished) }()
	select {
	case <-finished:
		return nil
	case <-wait.Done():
		return fmt.Errorf("the manager's background work did not finish: %w", wait.Err())
	}
}

// goBackground runs fn in a goroutine under the manager's base context;
// nothing runs once the manager is shut down.
func (m *Manager) goBackground(fn func(ctx context.Context)) {
	if !m.bg.enter() {
		return
	}
	go func() {
		defer m.bg.wg.Done()
		fn(m.bg.ctx)
	}()
}

// afterFunc is time.AfterFunc for the manager's own work: fn runs under
// the base context and is counted, and not at all after shutdown.
func (m *Manager) afterFunc(d time.Duration, fn func(ctx context.Context)) *time.Timer {
	return time.AfterFunc(d, func() {
		if !m.bg.enter() {
			return
		}
		defer m.bg.wg.Done()
		fn(m.bg.ctx)
	})
}

// sleep waits d or until ctx ends, reporting false for the latter.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

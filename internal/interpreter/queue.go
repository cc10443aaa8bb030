package interpreter

import (
	"context"
	"slices"
	"sync"
)

// fifo is a lock granted in arrival order. sync.Mutex makes no ordering
// promise, and concurrent runCode calls on one context must run in the
// order they arrived.
type fifo struct {
	mu      sync.Mutex // mu protects held and waiters
	held    bool
	waiters []chan struct{}
}

// lock waits for the lock; it gives up, without holding it, when ctx ends.
func (q *fifo) lock(ctx context.Context) error {
	q.mu.Lock()
	if !q.held {
		q.held = true
		q.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	q.waiters = append(q.waiters, ch)
	q.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		q.mu.Lock()
		if i := slices.Index(q.waiters, ch); i >= 0 {
			q.waiters = slices.Delete(q.waiters, i, i+1)
			q.mu.Unlock()
			return ctx.Err()
		}
		q.mu.Unlock()
		// The lock was handed over while ctx ended: pass it on.
		q.unlock()
		return ctx.Err()
	}
}

// unlock hands the lock to the oldest waiter, or frees it.
func (q *fifo) unlock() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiters) == 0 {
		q.held = false
		return
	}
	ch := q.waiters[0]
	q.waiters = q.waiters[1:]
	close(ch) // held stays true: ownership moves to that waiter
}

// busy reports whether someone holds the lock.
func (q *fifo) busy() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.held
}

// waiting is the number of queued callers.
func (q *fifo) waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiters)
}

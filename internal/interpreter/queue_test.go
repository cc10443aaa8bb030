package interpreter

import (
	"context"
	"testing"
	"time"
)

func TestFIFOCancelWhileWaiting(t *testing.T) {
	t.Parallel()
	var q fifo
	if err := q.lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if err := q.lock(ctx); err == nil {
		t.Fatal("lock succeeded while held")
	}
	if q.waiting() != 0 {
		t.Errorf("a cancelled waiter stayed queued")
	}
	got := make(chan struct{})
	go func() {
		_ = q.lock(t.Context())
		close(got)
	}()
	for q.waiting() != 1 {
		time.Sleep(time.Millisecond)
	}
	q.unlock()
	<-got
	if !q.busy() {
		t.Error("lock not handed over")
	}
	q.unlock()
	if q.busy() {
		t.Error("lock still held")
	}
}

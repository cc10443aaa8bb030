package proxy

import (
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

func TestGuardedBody(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			_, _ = io.WriteString(pw, "the rest of the body")
			pw.Close()
		}()
		var deadlines []time.Time
		g := &guardedBody{rc: pr, interrupt: func(d time.Time) error { deadlines = append(deadlines, d); return nil }}
		g.finish()
		if len(deadlines) != 2 || deadlines[0].Before(time.Now()) || !deadlines[1].IsZero() {
			t.Fatalf("deadlines set: %v; want a bound on the drain, then none", deadlines)
		}
		if n, _ := pr.Read(make([]byte, 1)); n != 0 {
			t.Fatal("finish left the body unread")
		}
		if _, err := g.Read(make([]byte, 1)); !errors.Is(err, errBodyDone) {
			t.Fatalf("read after finish: %v", err)
		}
	})
	t.Run("read in flight", func(t *testing.T) {
		pr, pw := io.Pipe()
		var deadlines []time.Time
		g := &guardedBody{rc: pr, interrupt: func(d time.Time) error {
			deadlines = append(deadlines, d)
			if !d.IsZero() && d.Before(time.Now()) {
				pw.CloseWithError(os.ErrDeadlineExceeded)
			}
			return nil
		}}
		got := make(chan error, 1)
		go func() {
			_, err := g.Read(make([]byte, 1))
			got <- err
		}()
		// Wait until the reader holds the lock, then finish.
		for g.reading.TryLock() {
			g.reading.Unlock()
			time.Sleep(time.Millisecond)
		}
		g.finish()
		select {
		case err := <-got:
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("the read in flight ended with %v", err)
			}
		default:
			t.Fatal("finish returned while a read was still in flight")
		}
		if len(deadlines) != 2 || !deadlines[1].IsZero() {
			t.Fatalf("deadlines set: %v; want one in the past, then none", deadlines)
		}
		if _, err := g.Read(make([]byte, 1)); !errors.Is(err, errBodyDone) {
			t.Fatalf("read after finish: %v", err)
		}
	})
}

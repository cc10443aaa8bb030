package lifecycle

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

func TestShutdownCancelsAndWaits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// work runs as the manager's background work; it returns when
		// its context ends unless it ignores it.
		ignoresCancel bool
		wantErr       bool
	}{
		{name: "work that honours the base context is waited for", ignoresCancel: false},
		{name: "work that does not is reported when the wait ends", ignoresCancel: true, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			started, release := make(chan struct{}), make(chan struct{})
			finished := make(chan struct{})
			e.m.goBackground(func(ctx context.Context) {
				defer close(finished)
				close(started)
				if tc.ignoresCancel {
					<-release
					return
				}
				<-ctx.Done()
			})
			<-started
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			err := e.m.Shutdown(ctx)
			close(release)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Shutdown: %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr {
				select {
				case <-finished:
				default:
					t.Fatal("Shutdown returned before the background work ended")
				}
			}
			ran := false
			e.m.goBackground(func(context.Context) { ran = true })
			e.m.afterFunc(0, func(context.Context) { ran = true }).Stop()
			if ran || e.m.bg.enter() {
				t.Error("background work started after Shutdown")
			}
		})
	}
}

// A sandbox whose timeout passes after Shutdown is left running: the
// timer's work belongs to the manager that was shut down.
func TestShutdownStopsTimeouts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb, err := e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: "base", Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // past its end

	got, err := e.st.GetSandbox(e.ctx, sb.ID)
	if err != nil {
		t.Fatalf("the sandbox's record after its timeout passed post-shutdown: %v", err)
	}
	if got.State != store.SandboxRunning {
		t.Errorf("state %q after shutdown, want running", got.State)
	}
	if !errors.Is(e.m.bg.ctx.Err(), context.Canceled) {
		t.Errorf("base context after Shutdown: %v", e.m.bg.ctx.Err())
	}
}

package lifecycle

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/testutil"
)

func TestResumeLifetime(t *testing.T) {
	t.Parallel()
	paused := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		left  time.Duration // EndAt - PausedAt
		asked time.Duration
		want  time.Duration
	}{
		{"30 min sandbox paused at minute 10, nothing asked", 20 * time.Minute, sandbox.NoTimeout, 20 * time.Minute},
		{"asked less than left: never shortened", 20 * time.Minute, 5 * time.Minute, 20 * time.Minute},
		{"asked more than left", 20 * time.Minute, time.Hour, time.Hour},
		{"a few seconds left: the floor", 3 * time.Second, sandbox.NoTimeout, sandbox.MinResumeLifetime},
		{"asked below the floor", 0, 5 * time.Second, sandbox.MinResumeLifetime},
		{"asked zero with time left", 20 * time.Minute, 0, 20 * time.Minute},
		{"paused by its timeout, nothing asked: a new default", 0, sandbox.NoTimeout, sandbox.DefaultTimeout},
		{"paused a little after its end", -2 * time.Second, sandbox.NoTimeout, sandbox.DefaultTimeout},
		{"paused by its timeout, asked", -time.Second, 10 * time.Minute, 10 * time.Minute},
	}
	for _, tt := range tests {
		sb := &store.Sandbox{State: store.SandboxPaused, PausedAt: paused, EndAt: paused.Add(tt.left)}
		if got := resumeLifetime(sb, tt.asked); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
	if got := resumeLifetime(&store.Sandbox{State: store.SandboxPaused, EndAt: paused}, sandbox.NoTimeout); got != sandbox.DefaultTimeout {
		t.Errorf("no pause time recorded: %s, want the default", got)
	}
}

// TestPauseKeepsRemainingLifetime: each way a paused sandbox comes back
// gives it the lifetime the rule says, measured as EndAt - now after the
// resume.
func TestPauseKeepsRemainingLifetime(t *testing.T) {
	t.Parallel()
	const life = 30 * time.Minute
	tests := []struct {
		name   string
		create sandbox.CreateRequest
		// pause pauses the sandbox (nil: Pause with memory).
		pause func(e *env, id string) error
		// resume brings it back (nil: Connect with NoTimeout).
		resume func(t *testing.T, e *env, id string) *Manager
		want   time.Duration
	}{
		{name: "connect without timeout", want: life},
		{name: "pause without memory", pause: func(e *env, id string) error { return e.m.Pause(e.ctx, id, false) }, want: life},
		{name: "connect asking less", resume: connectFor(time.Minute), want: life},
		{name: "connect asking more", resume: connectFor(2 * time.Hour), want: 2 * time.Hour},
		{name: "auto-resume by traffic", create: sandbox.CreateRequest{AutoResume: true}, resume: func(t *testing.T, e *env, id string) *Manager {
			if _, err := e.m.Resolve(e.ctx, id); err != nil {
				t.Fatal(err)
			}
			return e.m
		}, want: life},
		{name: "timeout set while paused", resume: func(t *testing.T, e *env, id string) *Manager {
			if err := e.m.SetTimeout(e.ctx, id, 10*time.Minute); err != nil {
				t.Fatal(err)
			}
			return connectFor(sandbox.NoTimeout)(t, e, id)
		}, want: 10 * time.Minute},
		{name: "after a failed resume", pause: func(e *env, id string) error { return e.m.Pause(e.ctx, id, false) },
			resume: func(t *testing.T, e *env, id string) *Manager {
				setEnvdFail(e, true)
				if _, _, err := e.m.Connect(e.ctx, id, time.Hour, true); err == nil {
					t.Fatal("a resume with envd down succeeded")
				}
				setEnvdFail(e, false)
				return connectFor(sandbox.NoTimeout)(t, e, id)
			}, want: life},
		{name: "restart while paused", resume: func(t *testing.T, e *env, id string) *Manager {
			e.m.Shutdown(context.Background())
			m2, err := New(e.m.opts)
			if err != nil {
				t.Fatal(err)
			}
			shutdownAtEnd(t, m2)
			if err := m2.Reconcile(e.ctx); err != nil {
				t.Fatal(err)
			}
			if _, _, err := m2.Connect(e.ctx, id, sandbox.NoTimeout, true); err != nil {
				t.Fatal(err)
			}
			return m2
		}, want: life},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			tt.create.Timeout = life
			sb := e.create(t, tt.create)
			pause, resume := tt.pause, tt.resume
			if pause == nil {
				pause = func(e *env, id string) error { return e.m.Pause(e.ctx, id, true) }
			}
			if resume == nil {
				resume = connectFor(sandbox.NoTimeout)
			}
			if err := pause(e, sb.ID); err != nil {
				t.Fatal(err)
			}
			m := resume(t, e, sb.ID)
			wantLeft(t, m, e, sb.ID, tt.want)
		})
	}
}

// An auto-pause on timeout leaves nothing: the resume gets the default.
func TestResumeAfterAutoPause(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb := e.create(t, sandbox.CreateRequest{Timeout: 50 * time.Millisecond, AutoPause: true})
	testutil.Eventually(t, 5*time.Second, func() error {
		if cur, _ := e.m.Get(e.ctx, sb.ID); cur == nil || cur.State != store.SandboxPaused {
			return errors.New("not paused yet")
		}
		return nil
	})
	connectFor(sandbox.NoTimeout)(t, e, sb.ID)
	wantLeft(t, e.m, e, sb.ID, sandbox.DefaultTimeout)
}

func connectFor(d time.Duration) func(t *testing.T, e *env, id string) *Manager {
	return func(t *testing.T, e *env, id string) *Manager {
		t.Helper()
		if _, resumed, err := e.m.Connect(e.ctx, id, d, true); err != nil || !resumed {
			t.Fatalf("Connect: resumed %v, %v", resumed, err)
		}
		return e.m
	}
}

// wantLeft checks the running sandbox ends want from now, within the few
// seconds a slow machine may have spent since its pause.
func wantLeft(t *testing.T, m *Manager, e *env, id string, want time.Duration) {
	t.Helper()
	sb, err := m.Get(e.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if sb.State != store.SandboxRunning {
		t.Fatalf("state %s after the resume, want running", sb.State)
	}
	if left := time.Until(sb.EndAt); left > want+time.Second || left < want-5*time.Second {
		t.Fatalf("%s left after the resume, want about %s", left.Round(time.Second), want)
	}
	stored, err := e.st.GetSandbox(e.ctx, id)
	if err != nil || !stored.EndAt.Equal(sb.EndAt) {
		t.Fatalf("stored end %v (%v), want %v", stored, err, sb.EndAt)
	}
}

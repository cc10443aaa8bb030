package lifecycle

import (
	"errors"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// A 503 promises that nothing changed: a resume whose envd never answers
// leaves the sandbox paused (its instance stopped) and a retry works.
func TestFailedResumeLeavesTheSandboxPaused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb := e.create(t, sandbox.CreateRequest{})
	if err := e.m.Pause(e.ctx, sb.ID, false); err != nil {
		t.Fatal(err)
	}
	setEnvdFail(e, true)
	if _, _, err := e.m.Connect(e.ctx, sb.ID, time.Minute, true); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("Connect with envd down: %v, want unavailable (503)", err)
	}
	if inst := backendState(t, e, sb.ID); inst.State != runtime.StateStopped {
		t.Fatalf("after a failed resume the instance is %s, want stopped as before", inst.State)
	}
	if got, _ := e.m.Get(e.ctx, sb.ID); got.State != store.SandboxPaused {
		t.Fatalf("record state %q, want paused", got.State)
	}
	setEnvdFail(e, false)
	if _, resumed, err := e.m.Connect(e.ctx, sb.ID, time.Minute, true); err != nil || !resumed {
		t.Fatalf("the retry: resumed %v, %v", resumed, err)
	}
}

func setEnvdFail(e *env, fail bool) {
	e.envd.mu.Lock()
	defer e.envd.mu.Unlock()
	e.envd.fail = fail
}

package lifecycle

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/runtime/fake"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// waitCheckpointed waits for the background checkpoint of paused sandbox id.
func waitCheckpointed(t *testing.T, e *env, id string) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, func() error {
		if inst := backendState(t, e, id); inst.State != runtime.StateStopped || !inst.Checkpointed {
			return errors.New("not checkpointed yet")
		}
		return nil
	})
}

// TestPauseAnswersBeforeCheckpoint: with CheckpointAfter 0 a pause answers
// once the sandbox is frozen; the checkpoint runs after it, and a resume
// or kill that comes meanwhile waits for it, then acts on the checkpointed
// sandbox.
func TestPauseAnswersBeforeCheckpoint(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		op   func(e *env, id string) error
		// check runs once op returned.
		check func(t *testing.T, e *env, id string, inits int)
	}{
		{"resume waits", func(e *env, id string) error {
			_, resumed, err := e.m.Connect(e.ctx, id, time.Minute, true)
			if err == nil && !resumed {
				err = errors.New("not resumed")
			}
			return err
		}, func(t *testing.T, e *env, id string, inits int) {
			if st := backendState(t, e, id).State; st != runtime.StateRunning {
				t.Fatalf("after resume: %s", st)
			}
			if n := len(e.envd.calls()); n != inits {
				t.Errorf("the resume booted afresh (envd initialised %d more times): memory lost", n-inits)
			}
		}},
		{"kill waits", func(e *env, id string) error {
			return e.m.Kill(e.ctx, id)
		}, func(t *testing.T, e *env, id string, _ int) {
			if _, err := e.b.Inspect(e.ctx, id); !errdefs.IsNotFound(err) {
				t.Fatalf("instance after kill: %v", err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t) // CheckpointAfter 0
			sb := e.create(t, sandbox.CreateRequest{})
			entered, release := make(chan struct{}), make(chan struct{})
			e.b.SetHook(func(ctx context.Context, op fake.Op, id string) error {
				if op == fake.OpStop && id == sb.ID {
					close(entered)
					<-release
				}
				return nil
			})
			paused := make(chan error, 1)
			go func() { paused <- e.m.Pause(e.ctx, sb.ID, true) }()
			select {
			case err := <-paused:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(5 * time.Second):
				close(release)
				t.Fatal("the pause waited for its checkpoint")
			}
			select {
			case <-entered:
			case <-time.After(5 * time.Second):
				t.Fatal("no checkpoint followed the pause")
			}
			if st := backendState(t, e, sb.ID).State; st != runtime.StatePaused {
				t.Fatalf("during the checkpoint the backend has it %s, want frozen", st)
			}
			inits := len(e.envd.calls())
			done := make(chan error, 1)
			go func() { done <- tt.op(e, sb.ID) }()
			select {
			case err := <-done:
				t.Fatalf("%s did not wait for the checkpoint: %v", tt.name, err)
			case <-time.After(100 * time.Millisecond):
			}
			close(release)
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("still waiting after the checkpoint ended")
			}
			tt.check(t, e, sb.ID, inits)
		})
	}
}

// TestPauseCheckpointFailureStaysFrozen: a background checkpoint that
// fails leaves the sandbox frozen, paused, with no intent, and it resumes.
func TestPauseCheckpointFailureStaysFrozen(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb := e.create(t, sandbox.CreateRequest{})
	e.b.FailNext(fake.OpStop, sb.ID, errors.New("disk full"))
	if err := e.m.Pause(e.ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		for _, c := range e.b.Calls() {
			if c.Op == fake.OpStop && c.ID == sb.ID {
				return nil
			}
		}
		return errors.New("no checkpoint tried")
	})
	if _, _, err := e.m.Connect(e.ctx, sb.ID, time.Minute, true); err != nil { // waits for the failed checkpoint
		t.Fatal(err)
	}
	rec, err := e.st.GetSandbox(e.ctx, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Intent != "" || backendState(t, e, sb.ID).State != runtime.StateRunning {
		t.Fatalf("after a failed checkpoint and a resume: intent %q, backend %s", rec.Intent, backendState(t, e, sb.ID).State)
	}
}

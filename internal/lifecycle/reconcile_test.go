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
	"github.com/warren-sandbox/warren/internal/store"
)

// TestReconcileIntent: a restart settles each sandbox by what it was doing
// when the server died and what its instance really is, never leaving one
// running while recorded as paused and never removing one whose processes
// were stopped on purpose.
func TestReconcileIntent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		state    string                         // recorded state
		intent   string                         // recorded intent
		instance func(*env, string) error       // brings the instance to the state the crash left
		want     string                         // "" = forgotten and destroyed
		wantInst runtime.State                  // the instance afterwards, when kept
		check    func(*testing.T, *env, string) // more, when kept
	}{
		{"pausing, not yet paused", store.SandboxRunning, store.IntentPausing, nil, store.SandboxRunning, runtime.StateRunning, nil},
		{"pausing, frozen", store.SandboxRunning, store.IntentPausing, freeze, store.SandboxPaused, runtime.StatePaused, nil},
		{"pausing, checkpointed", store.SandboxRunning, store.IntentPausing, checkpoint, store.SandboxPaused, runtime.StateStopped, wantCheckpoint},
		{"checkpointing a paused one, thawed", store.SandboxPaused, store.IntentPausing, nil, store.SandboxPaused, runtime.StatePaused, nil},
		{"checkpointing a paused one, still frozen", store.SandboxPaused, store.IntentPausing, freeze, store.SandboxPaused, runtime.StatePaused, nil},
		{"checkpointing a paused one, done", store.SandboxPaused, store.IntentPausing, checkpoint, store.SandboxPaused, runtime.StateStopped, wantCheckpoint},
		{"resuming, running", store.SandboxPaused, store.IntentResuming, nil, store.SandboxRunning, runtime.StateRunning, wantInitAgain},
		{"resuming, still stopped", store.SandboxPaused, store.IntentResuming, checkpoint, store.SandboxPaused, runtime.StateStopped, wantCheckpoint},
		{"snapshotting, left frozen", store.SandboxRunning, store.IntentSnapshotting, freeze, store.SandboxRunning, runtime.StateRunning, nil},
		{"snapshotting a paused one, left running", store.SandboxPaused, store.IntentSnapshotting, nil, store.SandboxPaused, runtime.StatePaused, nil},
		// A snapshot's source, checkpointed for it and not yet restored.
		{"snapshotting, left checkpointed", store.SandboxRunning, store.IntentSnapshotting, checkpoint, store.SandboxRunning, runtime.StateRunning, nil},
		{"snapshotting, left checkpointed, restore fails", store.SandboxRunning, store.IntentSnapshotting, checkpointThenFailStart, store.SandboxPaused, runtime.StateStopped, wantCheckpoint},
		{"snapshotting, left stopped without memory", store.SandboxRunning, store.IntentSnapshotting, stopCold, store.SandboxPaused, runtime.StateStopped, nil},
		{"killing, not yet destroyed", store.SandboxRunning, store.IntentKilling, nil, "", "", nil},
		{"killing a paused one", store.SandboxPaused, store.IntentKilling, checkpoint, "", "", nil},
		{"none, recorded paused but running", store.SandboxPaused, "", nil, store.SandboxRunning, runtime.StateRunning, nil},
		{"none, died while down", store.SandboxRunning, "", crash, "", "", nil},
		{"none, paused and stopped", store.SandboxPaused, "", checkpoint, store.SandboxPaused, runtime.StateStopped, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A frozen paused sandbox stays frozen: no checkpoint timer
			// moves it to disk while the test looks.
			e := newEnvWith(t, func(o *Options) { o.CheckpointAfter = time.Hour })
			sb := e.create(t, sandbox.CreateRequest{})
			// The server is down while the instance changes: the first
			// manager must not act on its init's exit.
			e.m.Shutdown(context.Background())
			if tc.instance != nil {
				if err := tc.instance(e, sb.ID); err != nil {
					t.Fatal(err)
				}
			}
			rec, err := e.st.GetSandbox(e.ctx, sb.ID)
			if err != nil {
				t.Fatal(err)
			}
			rec.State, rec.Intent = tc.state, tc.intent
			if err := e.st.UpdateSandbox(e.ctx, rec); err != nil {
				t.Fatal(err)
			}
			inits := len(e.envd.calls())
			m2 := e.restart(t)
			got, err := m2.Get(e.ctx, sb.ID)
			if tc.want == "" {
				if !errdefs.IsNotFound(err) {
					t.Fatalf("kept: %v %v", got, err)
				}
				if _, err := e.b.Inspect(e.ctx, sb.ID); !errdefs.IsNotFound(err) {
					t.Fatalf("instance not destroyed: %v", err)
				}
				if _, err := e.st.GetSandbox(e.ctx, sb.ID); !errdefs.IsNotFound(err) {
					t.Fatalf("record not deleted: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("not re-adopted: %v", err)
			}
			stored, err := e.st.GetSandbox(e.ctx, sb.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != tc.want || stored.State != tc.want || stored.Intent != "" {
				t.Fatalf("state %q, stored %q with intent %q; want %q and none", got.State, stored.State, stored.Intent, tc.want)
			}
			if (stored.State == store.SandboxPaused) == stored.PausedAt.IsZero() {
				t.Fatalf("paused_at %v for a %s sandbox", stored.PausedAt, stored.State)
			}
			inst, err := e.b.Inspect(e.ctx, sb.ID)
			if err != nil || inst.State != tc.wantInst {
				t.Fatalf("instance %+v, %v; want %s", inst, err, tc.wantInst)
			}
			if tc.check != nil {
				tc.check(t, e, sb.ID)
			}
			if tc.check == nil && len(e.envd.calls()) != inits {
				t.Fatal("envd initialised again without a resume")
			}
			if err := m2.Kill(e.ctx, sb.ID); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func freeze(e *env, id string) error { return e.b.Pause(e.ctx, id) }
func crash(e *env, id string) error  { return e.b.Crash(id) }
func checkpoint(e *env, id string) error {
	return e.b.Stop(e.ctx, id, runtime.StopOptions{Checkpoint: true})
}

func stopCold(e *env, id string) error { return e.b.Stop(e.ctx, id, runtime.StopOptions{}) }

// checkpointThenFailStart checkpoints id and makes its next start fail.
func checkpointThenFailStart(e *env, id string) error {
	e.b.FailNext(fake.OpStart, id, errors.New("restore failed"))
	return checkpoint(e, id)
}

func wantCheckpoint(t *testing.T, e *env, id string) {
	t.Helper()
	if inst, err := e.b.Inspect(e.ctx, id); err != nil || !inst.Checkpointed {
		t.Fatalf("the memory image is gone: %+v, %v", inst, err)
	}
}

func wantInitAgain(t *testing.T, e *env, id string) {
	t.Helper()
	calls := e.envd.calls()
	if len(calls) < 2 || calls[len(calls)-1].EnvVars["E2B_SANDBOX_ID"] != id {
		t.Fatalf("envd not initialised again after an interrupted resume: %d calls", len(calls))
	}
}

// restart makes a new manager over e's store and backend and reconciles,
// as a restarted server does.
func (e *env) restart(t *testing.T) *Manager {
	t.Helper()
	m2, err := New(e.m.opts)
	if err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, m2)
	if err := m2.Reconcile(e.ctx); err != nil {
		t.Fatal(err)
	}
	return m2
}

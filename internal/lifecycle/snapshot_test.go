package lifecycle

import (
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/testutil"
)

func backendState(t *testing.T, e *env, id string) *runtime.Instance {
	t.Helper()
	inst, err := e.b.Inspect(e.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

func TestPauseFreezesThenCheckpoints(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(o *Options) { o.CheckpointAfter = 50 * time.Millisecond })
	sb := e.create(t, sandbox.CreateRequest{})
	if err := e.m.Pause(e.ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	if st := backendState(t, e, sb.ID).State; st != runtime.StatePaused {
		t.Fatalf("right after pause the backend has it %s, want frozen", st)
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		if inst := backendState(t, e, sb.ID); inst.State != runtime.StateStopped || !inst.Checkpointed {
			return errors.New("not checkpointed yet")
		}
		return nil
	})
	inits := len(e.envd.calls())
	if _, resumed, err := e.m.Connect(e.ctx, sb.ID, time.Minute, true); err != nil || !resumed {
		t.Fatalf("Connect = %v, %v", resumed, err)
	}
	if st := backendState(t, e, sb.ID).State; st != runtime.StateRunning {
		t.Fatalf("after resume: %s", st)
	}
	if n := len(e.envd.calls()); n != inits {
		t.Errorf("a restore re-initialised envd (%d → %d calls): its memory was kept", inits, n)
	}
	// A resume within the window thaws and cancels the checkpoint.
	if err := e.m.Pause(e.ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.m.Connect(e.ctx, sb.ID, time.Minute, true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if st := backendState(t, e, sb.ID).State; st != runtime.StateRunning {
		t.Fatalf("a cancelled checkpoint still ran: %s", st)
	}
}

func TestPauseWithoutMemoryBootsAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb := e.create(t, sandbox.CreateRequest{Secure: true, EnvVars: map[string]string{"A": "1"}})
	if err := e.m.Pause(e.ctx, sb.ID, false); err != nil {
		t.Fatal(err)
	}
	if inst := backendState(t, e, sb.ID); inst.State != runtime.StateStopped || inst.Checkpointed {
		t.Fatalf("after a pause without memory: %+v", inst)
	}
	inits := len(e.envd.calls())
	if _, _, err := e.m.Connect(e.ctx, sb.ID, time.Minute, true); err != nil {
		t.Fatal(err)
	}
	calls := e.envd.calls()
	if len(calls) != inits+1 || calls[len(calls)-1].AccessToken != sb.EnvdAccessToken || calls[len(calls)-1].EnvVars["A"] != "1" {
		t.Fatalf("a cold boot must hand envd its token and env again: %+v", calls[inits:])
	}
}

func TestSnapshotForkAndCollect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	src := e.create(t, sandbox.CreateRequest{Metadata: map[string]string{"k": "v"}, EnvVars: map[string]string{"A": "1"}})
	snap, err := e.snaps.Snapshot(e.ctx, src.ID, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if snap.SandboxID != src.ID || !slices.Equal(snap.Names, []string{"nightly"}) || !snap.Memory {
		t.Fatalf("snapshot = %+v", snap)
	}
	if _, err := e.snaps.Snapshot(e.ctx, src.ID, "bad name!"); !errdefs.IsInvalidArgument(err) {
		t.Fatalf("bad name: %v", err)
	}
	byName, err := e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: "nightly", Timeout: time.Minute, EnvVars: map[string]string{"B": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	if byName.EnvVars["A"] != "1" || byName.EnvVars["B"] != "2" || byName.TemplateID != "base" {
		t.Fatalf("sandbox from a snapshot: %+v", byName)
	}
	if got := backendState(t, e, byName.ID).Layers; !slices.Equal(got, snap.Layers) {
		t.Fatalf("layers %v, want the snapshot's %v", got, snap.Layers)
	}
	forks, err := e.snaps.Fork(e.ctx, src.ID, 2, time.Minute)
	if err != nil || len(forks) != 2 || forks[0].Err != nil || forks[1].Err != nil {
		t.Fatalf("Fork = %+v, %v", forks, err)
	}
	if forks[0].Sandbox.Metadata["k"] != "v" || forks[0].Sandbox.ID == forks[1].Sandbox.ID {
		t.Fatalf("forks: %+v", forks)
	}
	for _, n := range []int{0, sandbox.MaxForks + 1} {
		if _, err := e.snaps.Fork(e.ctx, src.ID, n, time.Minute); !errdefs.IsInvalidArgument(err) {
			t.Errorf("Fork(count %d) = %v", n, err)
		}
	}
	listed, _ := e.snaps.ListSnapshots(e.ctx, src.ID, "")
	if len(listed) != 1 || listed[0].ID != snap.ID {
		t.Fatalf("fork snapshots must not be listed: %+v", listed)
	}
	// Deleting the snapshot keeps its directory while sandboxes stand on it.
	if err := e.snaps.DeleteSnapshot(e.ctx, snap.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(snap.Dir); err != nil {
		t.Fatalf("a layer in use was removed: %v", err)
	}
	for _, id := range []string{src.ID, byName.ID, forks[0].Sandbox.ID, forks[1].Sandbox.ID} {
		if err := e.m.Kill(e.ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		if entries, _ := os.ReadDir(e.m.opts.SnapshotDir); len(entries) > 0 {
			return errors.New("snapshot dirs left")
		}
		return nil
	})
	if _, err := e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: "nightly", Timeout: time.Minute}); !errdefs.IsNotFound(err) {
		t.Fatalf("create from a deleted snapshot: %v", err)
	}
}

func TestSnapshotOfRuncLikeBackendCopies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.b.WithoutCheckpoint()
	src := e.create(t, sandbox.CreateRequest{})
	before := backendState(t, e, src.ID).Layers
	snap, err := e.snaps.Snapshot(e.ctx, src.ID, "")
	if err != nil || snap.Memory {
		t.Fatalf("Snapshot = %+v, %v; want disk only", snap, err)
	}
	if after := backendState(t, e, src.ID).Layers; !slices.Equal(after, before) {
		t.Fatalf("a live runc sandbox's layers changed: %v → %v", before, after)
	}
	if err := e.m.Pause(e.ctx, src.ID, true); err != nil {
		t.Fatal(err)
	}
	if st := backendState(t, e, src.ID).State; st != runtime.StatePaused {
		t.Fatalf("runc keeps memory by freezing; got %s", st)
	}
}

package lifecycle

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/runtime/fake"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// TestSnapshotAnswersBeforeRestore: a snapshot of a running sandbox whose
// backend checkpoints answers while its source is still being restored;
// requests for the source (traffic, another snapshot, pause, kill) wait
// for the restore and then find it running, and a fork's copies start
// meanwhile.
func TestSnapshotAnswersBeforeRestore(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		next func(e *env, id string) error // a request for the source, right after
	}{
		{"traffic", func(e *env, id string) error { _, err := e.m.Resolve(e.ctx, id); return err }},
		{"snapshot", func(e *env, id string) error { _, err := e.snaps.Snapshot(e.ctx, id, ""); return err }},
		{"pause", func(e *env, id string) error { return e.m.Pause(e.ctx, id, true) }},
		{"kill", func(e *env, id string) error { return e.m.Kill(e.ctx, id) }},
		{"fork", func(e *env, id string) error { _, err := e.snaps.Fork(e.ctx, id, 1, time.Minute); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			src := e.create(t, sandbox.CreateRequest{})
			release := holdStart(e, src.ID)
			snap, err := e.snaps.Snapshot(e.ctx, src.ID, "")
			if err != nil || !snap.Memory {
				t.Fatalf("Snapshot = %+v, %v", snap, err)
			}
			if inst := backendState(t, e, src.ID); inst.State != runtime.StateStopped || !inst.Checkpointed {
				t.Fatalf("the answer came after the restore: %+v", inst)
			}
			// A copy starts from the snapshot while its source restores.
			cp, err := e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: snap.ID, Timeout: time.Minute})
			if err != nil {
				t.Fatalf("creating from the snapshot during the restore: %v", err)
			}
			done := make(chan error, 1)
			go func() { done <- tc.next(e, src.ID) }()
			select {
			case err := <-done:
				t.Fatalf("%s did not wait for the restore: %v", tc.name, err)
			case <-time.After(100 * time.Millisecond):
			}
			release()
			if err := <-done; err != nil {
				t.Fatalf("%s after the restore: %v", tc.name, err)
			}
			if tc.name == "kill" {
				return
			}
			// Get waits for the restore a snapshot or fork just started.
			if _, err := e.m.Get(e.ctx, src.ID); err != nil {
				t.Fatal(err)
			}
			rec, err := e.st.GetSandbox(e.ctx, src.ID)
			if err != nil || rec.Intent != "" {
				t.Fatalf("record after the restore: %+v, %v", rec, err)
			}
			if tc.name != "pause" && (rec.State != store.SandboxRunning || backendState(t, e, src.ID).State != runtime.StateRunning) {
				t.Fatalf("source after the restore: %s, backend %s", rec.State, backendState(t, e, src.ID).State)
			}
			if backendState(t, e, cp.ID).State != runtime.StateRunning {
				t.Fatal("the copy is not running")
			}
		})
	}
}

// holdStart blocks the backend's starts of id until the returned func is
// called, or 5 s passed (a snapshot that waits for its restore then fails
// the test instead of hanging it).
func holdStart(e *env, id string) func() {
	gate := make(chan struct{})
	e.b.SetHook(func(ctx context.Context, op fake.Op, got string) error {
		if op == fake.OpStart && got == id {
			select {
			case <-gate:
			case <-time.After(5 * time.Second):
			}
		}
		return nil
	})
	return func() { close(gate) }
}

// TestSnapshotRestoreFails: a source whose restore after the snapshot
// fails is not lost: it is recorded paused with its memory image, the
// snapshot stands, and a resume brings it back from the image.
func TestSnapshotRestoreFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	src := e.create(t, sandbox.CreateRequest{})
	e.b.FailNext(fake.OpStart, src.ID, errors.New("restore failed"))
	snap, err := e.snaps.Snapshot(e.ctx, src.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		if rec, _ := e.st.GetSandbox(e.ctx, src.ID); rec == nil || rec.State != store.SandboxPaused || rec.Intent != "" {
			return errors.New("not recorded paused yet")
		}
		return nil
	})
	if inst := backendState(t, e, src.ID); inst.State != runtime.StateStopped || !inst.Checkpointed {
		t.Fatalf("the memory image is gone: %+v", inst)
	}
	inits := len(e.envd.calls())
	if _, resumed, err := e.m.Connect(e.ctx, src.ID, time.Minute, true); err != nil || !resumed {
		t.Fatalf("Connect = %v, %v", resumed, err)
	}
	if backendState(t, e, src.ID).State != runtime.StateRunning || len(e.envd.calls()) != inits {
		t.Fatal("the resume did not restore the source from its image")
	}
	if _, err := e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: snap.ID, Timeout: time.Minute}); err != nil {
		t.Fatalf("the snapshot is not usable: %v", err)
	}
}

// TestSnapshotAfterCheckpointFails: a snapshot that fails once its source
// was checkpointed restores the source before it answers.
func TestSnapshotAfterCheckpointFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	src := e.create(t, sandbox.CreateRequest{})
	e.b.FailNext(fake.OpSnapshot, src.ID, errors.New("disk full"))
	if _, err := e.snaps.Snapshot(e.ctx, src.ID, ""); err == nil {
		t.Fatal("Snapshot succeeded")
	}
	rec, err := e.st.GetSandbox(e.ctx, src.ID)
	if err != nil || rec.State != store.SandboxRunning || rec.Intent != "" || backendState(t, e, src.ID).State != runtime.StateRunning {
		t.Fatalf("source after a failed snapshot: %+v, %v, backend %s", rec, err, backendState(t, e, src.ID).State)
	}
}

// TestSnapshotOfPausedSourceKeepsItPaused: a frozen source is checkpointed
// for its snapshot and stays paused, its memory on disk.
func TestSnapshotOfPausedSourceKeepsItPaused(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(o *Options) { o.CheckpointAfter = time.Hour })
	src := e.create(t, sandbox.CreateRequest{})
	if err := e.m.Pause(e.ctx, src.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := e.snaps.Snapshot(e.ctx, src.ID, ""); err != nil {
		t.Fatal(err)
	}
	rec, _ := e.st.GetSandbox(e.ctx, src.ID)
	if inst := backendState(t, e, src.ID); rec.State != store.SandboxPaused || rec.Intent != "" || inst.State != runtime.StateStopped || !inst.Checkpointed {
		t.Fatalf("paused source after its snapshot: %+v, backend %+v", rec, inst)
	}
	if _, _, err := e.m.Connect(e.ctx, src.ID, time.Minute, true); err != nil || backendState(t, e, src.ID).State != runtime.StateRunning {
		t.Fatalf("resume after the snapshot: %v", err)
	}
}

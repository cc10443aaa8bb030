package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime/fake"
	"github.com/warren-sandbox/warren/internal/store"
)

// TestReconcileKeepsHandedOverParked: node b restarts after the reaper
// handed it a parked sandbox but before it took the sandbox over: its
// Reconcile keeps the record, and the sweep then takes it over.
func TestReconcileKeepsHandedOverParked(t *testing.T) {
	t.Parallel()
	e, b, _, shared := twoNodes(t)
	sb := e.create(t, CreateRequest{})
	if err := e.m.Pause(e.ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	waitParked(t, e.st, sb.ID)
	if err := e.st.MoveSandbox(e.ctx, sb.ID, "a", "b"); err != nil {
		t.Fatal(err)
	}
	b.Shutdown()
	b2, err := New(b.opts) // node b restarted
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b2.Shutdown)
	if err := b2.Reconcile(e.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.GetSandbox(e.ctx, sb.ID); err != nil {
		t.Errorf("record of a parked sandbox handed to b, after b's Reconcile: %v (want kept)", err)
	}
	if n, err := b2.TakeOverParked(e.ctx); err != nil || n != 1 {
		t.Errorf("TakeOverParked after the restart = %d, %v; want it taken over", n, err)
	}
	if _, err := os.Stat(filepath.Join(shared, parkedDir, sb.ID)); err != nil {
		t.Errorf("parked dir: %v", err)
	}
}

// hookStore calls onDelete before its first DeleteSandbox.
type hookStore struct {
	store.Store
	once     sync.Once
	onDelete func()
}

func (s *hookStore) DeleteSandbox(ctx context.Context, id string) error {
	s.once.Do(func() {
		if s.onDelete != nil {
			s.onDelete()
		}
	})
	return s.Store.DeleteSandbox(ctx, id)
}

// TestKillRacesTakeOver: a request for a parked sandbox during its kill
// (after it left live, before its record is deleted) does not take it
// over again: nothing outlives the kill.
func TestKillRacesTakeOver(t *testing.T) {
	t.Parallel()
	hs := &hookStore{}
	e := newEnvWith(t, func(o *Options) {
		o.NodeName, o.SharedDir = "a", t.TempDir()
		hs.Store = o.Store
		o.Store = hs
	})
	sb := e.create(t, CreateRequest{})
	if err := e.m.Pause(e.ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	waitParked(t, e.st, sb.ID)
	var getErr error
	hs.onDelete = func() { _, getErr = e.m.Get(e.ctx, sb.ID) } // a concurrent GET
	if err := e.m.Kill(e.ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if !errdefs.IsNotFound(getErr) {
		t.Errorf("Get during the kill: %v, want not found", getErr)
	}
	if _, err := e.m.get(sb.ID); err == nil {
		t.Errorf("sandbox still live after its kill (taken over again by a concurrent Get)")
	}
	if n := e.instances(t); n != 0 {
		t.Errorf("%d instances after the kill", n)
	}
}

// TestKillHandedParked: a sandbox handed to b whose parked state is lost
// cannot be taken over (a clear 409-class error), but can be killed: its
// record goes, with a killed event, and nothing is rebuilt.
func TestKillHandedParked(t *testing.T) {
	t.Parallel()
	e, b, _, shared := twoNodes(t)
	sb := e.create(t, CreateRequest{})
	if err := e.m.Pause(e.ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	waitParked(t, e.st, sb.ID)
	if err := e.st.MoveSandbox(e.ctx, sb.ID, "a", "b"); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(shared, parkedDir, sb.ID)); err != nil { // lost / damaged
		t.Fatal(err)
	}
	if _, _, err := b.Connect(e.ctx, sb.ID, time.Minute, true); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("resume with its parked state lost = %v, want a failed precondition", err)
	}
	if err := b.Kill(e.ctx, sb.ID); err != nil {
		t.Fatalf("Kill on b: %v", err)
	}
	if _, err := e.st.GetSandbox(e.ctx, sb.ID); !errdefs.IsNotFound(err) {
		t.Errorf("record after the kill: %v, want not found", err)
	}
	if err := b.Kill(e.ctx, sb.ID); !errdefs.IsNotFound(err) {
		t.Errorf("second Kill = %v, want not found", err)
	}
	if list, _ := e.b.List(e.ctx); len(list) != 1 { // a's copy, which a's DropLost would destroy
		t.Errorf("a holds %d instances, want its own copy only", len(list))
	}
}

// TestSweepSkipsBusySandboxes: the sweep does not wait for a sandbox
// busy with a slow resume (a cold boot waiting for its start command, a
// big runsc restore).
func TestSweepSkipsBusySandboxes(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(o *Options) { o.NodeName, o.SharedDir = "a", t.TempDir() })
	sb := e.create(t, CreateRequest{})
	if err := e.m.Pause(e.ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	waitParked(t, e.st, sb.ID)
	release := make(chan struct{})
	inResume := make(chan struct{})
	e.b.SetHook(func(ctx context.Context, op fake.Op, id string) error {
		if (op == fake.OpResume || op == fake.OpStart) && id == sb.ID {
			close(inResume)
			<-release
		}
		return nil
	})
	go func() { _, _, _ = e.m.Connect(e.ctx, sb.ID, time.Minute, true) }()
	<-inResume
	done := make(chan struct{})
	go func() { _, _ = e.m.TakeOverParked(e.ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Errorf("TakeOverParked (the heartbeat's settle) blocked behind a resume in progress")
	}
	close(release)
	<-done
}

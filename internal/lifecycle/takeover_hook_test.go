package lifecycle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/park"
	"github.com/warren-sandbox/warren/internal/runtime/fake"
	"github.com/warren-sandbox/warren/internal/store"
)

// TestReconcileKeepsHandedOverParked: node b restarts after the reaper
// handed it a parked sandbox but before it took the sandbox over: its
// Reconcile keeps the record, and the sweep then takes it over.
func TestReconcileKeepsHandedOverParked(t *testing.T) {
	t.Parallel()
	e, b, _, shared, _ := twoNodes(t)
	sb := parkedSandbox(t, e)
	if err := e.st.MoveSandbox(e.ctx, sb.ID, "a", "b"); err != nil {
		t.Fatal(err)
	}
	b.Shutdown(context.Background())
	b2, err := New(b.opts) // node b restarted
	if err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, b2)
	rb2 := parkOn(b2, shared)
	if err := b2.Reconcile(e.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.GetSandbox(e.ctx, sb.ID); err != nil {
		t.Errorf("record of a parked sandbox handed to b, after b's Reconcile: %v (want kept)", err)
	}
	if n, err := rb2.TakeOverParked(e.ctx); err != nil || n != 1 {
		t.Errorf("TakeOverParked after the restart = %d, %v; want it taken over", n, err)
	}
	if _, err := os.Stat(filepath.Join(shared, parkedDir, sb.ID)); err != nil {
		t.Errorf("parked dir: %v", err)
	}
}

// hookStore runs onKillIntent before the first UpdateSandbox that
// records a kill's intent, and onDelete before the first DeleteSandbox.
type hookStore struct {
	store.Store
	intentOnce, deleteOnce sync.Once
	onKillIntent, onDelete func()
}

func (s *hookStore) UpdateSandbox(ctx context.Context, sb *store.Sandbox) error {
	if sb.Intent == store.IntentKilling && s.onKillIntent != nil {
		s.intentOnce.Do(s.onKillIntent)
	}
	return s.Store.UpdateSandbox(ctx, sb)
}

func (s *hookStore) DeleteSandbox(ctx context.Context, id string) error {
	if s.onDelete != nil {
		s.deleteOnce.Do(s.onDelete)
	}
	return s.Store.DeleteSandbox(ctx, id)
}

// TestKillRacesTakeOver: a take-over (a request, the sweep) in the middle
// of a parked sandbox's kill does nothing: while the kill writes its
// intent the sandbox is still live, and once it has left the live set its
// record no longer reads as parked. Nothing outlives the kill.
func TestKillRacesTakeOver(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// hook sets the moment in the kill and what runs there.
		hook func(hs *hookStore, during func())
		// during is the concurrent call; ok judges its result.
		during func(e *env, r *park.Room, id string) error
		ok     func(error) bool
	}{
		{
			name:   "while its intent is written",
			hook:   func(hs *hookStore, during func()) { hs.onKillIntent = during },
			during: func(e *env, r *park.Room, id string) error { return r.TakeOver(e.ctx, id) },
			ok:     func(err error) bool { return err == nil || errdefs.IsNotFound(err) },
		},
		{
			name:   "before its record is deleted",
			hook:   func(hs *hookStore, during func()) { hs.onDelete = during },
			during: func(e *env, _ *park.Room, id string) error { _, err := e.m.Get(e.ctx, id); return err },
			ok:     errdefs.IsNotFound,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hs := &hookStore{}
			e := newEnvWith(t, func(o *Options) {
				o.NodeName = "a"
				hs.Store = o.Store
				o.Store = hs
			})
			r := parkOn(e.m, t.TempDir())
			sb := parkedSandbox(t, e)
			var duringErr error
			tc.hook(hs, func() { duringErr = tc.during(e, r, sb.ID) })
			if err := e.m.Kill(e.ctx, sb.ID); err != nil {
				t.Fatal(err)
			}
			if !tc.ok(duringErr) {
				t.Errorf("the call during the kill: %v", duringErr)
			}
			if _, err := e.m.get(sb.ID); err == nil {
				t.Errorf("sandbox still live after its kill (taken over again)")
			}
			if n := e.instances(t); n != 0 {
				t.Errorf("%d instances after the kill", n)
			}
		})
	}
}

// TestKillHandedParked: a sandbox handed to b whose parked state is lost
// cannot be taken over (a clear 409-class error), but can be killed: its
// record goes, with a killed event, and nothing is rebuilt.
func TestKillHandedParked(t *testing.T) {
	t.Parallel()
	e, b, _, shared, _ := twoNodes(t)
	sb := parkedSandbox(t, e)
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
	e := newEnvWith(t, func(o *Options) { o.NodeName = "a" })
	r := parkOn(e.m, t.TempDir())
	sb := parkedSandbox(t, e)
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
	go func() { _, _ = r.TakeOverParked(e.ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Errorf("TakeOverParked (the heartbeat's settle) blocked behind a resume in progress")
	}
	close(release)
	<-done
}

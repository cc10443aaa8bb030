package oci

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/network"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/runtime/runtimetest"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// restart simulates a warren restart: a new network manager and backend
// over the same bridge, state and runtime dirs.
func restart(t *testing.T, e *env) *Backend {
	t.Helper()
	nm, err := network.New(t.Context(), e.net.Options())
	if err != nil {
		t.Fatalf("network.New after restart: %v", err)
	}
	opts := e.opts
	opts.Network = nm
	b, err := New(t.Context(), opts)
	if err != nil {
		t.Fatalf("New after restart: %v", err)
	}
	return b
}

func TestRestartReadoptsRunningSandbox(t *testing.T) {
	testutil.RequiresRoot(t)
	e := newEnv(t, Runc, testutil.RequiresRunc(t))
	fx := runtimetest.NewFixture(t)
	spec := specFor(fx, runtimetest.NewID())
	spec.Labels = map[string]string{"owner": "test"}
	inst, err := e.b.Create(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	b2 := restart(t, e)
	list, err := b2.List(t.Context())
	if err != nil || len(list) != 1 {
		t.Fatalf("List after restart = %v, %v; want the one sandbox", list, err)
	}
	got := list[0]
	if got.ID != spec.ID || got.IP != inst.IP || got.State != runtime.StateRunning || got.Labels["owner"] != "test" {
		t.Fatalf("re-adopted %+v, created %+v", got, inst)
	}
	c, err := runtimetest.WaitInit(got.IP, 10*time.Second)
	if err != nil {
		t.Fatalf("re-adopted sandbox unreachable: %v", err)
	}
	c.Close()
	// The address stays reserved: a new sandbox gets another one.
	other := specFor(fx, runtimetest.NewID())
	inst2, err := b2.Create(t.Context(), other)
	if err != nil || inst2.IP == inst.IP {
		t.Fatalf("Create after restart = %+v, %v; must not reuse %s", inst2, err, inst.IP)
	}
	for _, id := range []string{spec.ID, other.ID} {
		if err := b2.Destroy(t.Context(), id); err != nil {
			t.Fatalf("Destroy %s: %v", id, err)
		}
		if left := e.leaks.Check(id); len(left) > 0 {
			t.Errorf("left behind for %s: %v", id, left)
		}
	}
}

func TestNewDestroysHalfCreatedSandbox(t *testing.T) {
	testutil.RequiresRoot(t)
	e := newEnv(t, Runc, testutil.RequiresRunc(t))
	fx := runtimetest.NewFixture(t)
	id := runtimetest.NewID()
	if _, err := e.b.Create(t.Context(), specFor(fx, id)); err != nil {
		t.Fatal(err)
	}
	// A crash before instance.json was written looks like this.
	if err := os.Remove(filepath.Join(e.b.dir(id), recordFile)); err != nil {
		t.Fatal(err)
	}
	b2 := restart(t, e)
	if left := e.leaks.Check(id); len(left) > 0 {
		t.Fatalf("half-created sandbox not cleaned up: %v", left)
	}
	if _, err := b2.Inspect(t.Context(), id); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("Inspect = %v, want ErrNotFound", err)
	}
}

func TestStateRootBelongsToOneBackend(t *testing.T) {
	testutil.RequiresRoot(t)
	e := newEnv(t, Runc, testutil.RequiresRunc(t))
	opts := e.opts
	// Any static binary passes runsc's binary check.
	opts.Runtime, opts.Binary = Runsc, runtimetest.NewFixture(t).Testinit
	if _, err := New(context.Background(), opts); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("runsc backend over runc's state root: %v, want ErrFailedPrecondition", err)
	}
}

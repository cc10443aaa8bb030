package oci

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/runtime/runtimetest"
	"github.com/warren-sandbox/warren/internal/testutil"
)

const guardID = "sb0000000000000000007"

func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestRootGuardForget: after a delete, the container's lock file goes
// unless its state file is still there (the delete did not happen).
func TestRootGuardForget(t *testing.T) {
	lock, state := guardID+"_sandbox:"+guardID+".lock", guardID+"_sandbox:"+guardID+".state"
	other := "sb0000000000000000008_sandbox:sb0000000000000000008.lock"
	for _, tc := range []struct {
		name        string
		files, want []string
	}{
		{"lock file alone", []string{lock, other}, []string{other}},
		{"container still there", []string{lock, state}, []string{lock, state}},
		{"nothing left", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &rootGuard{dir: t.TempDir()}
			touch(t, g.dir, tc.files...)
			if err := g.forget(guardID); err != nil {
				t.Fatal(err)
			}
			if got := dirNames(t, g.dir); !slices.Equal(got, tc.want) {
				t.Errorf("root holds %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRootGuardWaitsForReaders replays the race: a `list` that found the
// state file makes the lock file again after the delete removed both. The
// removal waits for that list, so the lock file does not outlive it.
func TestRootGuardWaitsForReaders(t *testing.T) {
	g := &rootGuard{dir: t.TempDir()}
	lock := guardID + "_sandbox:" + guardID + ".lock"
	listing, relist := make(chan struct{}), make(chan struct{})
	listed := make(chan error, 1)
	go func() {
		listed <- g.read(func() error {
			close(listing)
			<-relist // the delete runs now
			touch(t, g.dir, lock)
			return nil
		})
	}()
	<-listing
	forgotten := make(chan error, 1)
	go func() { forgotten <- g.forget(guardID) }()
	select {
	case err := <-forgotten:
		t.Fatalf("forget did not wait for the list (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(relist)
	if err := <-listed; err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-forgotten:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("forget still waiting after the list ended")
	}
	if got := dirNames(t, g.dir); len(got) != 0 {
		t.Errorf("root holds %v after the delete", got)
	}
}

// TestRootGuardSweep: at start, lock files without a container go, and
// nothing else in the root is touched.
func TestRootGuardSweep(t *testing.T) {
	g := &rootGuard{dir: t.TempDir()}
	live := "sb0000000000000000001_sandbox:sb0000000000000000001"
	dead := "sb0000000000000000002_sandbox:sb0000000000000000002.lock"
	foreign := "abc_sandbox:def.lock"
	touch(t, g.dir, live+".lock", live+".state", dead, foreign, "notes.txt")
	if err := g.sweep(); err != nil {
		t.Fatal(err)
	}
	want := []string{foreign, "notes.txt", live + ".lock", live + ".state"}
	if got := dirNames(t, g.dir); !slices.Equal(got, want) {
		t.Errorf("root holds %v, want %v", got, want)
	}
	var none *rootGuard // runc: no guard, nothing to do
	if err := none.sweep(); err != nil {
		t.Fatal(err)
	}
}

// TestRunscListDuringDestroy destroys runsc sandboxes while List runs
// `runsc list` over and over, as the snapshot collector and a restart's
// reconcile do: nothing of a destroyed sandbox may stay in runsc's root.
func TestRunscListDuringDestroy(t *testing.T) {
	testutil.RequiresRoot(t)
	e := newEnv(t, Runsc, requiresStaticRunsc(t))
	fx := runtimetest.NewFixture(t)
	ctx := t.Context()
	var ids []string
	for range 6 {
		id := runtimetest.NewID()
		if _, err := e.b.Create(ctx, specFor(fx, id)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// Several lists at once, so one is likely between its glob of the
	// state files and its lock of one when a delete removes them.
	stop := make(chan struct{})
	listed := make(chan int)
	const listers = 4
	for range listers {
		go func() {
			n := 0
			for {
				select {
				case <-stop:
					listed <- n
					return
				default:
				}
				if _, err := e.b.List(ctx); err == nil {
					n++
				}
			}
		}()
	}
	for _, id := range ids {
		if err := e.b.Destroy(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	n := 0
	for range listers {
		n += <-listed
	}
	t.Logf("%d lists ran during the destroys", n)
	for _, id := range ids {
		if left := e.leaks.Check(id); len(left) > 0 {
			t.Errorf("sandbox %s left: %v", id, left)
		}
	}
}

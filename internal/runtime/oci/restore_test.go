package oci

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/runtime/runtimetest"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// TestBackgroundRestore: on runsc, with pages loading in the background
// (memflags.go), a restored sandbox has its memory and its used image is
// gone at once; a checkpoint taken right after a restore, while pages may
// still be loading, keeps the memory; forks restore from one snapshot
// image at the same time and keep running, with their memory, when the
// image is removed under them.
func TestBackgroundRestore(t *testing.T) {
	testutil.RequiresRoot(t)
	e := newEnv(t, Runsc, requiresStaticRunsc(t))
	if !slices.Contains(e.b.cli.mem.restore, "--background") {
		t.Fatalf("this runsc cannot restore in the background (lacks %v)", e.b.cli.mem.missing)
	}
	fx := runtimetest.NewFixture(t)
	ctx := t.Context()
	id := runtimetest.NewID()
	holdMemory(t, e, fx, id, 256)
	img := filepath.Join(e.b.dir(id), imageDir)
	for round := range 2 {
		if err := e.b.Stop(ctx, id, runtime.StopOptions{Checkpoint: true}); err != nil {
			t.Fatalf("round %d: Stop: %v", round, err)
		}
		// Background loading reads a pages file of its own, uncompressed.
		if fi, err := os.Stat(filepath.Join(img, "pages.img")); err != nil || fi.Size() < 256<<20 {
			t.Fatalf("round %d: pages file %v, %v; want one of at least 256 MiB", round, fi, err)
		}
		inst, err := e.b.Start(ctx, id, runtime.StartOptions{})
		if err != nil {
			t.Fatalf("round %d: Start: %v", round, err)
		}
		if _, err := os.Stat(img); !os.IsNotExist(err) {
			t.Errorf("round %d: used image after Start: %v", round, err)
		}
		if round == 0 {
			continue // checkpointed again at once, while pages may load
		}
		wantAnswer(t, inst, "get", "held")
	}
	snap, err := e.b.Snapshot(ctx, id, filepath.Join(t.TempDir(), "snap"))
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	var forks []*runtime.Instance
	for range 3 {
		spec := memorySpec(fx, runtimetest.NewID(), 256)
		spec.From = snap
		inst, err := e.b.Create(ctx, spec)
		if err != nil {
			t.Fatalf("fork: %v", err)
		}
		forks = append(forks, inst)
	}
	if err := os.RemoveAll(filepath.Join(snap.Dir, snapshotMemory)); err != nil {
		t.Fatal(err)
	}
	for _, inst := range append(forks, mustInspect(t, e, id)) {
		wantAnswer(t, inst, "get", "held")
		wantAnswer(t, inst, "alloc 64", "ok")
	}
}

// holdMemory creates sandbox id whose testinit holds mb MiB of touched
// memory and remembers "held".
func holdMemory(t testing.TB, e *env, fx *runtimetest.Fixture, id string, mb int) *runtime.Instance {
	t.Helper()
	inst, err := e.b.Create(t.Context(), memorySpec(fx, id, mb))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	wantAnswer(t, inst, fmt.Sprintf("alloc %d", mb), "ok")
	wantAnswer(t, inst, "set held", "ok")
	return inst
}

// memorySpec is specFor with room for mb MiB held.
func memorySpec(fx *runtimetest.Fixture, id string, mb int) runtime.Spec {
	spec := specFor(fx, id)
	spec.Resources.MemoryMB = 2*mb + 256
	return spec
}

// wantAnswer sends cmd to the testinit of inst and fails t unless it
// answers want.
func wantAnswer(t testing.TB, inst *runtime.Instance, cmd, want string) {
	t.Helper()
	c, err := runtimetest.WaitInit(inst.IP, 30*time.Second)
	if err != nil {
		t.Fatalf("sandbox %s: %v", inst.ID, err)
	}
	defer c.Close()
	got, err := c.Call(cmd, 2*time.Minute)
	if err != nil || got != want {
		t.Fatalf("sandbox %s: %q answered %q, %v; want %q", inst.ID, cmd, got, err, want)
	}
}

func mustInspect(t testing.TB, e *env, id string) *runtime.Instance {
	t.Helper()
	inst, err := e.b.Inspect(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

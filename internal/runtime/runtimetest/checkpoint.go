package runtimetest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/overlay"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// testStopStart stops a sandbox (with a memory checkpoint where the backend
// can) and starts it again, several times: files written before each stop
// are kept, process memory is kept only with a checkpoint, and a cold boot
// forgets it.
func (s *suite) testStopStart(t *testing.T) {
	b := s.newBackend(t)
	id := NewID()
	inst := s.create(t, b, s.spec(id))
	checkpoint := b.Capabilities().Checkpoint
	for i := range 3 {
		value := string(rune('a' + i))
		if s.cfg.real {
			c := mustWait(t, inst.IP)
			mustCall(t, c, "set "+value)
			if out := mustCall(t, c, "write /tmp/kept "+value); out != "ok" {
				t.Fatalf("write: %s", out)
			}
			c.Close()
		}
		if err := b.Stop(t.Context(), id, runtime.StopOptions{Checkpoint: checkpoint}); err != nil {
			t.Fatalf("cycle %d: Stop: %v", i, err)
		}
		got := s.wantState(t, b, id, runtime.StateStopped)
		if got.Checkpointed != checkpoint {
			t.Errorf("cycle %d: Checkpointed = %v, want %v", i, got.Checkpointed, checkpoint)
		}
		if err := b.Stop(t.Context(), id, runtime.StopOptions{}); !errdefs.IsConflict(err) {
			t.Errorf("Stop(stopped) = %v, want a conflict class", err)
		}
		var err error
		if inst, err = b.Start(t.Context(), id, runtime.StartOptions{}); err != nil {
			t.Fatalf("cycle %d: Start: %v", i, err)
		}
		s.wantState(t, b, id, runtime.StateRunning)
		if s.cfg.real {
			c := mustWait(t, inst.IP)
			if out := mustCall(t, c, "read /tmp/kept"); out != `"`+value+`"` {
				t.Errorf("cycle %d: file after Start = %s, want %q", i, out, value)
			}
			want := ""
			if checkpoint {
				want = value
			}
			if out := mustCall(t, c, "get"); out != want {
				t.Errorf("cycle %d: memory after Start = %q, want %q", i, out, want)
			}
			c.Close()
		}
	}
	if _, err := b.Start(t.Context(), id, runtime.StartOptions{}); !errdefs.IsConflict(err) {
		t.Errorf("Start(running) = %v, want a conflict class", err)
	}
	if !checkpoint {
		if err := b.Stop(t.Context(), id, runtime.StopOptions{Checkpoint: true}); !errors.Is(err, errdefs.ErrNotImplemented) {
			t.Errorf("Stop with checkpoint on %s = %v, want ErrNotImplemented", b.Name(), err)
		}
	}
	s.destroy(t, b, id)
}

// testSnapshot snapshots a running sandbox, starts two sandboxes from the
// snapshot and checks that each has the source's files (and memory, where
// the backend checkpoints) and that the three then diverge.
func (s *suite) testSnapshot(t *testing.T) {
	b := s.newBackend(t)
	src := NewID()
	inst := s.create(t, b, s.spec(src))
	if s.cfg.real {
		c := mustWait(t, inst.IP)
		mustCall(t, c, "set snap")
		mustCall(t, c, "write /tmp/f before")
		c.Close()
	}
	dir := filepath.Join(t.TempDir(), "snap")
	snap, err := b.Snapshot(t.Context(), src, dir)
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if snap.Dir != dir || len(snap.Layers) < 2 || snap.Layers[len(snap.Layers)-1] != s.fx.Rootfs {
		t.Fatalf("Snapshot = %+v; want layers above the template", snap)
	}
	if snap.Memory != b.Capabilities().Checkpoint {
		t.Errorf("Snapshot.Memory = %v with checkpoint capability %v", snap.Memory, b.Capabilities().Checkpoint)
	}
	if _, err := b.Snapshot(t.Context(), src, dir); err == nil {
		t.Error("a second Snapshot into the same dir succeeded")
	}
	got := s.wantState(t, b, src, runtime.StateRunning)
	forks := []string{NewID(), NewID()}
	for _, id := range forks {
		spec := s.spec(id)
		spec.From = snap
		fi := s.create(t, b, spec)
		if !slices.Equal(fi.Layers, snap.Layers) {
			t.Errorf("fork layers = %v, want %v", fi.Layers, snap.Layers)
		}
		if s.cfg.real {
			s.checkFork(t, fi, snap.Memory, id)
		}
	}
	if s.cfg.real {
		c := mustWait(t, got.IP)
		if out := mustCall(t, c, "read /tmp/f"); out != `"before"` {
			t.Errorf("source after snapshot and forks: file %s", out)
		}
		if out := mustCall(t, c, "get"); out != "snap" {
			t.Errorf("source after snapshot: memory %q", out)
		}
		c.Close()
	}
	for _, id := range append(forks, src) {
		s.destroy(t, b, id)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("snapshot dir after its sandboxes were destroyed: %v (it belongs to the caller)", err)
	}
	s.sentinelUnchanged(t)
}

// checkFork checks a sandbox made from the snapshot, then changes it.
func (s *suite) checkFork(t *testing.T, fi *runtime.Instance, memory bool, id string) {
	t.Helper()
	c := mustWait(t, fi.IP)
	defer c.Close()
	if out := mustCall(t, c, "read /tmp/f"); out != `"before"` {
		t.Errorf("fork %s: file %s", id, out)
	}
	want := ""
	if memory {
		want = "snap"
	}
	if out := mustCall(t, c, "get"); out != want {
		t.Errorf("fork %s: memory %q, want %q", id, out, want)
	}
	mustCall(t, c, "write /tmp/f "+id)
}

// testManyLayers starts a sandbox on a stack of overlay.MaxLayers layers
// under a long path (far more than one page of absolute paths could name)
// and checks that the top and bottom layers both show; a snapshot, which
// would add one more, is refused as a precondition.
func (s *suite) testManyLayers(t *testing.T) {
	b := s.newBackend(t)
	root := filepath.Join(t.TempDir(), "a-data-dir-with-a-rather-long-name", "layers")
	var layers []string
	for i := range overlay.MaxLayers - 1 {
		d := filepath.Join(root, fmt.Sprintf("layer-key-%012d", i))
		if err := os.MkdirAll(filepath.Join(d, "layers"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "layers", fmt.Sprint(i)), []byte(fmt.Sprint(i)), 0o644); err != nil {
			t.Fatal(err)
		}
		layers = append([]string{d}, layers...)
	}
	id := NewID()
	spec := s.spec(id)
	spec.From = &runtime.Snapshot{Dir: t.TempDir(), Layers: append(layers, s.fx.Rootfs)}
	inst := s.create(t, b, spec)
	if len(inst.Layers) != overlay.MaxLayers {
		t.Fatalf("%d layers, want %d", len(inst.Layers), overlay.MaxLayers)
	}
	if s.cfg.real {
		c := mustWait(t, inst.IP)
		for _, i := range []int{0, overlay.MaxLayers - 2} {
			if out := mustCall(t, c, fmt.Sprintf("read /layers/%d", i)); out != fmt.Sprintf("%q", fmt.Sprint(i)) {
				t.Errorf("layer %d's file reads %s", i, out)
			}
		}
		c.Close()
	}
	if _, err := b.Snapshot(t.Context(), id, filepath.Join(t.TempDir(), "snap")); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("Snapshot of a full stack = %v, want ErrFailedPrecondition", err)
	}
	s.destroy(t, b, id)
}

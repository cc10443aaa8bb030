package runtimetest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

// testExport exports a stopped sandbox (with its memory where the backend
// checkpoints) and rebuilds it on a second backend, as a node taking over
// what a dead one parked does: created stopped, it starts with the
// source's files and, from a checkpoint, its memory. A running sandbox
// cannot be exported.
func (s *suite) testExport(t *testing.T) {
	b := s.newBackend(t)
	src := NewID()
	inst := s.create(t, b, s.spec(src))
	checkpoint := b.Capabilities().Checkpoint
	if s.cfg.real {
		c := mustWait(t, inst.IP)
		mustCall(t, c, "set moved")
		mustCall(t, c, "write /tmp/f parked")
		c.Close()
	}
	dir := filepath.Join(t.TempDir(), "export")
	if _, err := b.Export(t.Context(), src, dir); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("Export(running) = %v, want ErrFailedPrecondition", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a refused Export left %s: %v", dir, err)
	}
	if err := b.Stop(t.Context(), src, runtime.StopOptions{Checkpoint: checkpoint}); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	exp, err := b.Export(t.Context(), src, dir)
	if err != nil {
		t.Fatalf("Export: %v", err)
	}
	if exp.Memory != checkpoint || !slices.Equal(exp.Layers, []string{s.fx.Rootfs}) {
		t.Errorf("Export = %+v; want memory %v over the template", exp, checkpoint)
	}
	s.wantState(t, b, src, runtime.StateStopped)
	if _, err := b.Export(t.Context(), src, dir); err == nil {
		t.Error("a second Export into the same dir succeeded")
	}
	// The other host: the layer back from its tar, the sandbox created
	// stopped on it.
	// (Its memory directory is where Spec.From looks for one.)
	from := &runtime.Snapshot{Dir: dir, Layers: append([]string{s.unpackExport(t, dir)}, exp.Layers...), Memory: exp.Memory}
	b2 := s.newBackend(t)
	id := NewID()
	spec := s.spec(id)
	spec.From, spec.Stopped = from, true
	created := s.create(t, b2, spec)
	if created.State != runtime.StateStopped || created.Checkpointed != exp.Memory {
		t.Errorf("Create(Stopped) = %s, checkpointed %v; want stopped, %v", created.State, created.Checkpointed, exp.Memory)
	}
	s.wantState(t, b2, id, runtime.StateStopped)
	started, err := b2.Start(t.Context(), id, runtime.StartOptions{})
	if err != nil {
		t.Fatalf("Start of the taken-over sandbox: %v", err)
	}
	if s.cfg.real {
		s.checkTakenOver(t, started, exp.Memory)
	}
	s.destroy(t, b2, id)
	s.destroy(t, b, src)
}

// unpackExport extracts an export's layer tar as the receiving host does.
func (s *suite) unpackExport(t *testing.T, dir string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, runtime.ExportLayer))
	if err != nil {
		t.Fatalf("the export's layer: %v", err)
	}
	defer f.Close()
	out := filepath.Join(t.TempDir(), "layer")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := layer.Extract(t.Context(), f, out, layer.Options{Whiteouts: true}); err != nil {
		t.Fatalf("extracting the export's layer: %v", err)
	}
	return out
}

func (s *suite) checkTakenOver(t *testing.T, inst *runtime.Instance, memory bool) {
	t.Helper()
	c := mustWait(t, inst.IP)
	defer c.Close()
	if out := mustCall(t, c, "read /tmp/f"); out != `"parked"` {
		t.Errorf("taken over: file %s", out)
	}
	want := ""
	if memory {
		want = "moved"
	}
	if out := mustCall(t, c, "get"); out != want {
		t.Errorf("taken over: memory %q, want %q", out, want)
	}
}

package runtimetest

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// testInvalidSpec: specs that can never work fail with ErrInvalidArgument
// before anything is made.
func (s *suite) testInvalidSpec(t *testing.T) {
	b := s.newBackend(t)
	tests := []struct {
		name   string
		mutate func(*runtime.Spec)
	}{
		{"uppercase id", func(sp *runtime.Spec) { sp.ID = "Bad" + sp.ID }},
		{"path in id", func(sp *runtime.Spec) { sp.ID = "../" + sp.ID }},
		{"empty id", func(sp *runtime.Spec) { sp.ID = "" }},
		{"missing rootfs", func(sp *runtime.Spec) { sp.Rootfs = filepath.Join(t.TempDir(), "nope") }},
		{"relative rootfs", func(sp *runtime.Spec) { sp.Rootfs = "rootfs" }},
		{"no init command", func(sp *runtime.Spec) { sp.Init.Args = nil }},
		{"negative memory", func(sp *runtime.Spec) { sp.Resources.MemoryMB = -1 }},
		{"missing bind source", func(sp *runtime.Spec) {
			sp.Binds = []runtime.Bind{{Source: filepath.Join(t.TempDir(), "nope"), Target: "/x"}}
		}},
		{"mount over /proc", mountAt(t, "/proc")},
		{"mount below /proc", mountAt(t, "/proc/sys")},
		{"mount below /dev", mountAt(t, "/dev/shm")},
		{"mount over /sys", mountAt(t, "/sys")},
		{"mount below /.warren", mountAt(t, "/.warren/envd")},
		{"mount over the root", mountAt(t, "/")},
		{"relative mount", mountAt(t, "mnt/data")},
		{"unclean mount", mountAt(t, "/mnt/../proc")},
		{"mount over the init's bind", mountAt(t, InitPath)},
		{"mount twice", func(sp *runtime.Spec) {
			dir := t.TempDir()
			sp.Mounts = []runtime.Mount{{Source: dir, Target: "/mnt/a"}, {Source: dir, Target: "/mnt/a"}}
		}},
		{"missing mount source", func(sp *runtime.Spec) {
			sp.Mounts = []runtime.Mount{{Source: filepath.Join(t.TempDir(), "nope"), Target: "/mnt/a"}}
		}},
		{"mount source is a file", func(sp *runtime.Spec) {
			sp.Mounts = []runtime.Mount{{Source: sp.Binds[0].Source, Target: "/mnt/a"}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := s.spec(NewID())
			tt.mutate(&spec)
			_, err := b.Create(t.Context(), spec)
			if !errors.Is(err, errdefs.ErrInvalidArgument) {
				t.Fatalf("Create = %v, want ErrInvalidArgument", err)
			}
			if validID(spec.ID) {
				s.assertGone(t, b, spec.ID)
			}
		})
	}
}

// mountAt mounts a fresh host directory at target.
func mountAt(t *testing.T, target string) func(*runtime.Spec) {
	return func(sp *runtime.Spec) {
		sp.Mounts = []runtime.Mount{{Source: t.TempDir(), Target: target}}
	}
}

func validID(id string) bool {
	if id == "" {
		return false
	}
	for _, r := range id {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// testUnknownID: every per-id call on an unknown id is ErrNotFound, except
// Destroy, which is idempotent.
func (s *suite) testUnknownID(t *testing.T) {
	b := s.newBackend(t)
	id := NewID()
	if err := b.Destroy(t.Context(), id); err != nil {
		t.Errorf("Destroy(unknown) = %v, want nil", err)
	}
	if _, err := b.Inspect(t.Context(), id); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("Inspect(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := b.Stats(t.Context(), id); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("Stats(unknown) = %v, want ErrNotFound", err)
	}
	if err := b.Pause(t.Context(), id); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("Pause(unknown) = %v, want ErrNotFound", err)
	}
	if err := b.Resume(t.Context(), id); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("Resume(unknown) = %v, want ErrNotFound", err)
	}
	list, err := b.List(t.Context())
	if err != nil || len(list) != 0 {
		t.Errorf("List on a new backend = %v, %v; want empty", list, err)
	}
}

// testStateErrors: pausing a paused sandbox or resuming a running one is a
// state conflict, and leaves the state as it was.
func (s *suite) testStateErrors(t *testing.T) {
	b := s.newBackend(t)
	id := NewID()
	s.create(t, b, s.spec(id))
	if err := b.Resume(t.Context(), id); !errdefs.IsConflict(err) {
		t.Errorf("Resume(running) = %v, want a conflict class", err)
	}
	s.wantState(t, b, id, runtime.StateRunning)
	if err := b.Pause(t.Context(), id); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	if err := b.Pause(t.Context(), id); !errdefs.IsConflict(err) {
		t.Errorf("Pause(paused) = %v, want a conflict class", err)
	}
	s.wantState(t, b, id, runtime.StatePaused)
	// Destroying a paused sandbox must still free everything.
	s.destroy(t, b, id)
}

// testBadInit: an init that cannot start fails Create and leaves nothing.
func (s *suite) testBadInit(t *testing.T) {
	b := s.newBackend(t)
	for name, args := range map[string][]string{
		"missing binary": {"/no/such/init"},
		"not executable": {Sentinel},
	} {
		t.Run(name, func(t *testing.T) {
			spec := s.spec(NewID())
			spec.Init.Args = args
			if _, err := b.Create(t.Context(), spec); err == nil {
				t.Fatal("Create succeeded with a bad init")
			}
			s.assertGone(t, b, spec.ID)
		})
	}
	s.sentinelUnchanged(t)
}

// testInitExits: when the init dies the sandbox is reported stopped, and
// Destroy still frees everything.
func (s *suite) testInitExits(t *testing.T) {
	b := s.newBackend(t)
	id := NewID()
	inst := s.create(t, b, s.spec(id))
	c := mustWait(t, inst.IP)
	_ = c.Send("exit 3")
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := b.Inspect(t.Context(), id)
		if err != nil {
			t.Fatalf("Inspect: %v", err)
		}
		if got.State == runtime.StateStopped {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("state %s 10s after the init exited, want stopped", got.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.destroy(t, b, id)
}

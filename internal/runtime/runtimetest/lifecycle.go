package runtimetest

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// testLifecycle walks one sandbox through create, inspect, list, stats,
// pause, resume and destroy.
func (s *suite) testLifecycle(t *testing.T) {
	b := s.newBackend(t)
	id := NewID()
	spec := s.spec(id)
	start := time.Now()
	inst := s.create(t, b, spec)
	created := time.Since(start)
	s.checkInstance(t, b, inst, spec)

	got, err := b.Inspect(t.Context(), id)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	s.checkInstance(t, b, got, spec)
	if got.IP != inst.IP || !got.CreatedAt.Equal(inst.CreatedAt) {
		t.Errorf("Inspect = %+v, Create returned %+v", got, inst)
	}
	list, err := b.List(t.Context())
	if err != nil || !slices.ContainsFunc(list, func(i *runtime.Instance) bool { return i.ID == id }) {
		t.Fatalf("List = %v, %v; want it to contain %s", list, err, id)
	}
	var conn *Conn
	if s.cfg.real {
		conn = mustWait(t, inst.IP)
		t.Logf("%s: Create took %v, init listening %v after Create was called",
			b.Name(), created.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
		if out := mustCall(t, conn, "echo hello"); out != "hello" {
			t.Fatalf("echo = %q", out)
		}
	}
	s.checkStats(t, b, id)
	s.checkPauseResume(t, b, id, conn)
	s.destroy(t, b, id)
	if err := b.Destroy(t.Context(), id); err != nil {
		t.Fatalf("second Destroy = %v, want nil", err)
	}
	s.sentinelUnchanged(t)
}

func (s *suite) checkInstance(t *testing.T, b runtime.Backend, inst *runtime.Instance, spec runtime.Spec) {
	t.Helper()
	if inst.ID != spec.ID || inst.Backend != b.Name() || inst.State != runtime.StateRunning {
		t.Errorf("instance = %+v; want id %s, backend %s, running", inst, spec.ID, b.Name())
	}
	if !maps.Equal(inst.Labels, spec.Labels) {
		t.Errorf("labels = %v, want %v", inst.Labels, spec.Labels)
	}
	if inst.CreatedAt.IsZero() || time.Since(inst.CreatedAt) > time.Hour {
		t.Errorf("CreatedAt = %v", inst.CreatedAt)
	}
	if s.cfg.real && (!inst.IP.IsValid() || inst.Pid <= 0) {
		t.Errorf("instance IP %v, pid %d; want both set", inst.IP, inst.Pid)
	}
}

func (s *suite) checkStats(t *testing.T, b runtime.Backend, id string) {
	t.Helper()
	st, err := b.Stats(t.Context(), id)
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	if !s.cfg.real {
		return
	}
	if st.MemoryUsed == 0 || st.CPUUsageNanos == 0 {
		t.Errorf("Stats = %+v; want memory and CPU usage", st)
	}
	if st.MemoryLimit != 256<<20 || st.CPUCount != 1 {
		t.Errorf("Stats limits: memory %d, cpus %d; want %d, 1", st.MemoryLimit, st.CPUCount, 256<<20)
	}
	if st.DiskTotal == 0 || st.DiskUsed > st.DiskTotal {
		t.Errorf("Stats disk: used %d of %d", st.DiskUsed, st.DiskTotal)
	}
}

// checkPauseResume pauses and resumes id; with a connection to a real init
// it also checks that a paused init does not answer and a resumed one does.
func (s *suite) checkPauseResume(t *testing.T, b runtime.Backend, id string, conn *Conn) {
	t.Helper()
	if err := b.Pause(t.Context(), id); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	s.wantState(t, b, id, runtime.StatePaused)
	if conn != nil {
		if err := conn.Send("echo while-paused"); err != nil {
			t.Fatal(err)
		}
		if out, err := conn.Recv(300 * time.Millisecond); err == nil {
			t.Fatalf("paused init answered %q", out)
		}
	}
	if err := b.Resume(t.Context(), id); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	s.wantState(t, b, id, runtime.StateRunning)
	if conn != nil {
		if out, err := conn.Recv(10 * time.Second); err != nil || out != "while-paused" {
			t.Fatalf("after Resume the init answered %q, %v", out, err)
		}
	}
}

func (s *suite) wantState(t *testing.T, b runtime.Backend, id string, want runtime.State) *runtime.Instance {
	t.Helper()
	inst, err := b.Inspect(t.Context(), id)
	if err != nil || inst.State != want {
		t.Fatalf("Inspect(%s) = %+v, %v; want state %s", id, inst, err, want)
	}
	return inst
}

// testDuplicateID: a second Create with a live id fails with
// ErrAlreadyExists and leaves the first sandbox alone.
func (s *suite) testDuplicateID(t *testing.T) {
	b := s.newBackend(t)
	spec := s.spec(NewID())
	first := s.create(t, b, spec)
	if _, err := b.Create(t.Context(), spec); !errors.Is(err, errdefs.ErrAlreadyExists) {
		t.Fatalf("second Create = %v, want ErrAlreadyExists", err)
	}
	got, err := b.Inspect(t.Context(), spec.ID)
	if err != nil || got.State != runtime.StateRunning || got.IP != first.IP {
		t.Fatalf("first sandbox after the duplicate: %+v, %v", got, err)
	}
	if s.cfg.real {
		c := mustWait(t, first.IP)
		if out := mustCall(t, c, "echo still"); out != "still" {
			t.Fatalf("echo = %q", out)
		}
	}
	s.destroy(t, b, spec.ID)
}

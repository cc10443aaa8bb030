package runtimetest

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// testLogs: Logs returns what the init wrote to stdout and stderr, in every
// state and across a stop and start, and ErrNotFound once the sandbox is
// destroyed or for an id never created.
func (s *suite) testLogs(t *testing.T) {
	b := s.newBackend(t)
	if _, err := b.Logs(t.Context(), NewID()); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("Logs(unknown) = %v, want ErrNotFound", err)
	}
	id := NewID()
	inst := s.create(t, b, s.spec(id))
	var want []string
	if s.cfg.real {
		c := mustWait(t, inst.IP)
		mustCall(t, c, "log first-line")
		c.Close()
		want = []string{"testinit: listening", "first-line", "stderr first-line"}
	}
	s.wantLogs(t, b, id, want)
	if err := b.Pause(t.Context(), id); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	s.wantLogs(t, b, id, want)
	if err := b.Resume(t.Context(), id); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if err := b.Stop(t.Context(), id, runtime.StopOptions{}); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	s.wantLogs(t, b, id, want)
	inst, err := b.Start(t.Context(), id, runtime.StartOptions{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if s.cfg.real {
		c := mustWait(t, inst.IP)
		mustCall(t, c, "log after-start")
		c.Close()
		want = append(want, "after-start")
	}
	s.wantLogs(t, b, id, want)
	s.destroy(t, b, id)
	if _, err := b.Logs(t.Context(), id); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("Logs(destroyed) = %v, want ErrNotFound", err)
	}
}

// wantLogs waits until id's log holds every string of want (the init's
// output may reach the file a moment after its answer).
func (s *suite) wantLogs(t *testing.T, b runtime.Backend, id string, want []string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := readLogs(t, b, id)
		missing := ""
		for _, w := range want {
			if !strings.Contains(got, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("log of %s lacks %q:\n%s", id, missing, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readLogs(t *testing.T, b runtime.Backend, id string) string {
	t.Helper()
	r, err := b.Logs(t.Context(), id)
	if err != nil {
		t.Fatalf("Logs(%s): %v", id, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading the log of %s: %v", id, err)
	}
	return string(data)
}

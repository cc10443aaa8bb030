package runtimetest

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// testBackground creates a sandbox in the background, where its init runs
// at nice 19, and brings it to the foreground, where it runs at nice 0;
// it works in both. Foreground of an unknown id is ErrNotFound.
func (s *suite) testBackground(t *testing.T) {
	b := s.newBackend(t)
	id := NewID()
	spec := s.spec(id)
	spec.Background = true
	inst := s.create(t, b, spec)
	if s.cfg.real {
		conn := mustWait(t, inst.IP)
		if n, err := nice(inst.Pid); err != nil || n != 19 {
			t.Errorf("init's nice in the background = %d, %v; want 19", n, err)
		}
		mustCall(t, conn, "echo bg")
	}
	if err := b.Foreground(t.Context(), id); err != nil {
		t.Fatalf("Foreground: %v", err)
	}
	if err := b.Foreground(t.Context(), id); err != nil {
		t.Fatalf("second Foreground: %v", err)
	}
	if s.cfg.real {
		if n, err := nice(inst.Pid); err != nil || n != 0 {
			t.Errorf("init's nice after Foreground = %d, %v; want 0", n, err)
		}
		mustCall(t, mustWait(t, inst.IP), "echo fg")
	}
	s.destroy(t, b, id)
	if err := b.Foreground(t.Context(), id); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("Foreground of a destroyed sandbox = %v, want ErrNotFound", err)
	}
}

// nice reads a host process's nice value from /proc (field 19 of stat).
func nice(pid int) (int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 17 {
		return 0, fmt.Errorf("short stat %q", s)
	}
	return strconv.Atoi(fields[16])
}

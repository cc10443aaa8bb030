package reaper_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/envd/reaper"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// startSh starts /bin/sh -c script through r and returns its pid and a
// channel with its wait status.
func startSh(t testing.TB, r *reaper.Reaper, script string) (int, chan syscall.WaitStatus) {
	t.Helper()
	ch := make(chan syscall.WaitStatus, 1)
	attr := &syscall.ProcAttr{Env: []string{"PATH=/usr/bin:/bin"}, Files: []uintptr{0, 1, 2}, Sys: &syscall.SysProcAttr{Setpgid: true}}
	pid, err := r.Start(func() (int, error) {
		return syscall.ForkExec("/bin/sh", []string{"sh", "-c", script}, attr)
	}, func(ws syscall.WaitStatus) { ch <- ws })
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return pid, ch
}

func wait(t testing.TB, ch chan syscall.WaitStatus) syscall.WaitStatus {
	t.Helper()
	select {
	case ws := <-ch:
		return ws
	case <-time.After(10 * time.Second):
		t.Fatal("no exit status")
		return 0
	}
}

func TestReaperStatuses(t *testing.T) {
	t.Parallel()
	r := reaper.New(false)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // not defer: the parallel subtests outlive this function
	go r.Run(ctx)
	tests := []struct {
		name, script, want string
	}{
		{"exit 0", "exit 0", "exit status 0"},
		{"exit 7", "exit 7", "exit status 7"},
		{"killed", "kill -9 $$", "signal: killed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, ch := startSh(t, r, tt.script)
			if got := reaper.Describe(wait(t, ch)); got != tt.want {
				t.Errorf("status = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReaperSignal(t *testing.T) {
	t.Parallel()
	r := reaper.New(false)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go r.Run(ctx)
	pid, ch := startSh(t, r, "sleep 30")
	if err := r.Signal(pid, syscall.SIGKILL, true); err != nil {
		t.Fatal(err)
	}
	if ws := wait(t, ch); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("status = %v", reaper.Describe(ws))
	}
	// Reaped: the pid is no longer ours to signal.
	if err := r.Signal(pid, syscall.SIGKILL, true); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("Signal after reap = %v, want not found", err)
	}
}

// TestReapAll runs a reap-all reaper in a child test process made a
// subreaper: orphans must be reaped (no zombies left) while the statuses of
// registered children still arrive intact.
func TestReapAll(t *testing.T) {
	if os.Getenv("REAPER_HELPER") == "1" {
		reapAllHelper(t)
		return
	}
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestReapAll$", "-test.v")
	cmd.Env = append(os.Environ(), "REAPER_HELPER=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "helper ok") {
		t.Fatalf("helper failed: %v\n%s", err, out)
	}
}

func reapAllHelper(t *testing.T) {
	if err := reaper.BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	r := reaper.New(true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx)
	sawOrphan := false
	for i := range 5 {
		// Each shell leaves an orphan that is re-parented to us and exits later.
		_, ch := startSh(t, r, "sleep 0.2 & exit "+strconv.Itoa(i))
		if ws := wait(t, ch); !ws.Exited() || ws.ExitStatus() != i {
			t.Fatalf("status %d = %q", i, reaper.Describe(ws))
		}
		sawOrphan = sawOrphan || len(children(t, "")) > 0
	}
	if !sawOrphan {
		t.Fatal("no orphan was re-parented to the subreaper; the test proves nothing")
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(children(t, "Z")) > 0 || len(children(t, "")) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("children left: zombies %v, all %v", children(t, "Z"), children(t, ""))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Log("helper ok")
}

// children lists our child processes in the given state ("" for any).
func children(t *testing.T, state string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := strconv.Itoa(os.Getpid())
	var out []string
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		_, rest, _ := strings.Cut(string(b), ") ")
		f := strings.Fields(rest)
		if len(f) > 1 && f[1] == self && (state == "" || f[0] == state) {
			out = append(out, e.Name())
		}
	}
	return out
}

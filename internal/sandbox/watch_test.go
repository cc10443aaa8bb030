package sandbox

import (
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWaitExit: the pidfd wait returns when the process exits, not before.
func TestWaitExit(t *testing.T) {
	cmd := exec.Command("sleep", "0.3")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer cmd.Wait()
	fd, err := unix.PidfdOpen(cmd.Process.Pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		t.Skipf("no pidfd: %v", err)
	}
	start := time.Now()
	done := make(chan struct{})
	go func() { waitExit(fd); close(done) }()
	select {
	case <-done:
		t.Fatalf("returned after %v, while the process runs", time.Since(start))
	case <-time.After(100 * time.Millisecond):
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("did not return after the process exited")
	}
}

package pidfd

import (
	"os/exec"
	"testing"
	"time"
)

// TestWait: the wait returns when the process exits, not before.
func TestWait(t *testing.T) {
	cmd := exec.Command("sleep", "0.3")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer cmd.Wait()
	fd, err := Open(cmd.Process.Pid)
	if err != nil {
		t.Skipf("no pidfd: %v", err)
	}
	start := time.Now()
	done := make(chan struct{})
	go func() { Wait(fd); close(done) }()
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

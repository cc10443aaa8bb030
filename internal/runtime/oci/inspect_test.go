package oci

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestAlive(t *testing.T) {
	t.Parallel()
	if !alive(os.Getpid()) {
		t.Fatal("this process must be alive")
	}
	if alive(0) || alive(-1) {
		t.Fatal("pid <= 0 is never alive")
	}
	// A child that exited and is not yet waited for is a zombie.
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(cmd.Process.Pid) {
		if time.Now().After(deadline) {
			t.Fatal("an exited, unreaped child must not count as alive")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Wait()
	if alive(cmd.Process.Pid) {
		t.Fatal("a reaped child must not be alive")
	}
}

package subreaper

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/testutil"
)

// zombie starts /bin/true as a child (in a new pid namespace when nested)
// and waits until it has exited, unreaped.
func zombie(t *testing.T, nested bool) *exec.Cmd {
	cmd := exec.Command("/bin/true")
	if nested {
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &Reaper{Proc: "/proc", Parent: os.Getpid()}
	testutil.Eventually(t, 5*time.Second, func() error {
		if state, _, _, ok := r.child("/proc/" + strconv.Itoa(cmd.Process.Pid)); !ok || state != "Z" {
			return os.ErrNotExist
		}
		return nil
	})
	return cmd
}

func gone(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return os.IsNotExist(err)
}

// TestReap: a zombie child in a nested pid namespace is reaped at once; one
// in the parent's own namespace (an os/exec child about to be waited for)
// only when two sweeps in a row find it; a running child never.
func TestReap(t *testing.T) {
	testutil.RequiresRoot(t)
	r := &Reaper{Proc: "/proc", Parent: os.Getpid()}
	running := exec.Command("sleep", "30")
	if err := running.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = running.Process.Kill(); _ = running.Wait() }()

	nested := zombie(t, true)
	own := zombie(t, false)
	if n := r.Reap(false); n != 1 || !gone(nested.Process.Pid) {
		t.Fatalf("first reap took %d; the nested zombie is gone: %v", n, gone(nested.Process.Pid))
	}
	if gone(own.Process.Pid) {
		t.Fatal("the own-namespace zombie was reaped without a sweep")
	}
	if n := r.Reap(true); n != 0 || gone(own.Process.Pid) {
		t.Fatalf("the first sweep took %d and must leave a zombie it has not seen before", n)
	}
	if n := r.Reap(true); n != 1 || !gone(own.Process.Pid) {
		t.Fatalf("the second sweep took %d; the lingering zombie is gone: %v", n, gone(own.Process.Pid))
	}
	if gone(running.Process.Pid) {
		t.Fatal("a running child was reaped")
	}
	// os/exec finds its child already reaped: the reason the reaper leaves
	// own-namespace children alone until they linger.
	if err := own.Wait(); err == nil {
		t.Error("Wait after the reaper took the child succeeded")
	}
}

// TestReapWatchesRunningNested: a nested child still running when Reap
// looks is reaped when it exits, with no further Reap (no SIGCHLD needed,
// no scan), and Reap does not look at it again while it runs.
func TestReapWatchesRunningNested(t *testing.T) {
	testutil.RequiresRoot(t)
	r := &Reaper{Proc: "/proc", Parent: os.Getpid()}
	cmd := exec.Command("/bin/sh", "-c", "read x")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if n := r.Reap(false); n != 0 || gone(pid) {
		t.Fatalf("Reap took %d from a running child", n)
	}
	r.mu.Lock()
	watched := r.watched[pid]
	r.mu.Unlock()
	if !watched {
		t.Fatal("the running nested child is not watched")
	}
	stdin.Close() // sh reads EOF and exits
	testutil.Eventually(t, 5*time.Second, func() error {
		if !gone(pid) {
			return os.ErrExist
		}
		return nil
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.watched[pid] {
		t.Error("a reaped child is still watched")
	}
}

// TestChildrenListsOnlyChildren: the children files name this process's
// children, not its grandchildren or strangers.
func TestChildrenListsOnlyChildren(t *testing.T) {
	r := &Reaper{Proc: "/proc", Parent: os.Getpid()}
	cmd := exec.Command("/bin/sh", "-c", "sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pids, err := r.children()
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, p := range pids {
		if p == cmd.Process.Pid {
			found++
		}
		if _, _, _, ok := r.child("/proc/" + strconv.Itoa(p)); !ok && !gone(p) {
			t.Errorf("pid %d listed but not a child", p)
		}
	}
	if found != 1 {
		t.Errorf("the child %d is listed %d times in %v", cmd.Process.Pid, found, pids)
	}
}

// Package reaper collects exit statuses of envd's children in one place.
//
// Inside a container envd may be PID 1 (or a child subreaper), so every
// orphaned grandchild of a user command is re-parented to it and turns into a
// zombie unless envd waits for it. Waiting with wait4(-1) would steal the
// statuses of the processes envd started itself, so the reaper owns all
// waiting: processes are started through Start, which registers their pid,
// and the reaper hands each registered pid's status to its callback. Nothing
// else in envd may wait for children (so no os/exec Cmd.Wait).
package reaper

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
)

// pollInterval bounds how long an exit can go unnoticed if a SIGCHLD is lost
// (they coalesce, and one may arrive before the handler is installed).
// The reaper polls only while a registered child runs: an idle sandbox's
// envd then has no timer at all, and under gVisor every wake-up is a
// trapped syscall, multiplied by the sandboxes on the host.
const pollInterval = 2 * time.Second

// ExitFunc receives a registered child's wait status. It runs on the
// reaper's goroutine and must not block.
type ExitFunc func(status syscall.WaitStatus)

// Reaper waits for children. Create with New, then run Run in a goroutine.
type Reaper struct {
	all bool

	// mu is held for writing while reaping and while a child is forked and
	// registered, and for reading while signalling: a registered pid can then
	// never be a recycled pid, and a fast-exiting child is always registered
	// before its status is collected.
	mu sync.RWMutex
	// waiting maps registered pids to their callbacks; guarded by mu.
	waiting map[int]ExitFunc

	wake chan struct{}

	// ChildOOMScoreAdj, when not zero, is written to each started child's
	// oom_score_adj (grandchildren inherit it), so that when the sandbox
	// runs out of memory the kernel kills user processes before envd.
	ChildOOMScoreAdj int
}

// New returns a Reaper. With reapAll it reaps every child (wait4(-1)),
// which envd must do when it is PID 1 or a subreaper; otherwise it waits only
// for the pids registered with Start, so it can share a process (tests) with
// code that waits for its own children.
func New(reapAll bool) *Reaper {
	return &Reaper{all: reapAll, waiting: map[int]ExitFunc{}, wake: make(chan struct{}, 1)}
}

// Run reaps on every SIGCHLD (and every pollInterval while a registered
// child runs) until ctx ends.
func (r *Reaper) Run(ctx context.Context) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGCHLD)
	defer signal.Stop(sigs)
	poll := time.NewTimer(pollInterval)
	defer poll.Stop()
	for {
		r.reap(ctx)
		if r.running() {
			poll.Reset(pollInterval)
		} else {
			poll.Stop()
		}
		select {
		case <-ctx.Done():
			return
		case <-sigs:
		case <-r.wake:
		case <-poll.C:
		}
	}
}

// running reports whether a registered child has not been reaped yet.
func (r *Reaper) running() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.waiting) > 0
}

// Start runs fork (which must start exactly one child and return its pid)
// and registers onExit for that pid, atomically with respect to reaping.
func (r *Reaper) Start(fork func() (int, error), onExit ExitFunc) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pid, err := fork()
	if err != nil {
		return 0, err
	}
	r.waiting[pid] = onExit
	// The loop arms its poll only after an event; this is one.
	r.Poke()
	if r.ChildOOMScoreAdj != 0 {
		// A child that already exited has no file left; nothing to do.
		_ = os.WriteFile(fmt.Sprintf("/proc/%d/oom_score_adj", pid), []byte(strconv.Itoa(r.ChildOOMScoreAdj)), 0)
	}
	return pid, nil
}

// Signal sends sig to the registered pid, or to its whole process group when
// group is set. A pid that is not registered (never started here, or already
// reaped) is errdefs.ErrNotFound.
func (r *Reaper) Signal(pid int, sig syscall.Signal, group bool) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if _, ok := r.waiting[pid]; !ok {
		return errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("process with pid %d not found", pid))
	}
	target := pid
	if group {
		target = -pid
	}
	err := syscall.Kill(target, sig)
	if group && errors.Is(err, syscall.ESRCH) {
		// The child may not have made its own group yet (it is between fork
		// and setpgid); the pid itself is still ours.
		err = syscall.Kill(pid, sig)
	}
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signalling pid %d: %w", pid, err)
	}
	return nil
}

type exit struct {
	fn     ExitFunc
	status syscall.WaitStatus
}

// reap collects every status available now, then runs the callbacks
// outside the lock so a slow callback cannot stall Start or Signal.
func (r *Reaper) reap(ctx context.Context) {
	r.mu.Lock()
	var done []exit
	if r.all {
		done = r.reapAllLocked(ctx)
	} else {
		done = r.reapRegisteredLocked()
	}
	r.mu.Unlock()
	for _, e := range done {
		e.fn(e.status)
	}
}

func (r *Reaper) reapAllLocked(ctx context.Context) []exit {
	var done []exit
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return done // ECHILD: no children; 0: none exited yet
		}
		if fn, ok := r.waiting[pid]; ok {
			delete(r.waiting, pid)
			done = append(done, exit{fn: fn, status: ws})
			continue
		}
		log.G(ctx).Debug("reaped orphan", "pid", pid, "status", Describe(ws))
	}
}

func (r *Reaper) reapRegisteredLocked() []exit {
	var done []exit
	for pid, fn := range r.waiting {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) || (err == nil && got == 0) {
			continue
		}
		if err != nil {
			// ECHILD: someone else waited for it; report a lost status
			// rather than leaving its owner waiting forever.
			ws = syscall.WaitStatus(0xff << 8)
		}
		delete(r.waiting, pid)
		done = append(done, exit{fn: fn, status: ws})
	}
	return done
}

// Poke asks the reaper to look for exits now, without waiting for SIGCHLD.
func (r *Reaper) Poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Describe renders a wait status the way Go's os.ProcessState does
// ("exit status 1", "signal: killed"), which is the text E2B's envd sends.
func Describe(ws syscall.WaitStatus) string {
	switch {
	case ws.Exited():
		return fmt.Sprintf("exit status %d", ws.ExitStatus())
	case ws.Signaled():
		s := "signal: " + ws.Signal().String()
		if ws.CoreDump() {
			s += " (core dumped)"
		}
		return s
	case ws.Stopped():
		return "stop signal: " + ws.StopSignal().String()
	default:
		return fmt.Sprintf("wait status %d", int(ws))
	}
}

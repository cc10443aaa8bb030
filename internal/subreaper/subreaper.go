// Package subreaper makes warren the reaper of the processes its runtimes
// leave behind. runc and runsc start a sandbox's processes and exit, so
// those processes (runsc's sandbox and gofer, runc's container init, and
// whatever a dying pid namespace leaves) are orphans, handed to the
// nearest subreaper or to PID 1. Until one of them calls wait, a process
// that exited stays a zombie, and `runsc delete` waits for the zombie to
// go. On hosts whose PID 1 reaps late (a container's or a VM's minimal
// init), every runsc stop then took over a second and a half.
//
// Start marks warren a child subreaper, so those orphans become its
// children, and reaps them as they exit. It reaps only children that live
// in a pid namespace below warren's: every process warren starts itself
// (through os/exec, which waits on its own) stays in warren's namespace, so
// their exit statuses are never taken from under exec.Cmd.Wait.
package subreaper

import (
	"bytes"
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/pidfd"
)

// sweepEvery catches an exit whose SIGCHLD was coalesced with another, and
// is how long a zombie child in warren's own namespace must have waited
// before it counts as an orphan nobody else will wait for.
const sweepEvery = 5 * time.Second

// Start makes the calling process a child subreaper and reaps, until ctx
// ends, the orphans among its children (see Reaper).
func Start(ctx context.Context) error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, unix.SIGCHLD)
	r := &Reaper{Proc: "/proc", Parent: os.Getpid()}
	go func() {
		defer signal.Stop(sigs)
		tick := time.NewTicker(sweepEvery)
		defer tick.Stop()
		for {
			sweep := false
			select {
			case <-ctx.Done():
				return
			case <-sigs:
			case <-tick.C:
				sweep = true
			}
			if n := r.Reap(sweep); n > 0 {
				log.G(ctx).Debug("reaped runtime orphans", "count", n)
			}
		}
	}()
	return nil
}

// Reaper reaps Parent's zombie children. Those in a pid namespace below
// Parent's are reaped at once: Parent never starts processes there itself.
// Those in Parent's own namespace may be os/exec children about to be
// waited for, so they are reaped only when a sweep finds them still there
// from the sweep before.
//
// It reads only Parent's children (/proc/PID/task/*/children), never the
// whole of /proc: with hundreds of sandboxes on a host, a scan of every
// process on each SIGCHLD was most of the CPU a create cost warren. A
// nested child that is still running is watched through a pidfd in Go's
// poller and reaped when it exits, so a later scan skips it.
type Reaper struct {
	Proc   string // where proc is mounted
	Parent int

	mu      sync.Mutex
	watched map[int]bool   // running nested children with a pidfd watcher
	seen    map[int]string // own-namespace zombies at the last sweep: pid -> start time
}

// Reap waits for the zombies it may take and returns how many it reaped.
// sweep marks a periodic call, which may take lingering own-namespace ones.
func (r *Reaper) Reap(sweep bool) int {
	pids, err := r.children()
	if err != nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	lingering := map[int]string{}
	for _, pid := range pids {
		if r.watched[pid] {
			continue
		}
		dir := filepath.Join(r.Proc, strconv.Itoa(pid))
		state, start, nested, ok := r.child(dir)
		switch {
		case !ok:
		case state != "Z" && nested:
			r.watch(pid)
		case state != "Z":
		case !nested && (!sweep || r.seen[pid] != start):
			lingering[pid] = start
		case reap(pid):
			n++
		}
	}
	if sweep {
		r.seen = lingering
	}
	return n
}

// children lists Parent's children. Without the children files (a kernel
// built without them) it falls back to every process, which child()
// filters by parent.
func (r *Reaper) children() ([]int, error) {
	files, _ := filepath.Glob(filepath.Join(r.Proc, strconv.Itoa(r.Parent), "task", "*", "children"))
	if len(files) == 0 {
		return r.allPids()
	}
	var pids []int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // the thread exited
		}
		for _, field := range bytes.Fields(data) {
			if pid, err := strconv.Atoi(string(field)); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids, nil
}

func (r *Reaper) allPids() ([]int, error) {
	entries, err := os.ReadDir(r.Proc)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// watch reaps the running nested child pid when it exits. A child's pid
// cannot be reused before it is reaped, so the pidfd is the same process
// child() just read. Callers hold r.mu.
func (r *Reaper) watch(pid int) {
	fd, err := pidfd.Open(pid)
	if err != nil {
		return // gone meanwhile: the next scan reaps it
	}
	if r.watched == nil {
		r.watched = map[int]bool{}
	}
	r.watched[pid] = true
	go func() {
		pidfd.Wait(fd)
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.watched, pid)
		reap(pid)
	}()
}

func reap(pid int) bool {
	var ws unix.WaitStatus
	got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
	return err == nil && got == pid
}

// child reads the process at dir: whether it is a child of r.Parent, its
// state, its start time and whether it lives in a nested pid namespace
// (its NSpid has more than one id).
func (r *Reaper) child(dir string) (state, start string, nested, ok bool) {
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return "", "", false, false
	}
	// Fields after the parenthesised command name: state (3), ppid (4), ...
	// start time (22).
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", "", false, false
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 20 || string(f[1]) != strconv.Itoa(r.Parent) {
		return "", "", false, false
	}
	status, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return "", "", false, false
	}
	for _, line := range bytes.Split(status, []byte("\n")) {
		if rest, found := bytes.CutPrefix(line, []byte("NSpid:")); found {
			return string(f[0]), string(f[19]), len(bytes.Fields(rest)) > 1, true
		}
	}
	return "", "", false, false
}

// Package oomguard is envd's out-of-memory killer for sandboxes whose
// kernel does not kill inside them. Under gVisor the host sees the whole
// sandbox as one process in one memory cgroup: an application that
// allocates past the sandbox's limit gets the entire sandbox killed by the
// host's OOM killer, envd included. gVisor does report the sandbox's own
// memory in /proc/meminfo (MemTotal is the limit), so envd watches
// MemAvailable and, when it runs low, kills the process group with the
// largest resident set (a command and everything it forked, as a cgroup
// with memory.oom.group would): the user sees that command end with
// SIGKILL, and the sandbox goes on. Killing the group, not one process,
// is what stops a fork bomb, whose members are each small.
package oomguard

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Guard polls memory and kills when available memory drops below
// Reserve(total). It polls every Interval while more than half the memory
// is in use, and 2.5 times less often otherwise, so an idle sandbox pays
// little for it.
type Guard struct {
	Interval time.Duration
	// Reserve is the memory to keep available, given MemTotal (bytes). It
	// must cover the sandbox kernel's own use and what a process can
	// allocate in one Interval.
	Reserve func(total uint64) uint64
	// Root is where proc is mounted ("/proc").
	Root string
	// Meter reads the memory the guard protects: its size and what is
	// still available (bytes). Nil reads Root's meminfo, which is the
	// sandbox's own under gVisor; a sandbox on the host's kernel uses
	// CgroupMeter instead.
	Meter func() (total, avail uint64, ok bool)
	Log   *slog.Logger
	// Kill sends the signal (tests replace it).
	Kill func(pid int) error
	// Burst is how long RunOnWake keeps checking after a wake (0: 1 s).
	Burst time.Duration
}

// New returns a guard with the defaults envd uses: 20 ms polls and a
// reserve of one sixth of the memory, at least 96 MiB.
func New(log *slog.Logger) *Guard {
	return &Guard{
		Interval: 20 * time.Millisecond,
		Reserve:  func(total uint64) uint64 { return max(total/6, 96<<20) },
		Root:     "/proc",
		Log:      log,
		// A negative pid is a process group.
		Kill: func(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) },
	}
}

// Run watches until ctx ends, polling.
func (g *Guard) Run(ctx context.Context) { g.poll(ctx, nil) }

// poll checks every Interval while over half the memory is in use, and
// 2.5 times less often otherwise, until ctx ends (false) or wake receives
// (true).
func (g *Guard) poll(ctx context.Context, wake <-chan struct{}) bool {
	wait := g.Interval
	for {
		select {
		case <-ctx.Done():
			return false
		case <-wake:
			return true
		case <-time.After(wait):
		}
		killed, busy := g.check()
		switch {
		case killed:
			wait = 10 * g.Interval // give the kill time to free memory
		case busy:
			wait = g.Interval
		default:
			wait = 5 * g.Interval / 2
		}
	}
}

// RunOnWake watches until ctx ends without a timer of its own once the
// host's alerts are armed: each receive on wake (the host saw the
// sandbox's memory cross one of the thresholds it set on its cgroup)
// starts a burst of checks, every Interval while over half the memory is
// in use, for at most Burst after the last wake. An idle sandbox, or one
// that holds its memory steady, costs nothing; one whose memory grows
// crosses the next threshold and is checked again. The host arms its
// thresholds in the background and wakes the guard once they are; until
// that first wake the guard polls, so a sandbox is never unwatched.
func (g *Guard) RunOnWake(ctx context.Context, wake <-chan struct{}) {
	if !g.poll(ctx, wake) {
		return
	}
	for {
		if !g.burstAfterWake(ctx, wake) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
	}
}

// burstAfterWake checks until memory is calm or the burst is over; false
// when ctx ended.
func (g *Guard) burstAfterWake(ctx context.Context, wake <-chan struct{}) bool {
	until := time.Now().Add(g.burst())
	for {
		killed, busy := g.check()
		if !killed && !busy {
			return true
		}
		if killed {
			// The kill takes a moment to free memory: checking sooner (on
			// the alerts its own freeing raises) would take a second
			// victim, such as the next command the user runs.
			select {
			case <-ctx.Done():
				return false
			case <-time.After(10 * g.Interval):
			}
			drain(wake)
			if time.Now().After(until) {
				return true
			}
			continue
		}
		select {
		case <-ctx.Done():
			return false
		case <-wake:
			until = time.Now().Add(g.burst())
		case <-time.After(g.Interval):
		}
		if time.Now().After(until) {
			return true
		}
	}
}

// drain discards a pending wake.
func drain(wake <-chan struct{}) {
	select {
	case <-wake:
	default:
	}
}

// burst is how long checks go on after a wake.
func (g *Guard) burst() time.Duration {
	if g.Burst > 0 {
		return g.Burst
	}
	return time.Second
}

// Check kills one process if memory is low; it reports whether it did.
func (g *Guard) Check() bool {
	killed, _ := g.check()
	return killed
}

// check is Check that also reports whether over half the memory is in use.
func (g *Guard) check() (killed, busy bool) {
	meter := g.Meter
	if meter == nil {
		meter = func() (uint64, uint64, bool) { return meminfo(filepath.Join(g.Root, "meminfo")) }
	}
	total, avail, ok := meter()
	if !ok {
		return false, false
	}
	busy = avail < total/2
	if avail >= g.Reserve(total) {
		return false, busy
	}
	target, rss, name, n := g.victim()
	if target == 0 {
		return false, busy
	}
	err := g.Kill(target)
	g.Log.Warn("out of memory: killed the largest process group", "target", target, "name", name,
		"processes", n, "rss_bytes", rss, "available_bytes", avail, "total_bytes", total, "err", err)
	return err == nil, busy
}

// proc is one process as the guard sees it.
type proc struct {
	pid, pgid int
	rss       uint64
	name      string
}

// victim picks what to kill: the process group with the largest total
// resident set, as -pgid; a process of envd's own group (or of none) alone.
// PID 1 (envd) and the caller are never chosen.
func (g *Guard) victim() (target int, rss uint64, name string, n int) {
	procs := g.procs()
	own := syscall.Getpgrp()
	groups := map[int]uint64{}
	count := map[int]int{}
	for _, p := range procs {
		if p.pgid > 1 && p.pgid != own {
			groups[p.pgid] += p.rss
			count[p.pgid]++
		}
	}
	for _, p := range procs {
		size, key, members := p.rss, p.pid, 1
		if total, ok := groups[p.pgid]; ok {
			size, key, members = total, -p.pgid, count[p.pgid]
		}
		if size > rss {
			target, rss, name, n = key, size, p.name, members
		}
	}
	return target, rss, name, n
}

// procs lists the processes but PID 1 and the caller.
func (g *Guard) procs() []proc {
	entries, _ := os.ReadDir(g.Root)
	self := os.Getpid()
	var out []proc
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p == 1 || p == self {
			continue
		}
		data, err := os.ReadFile(filepath.Join(g.Root, e.Name(), "status"))
		if err != nil {
			continue
		}
		r, n := statusRSS(data)
		stat, _ := os.ReadFile(filepath.Join(g.Root, e.Name(), "stat"))
		out = append(out, proc{pid: p, pgid: statPgid(stat), rss: r, name: n})
	}
	return out
}

// statPgid reads the process group from /proc/<pid>/stat: the fifth field,
// counted after the command name, which may hold spaces and parentheses.
func statPgid(stat []byte) int {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 3 {
		return 0
	}
	pgid, _ := strconv.Atoi(f[2])
	return pgid
}

// statusRSS reads VmRSS (bytes) and Name from /proc/<pid>/status.
func statusRSS(data []byte) (uint64, string) {
	var rss uint64
	var name string
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		k, v, _ := strings.Cut(s.Text(), ":")
		switch k {
		case "Name":
			name = strings.TrimSpace(v)
		case "VmRSS":
			rss = kB(v)
		}
	}
	return rss, name
}

// meminfo returns MemTotal and MemAvailable in bytes.
func meminfo(path string) (total, avail uint64, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	var haveT, haveA bool
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		k, v, _ := strings.Cut(s.Text(), ":")
		switch k {
		case "MemTotal":
			total, haveT = kB(v), true
		case "MemAvailable":
			avail, haveA = kB(v), true
		}
	}
	return total, avail, haveT && haveA
}

func kB(v string) uint64 {
	f := strings.Fields(v)
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.ParseUint(f[0], 10, 64)
	return n << 10
}

package lifecycle

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// usage is what a team runs, or is about to.
type usage struct{ sandboxes, memoryMB, cpus int }

func (u usage) plus(v usage) usage {
	return usage{u.sandboxes + v.sandboxes, u.memoryMB + v.memoryMB, u.cpus + v.cpus}
}

// admit checks that team may run one more sandbox of cpus and memoryMB
// and reserves it until release. Creates and resumes go through it;
// paused sandboxes count for nothing. A start that boots anything goes
// through startTurn as well.
func (m *Manager) admit(ctx context.Context, team string, cpus, memoryMB int) (release func(), err error) {
	q := sandbox.Quota{}
	if m.opts.Quota != nil {
		if q, err = m.opts.Quota(ctx, store.TeamOf(team)); err != nil {
			return nil, fmt.Errorf("reading the quota of team %s: %w", team, err)
		}
	}
	want := usage{1, memoryMB, cpus}
	elsewhere, err := m.otherNodesUsage(ctx, team, q)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.pending[store.TeamOf(team)].plus(elsewhere)
	for _, e := range m.live {
		if e.running.Load() && store.TeamOf(e.sb.TeamID) == store.TeamOf(team) {
			u = u.plus(usage{1, e.sb.MemoryMB, e.sb.CPUCount})
		}
	}
	if err := checkQuota(q, team, u, want); err != nil {
		return nil, err
	}
	t := store.TeamOf(team)
	m.pending[t] = m.pending[t].plus(want)
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.pending[t] = m.pending[t].plus(usage{-want.sandboxes, -want.memoryMB, -want.cpus})
	}, nil
}

// otherNodesUsage is what team runs on the cluster's other nodes, from the
// shared store: a team's quota is the cluster's, not each node's. Only a
// node with a quota to check reads it. Two nodes admitting at once can
// both take a quota's last place (their pending reservations are not
// shared); placement by the API role is meant to serialise that.
func (m *Manager) otherNodesUsage(ctx context.Context, team string, q sandbox.Quota) (usage, error) {
	if m.opts.NodeName == "" || q == (sandbox.Quota{}) {
		return usage{}, nil
	}
	all, err := m.opts.Store.ListSandboxes(ctx)
	if err != nil {
		return usage{}, fmt.Errorf("counting team %s's sandboxes on other nodes: %w", team, err)
	}
	var u usage
	for _, sb := range all {
		if sb.Node != m.opts.NodeName && sb.State == store.SandboxRunning && store.TeamOf(sb.TeamID) == store.TeamOf(team) {
			u = u.plus(usage{1, sb.MemoryMB, sb.CPUCount})
		}
	}
	return u, nil
}

// checkQuota refuses want on top of u where it passes a limit of q.
func checkQuota(q sandbox.Quota, team string, u, want usage) error {
	over := func(what string, limit, used, asked int, unit string) error {
		return errdefs.New(errdefs.ErrQuotaExceeded, fmt.Sprintf(
			"team %s may run %d%s of %s at once; %d%s are running and this asks for %d%s more: kill or pause a sandbox, or ask the operator for a larger quota",
			team, limit, unit, what, used, unit, asked, unit))
	}
	switch {
	case q.Sandboxes > 0 && u.sandboxes+want.sandboxes > q.Sandboxes:
		return over("sandboxes", q.Sandboxes, u.sandboxes, want.sandboxes, "")
	case q.MemoryMB > 0 && u.memoryMB+want.memoryMB > q.MemoryMB:
		return over("memory", q.MemoryMB, u.memoryMB, want.memoryMB, " MB")
	case q.CPUs > 0 && u.cpus+want.cpus > q.CPUs:
		return over("vCPUs", q.CPUs, u.cpus, want.cpus, "")
	}
	return nil
}

// startTurn makes a start that boots or restores a sandbox (op: create,
// resume) wait for its turn in the start queue (Options.Starts), then
// checks that the host can hold the sandbox. A busy machine makes the
// start wait; only a wait past its bound, or a host without the memory or
// disk, refuses it. Whatever passes holds its turn until done is called.
func (m *Manager) startTurn(ctx context.Context, op, team string, memoryMB, diskMB int) (done func(), err error) {
	// What cannot be done now is refused before waiting for nothing.
	if err := m.hostRoom(ctx, memoryMB, diskMB); err != nil {
		return nil, err
	}
	done = func() {}
	if m.opts.Starts != nil {
		if done, err = m.opts.Starts.Acquire(ctx, op, store.TeamOf(team)); err != nil {
			return nil, err
		}
	}
	// Others may have taken the memory meanwhile.
	if err := m.hostRoom(ctx, memoryMB, diskMB); err != nil {
		done()
		return nil, err
	}
	return done, nil
}

// hostRoom refuses a sandbox the host could not hold: its memory limit
// beyond what the host has available, or its disk beyond the free space
// of the data dir. Refusing now beats an OOM kill or a full disk later.
// Pool refills ask it too, so that a pool never takes the last memory a
// create would be refused for.
func (m *Manager) hostRoom(ctx context.Context, memoryMB, diskMB int) error {
	if m.opts.HostMemoryMB != nil {
		if avail, err := m.opts.HostMemoryMB(); err != nil {
			log.G(ctx).Warn("reading the host's available memory", "err", err)
		} else if memoryMB > avail {
			return errdefs.New(errdefs.ErrResourceExhausted, fmt.Sprintf(
				"the host has %d MB of memory available and this sandbox may use %d MB: try later or ask for less (memoryMB)", avail, memoryMB))
		}
	}
	if m.opts.HostDiskFreeMB != nil && diskMB > 0 {
		if free, err := m.opts.HostDiskFreeMB(); err != nil {
			log.G(ctx).Warn("reading the data dir's free space", "err", err)
		} else if diskMB > free {
			return errdefs.New(errdefs.ErrResourceExhausted, fmt.Sprintf(
				"the host has %d MB of disk free and this sandbox's disk is %d MB: try later", free, diskMB))
		}
	}
	return nil
}

// MemAvailableMB reads MemAvailable from /proc/meminfo, in MB.
func MemAvailableMB() (int, error) { return meminfoMB("MemAvailable") }

// MemTotalMB is the host's memory (MemTotal), in MB: a node's capacity.
func MemTotalMB() (int, error) { return meminfoMB("MemTotal") }

// meminfoMB reads one kB field of /proc/meminfo, in MB.
func meminfoMB(field string) (int, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				return 0, fmt.Errorf("parsing %s: %w", field, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/meminfo", field)
}

// DiskSizeMB is the size of dir's filesystem, in MB: a node's disk capacity.
func DiskSizeMB(dir string) (int, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return int(st.Blocks * uint64(st.Bsize) >> 20), nil
}

// DiskFreeMB is the space unprivileged writers have free on dir's
// filesystem, in MB.
func DiskFreeMB(dir string) (int, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return int(st.Bavail * uint64(st.Bsize) >> 20), nil
}

package oomguard

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CgroupMeter measures the memory cgroup mounted at root (the sandbox's
// own, as a runc container sees /sys/fs/cgroup), v1 or v2. On the host's
// kernel /proc/meminfo is the host's, and the kernel's OOM killer only
// acts once reclaim fails: a cgroup whose resident memory nears its limit
// first evicts its own page cache, program text included, and every
// process in it slows to disk speed for as long as that lasts (a sandbox
// of idle Jupyter kernels was seen stuck that way for minutes). Available
// memory here is what the limit leaves beyond usage, plus the inactive
// file cache that reclaim can drop cheaply, so the guard acts before the
// cgroup starts to thrash.
func CgroupMeter(root string) func() (total, avail uint64, ok bool) {
	return func() (uint64, uint64, bool) {
		if limit, usage, ok := readPair(filepath.Join(root, "memory"), "memory.limit_in_bytes", "memory.usage_in_bytes"); ok {
			return cgroupAvail(limit, usage, statValue(filepath.Join(root, "memory", "memory.stat"), "total_inactive_file"))
		}
		if limit, usage, ok := readPair(root, "memory.max", "memory.current"); ok {
			return cgroupAvail(limit, usage, statValue(filepath.Join(root, "memory.stat"), "inactive_file"))
		}
		return 0, 0, false
	}
}

// cgroupAvail turns a limit, usage and reclaimable cache into the guard's
// total and available; an unlimited cgroup (v1 reports a huge number, v2
// "max", which does not parse) is nothing to guard.
func cgroupAvail(limit, usage, inactive uint64) (total, avail uint64, ok bool) {
	if limit == 0 || limit >= 1<<62 {
		return 0, 0, false
	}
	free := uint64(0)
	if usage < limit {
		free = limit - usage
	}
	return limit, min(free+inactive, limit), true
}

func readPair(dir, a, b string) (x, y uint64, ok bool) {
	x, errA := readUintFile(filepath.Join(dir, a))
	y, errB := readUintFile(filepath.Join(dir, b))
	return x, y, errA == nil && errB == nil
}

func readUintFile(path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
}

// statValue reads one key of a memory.stat file (0 when absent).
func statValue(path, key string) uint64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// NewCgroup returns a guard for a sandbox on the host's kernel, measuring
// the memory cgroup at root. Its reserve is smaller than under gVisor (no
// sandbox kernel lives in the same memory): a tenth of the limit, at
// least 48 MiB, left for the page cache that running programs need.
func NewCgroup(log *slog.Logger, root string) *Guard {
	g := New(log)
	g.Meter = CgroupMeter(root)
	g.Reserve = func(total uint64) uint64 { return max(total/10, 48<<20) }
	return g
}

package oci

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroupStats is what Stats reads from a sandbox's cgroup.
type cgroupStats struct {
	cpuCount int
	cpuNanos uint64
	memUsed  uint64 // excluding page cache
	memCache uint64
	memLimit uint64
}

// read collects the stats of cgroup path: v1 from cpu, cpuacct and memory,
// v2 from the unified files.
func (cg *cgroups) read(path string) (*cgroupStats, error) {
	if cg.v2 {
		return readV2(filepath.Join(cg.unified, path))
	}
	return cg.readV1(path)
}

func (cg *cgroups) readV1(path string) (*cgroupStats, error) {
	var s cgroupStats
	var err error
	cpuacct, mem, cpu := cg.controllerDir("cpuacct", path), cg.controllerDir("memory", path), cg.controllerDir("cpu", path)
	if s.cpuNanos, err = readUint(cpuacct, "cpuacct.usage"); err != nil {
		return nil, err
	}
	usage, err := readUint(mem, "memory.usage_in_bytes")
	if err != nil {
		return nil, err
	}
	kv, err := readKeyValues(filepath.Join(mem, "memory.stat"))
	if err != nil {
		return nil, err
	}
	s.memCache = kv["total_cache"]
	s.memUsed = usage - min(usage, s.memCache)
	if s.memLimit, err = readUint(mem, "memory.limit_in_bytes"); err != nil {
		return nil, err
	}
	quota, errQ := readInt(cpu, "cpu.cfs_quota_us")
	period, errP := readInt(cpu, "cpu.cfs_period_us")
	if errQ == nil && errP == nil {
		s.cpuCount = cpusFromQuota(quota, period)
	}
	return &s, nil
}

func readV2(dir string) (*cgroupStats, error) {
	var s cgroupStats
	cpu, err := readKeyValues(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return nil, err
	}
	s.cpuNanos = cpu["usage_usec"] * 1000
	usage, err := readUint(dir, "memory.current")
	if err != nil {
		return nil, err
	}
	mem, err := readKeyValues(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return nil, err
	}
	s.memCache = mem["file"]
	s.memUsed = usage - min(usage, s.memCache)
	if s.memLimit, err = readUint(dir, "memory.max"); err != nil {
		return nil, err
	}
	if data, err := os.ReadFile(filepath.Join(dir, "cpu.max")); err == nil {
		s.cpuCount = parseCPUMax(string(data))
	}
	return &s, nil
}

// parseCPUMax reads v2 "quota period" ("max 100000" when unlimited).
func parseCPUMax(s string) int {
	q, p, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok || q == "max" {
		return 0
	}
	quota, err1 := strconv.ParseInt(q, 10, 64)
	period, err2 := strconv.ParseInt(p, 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return cpusFromQuota(quota, period)
}

// cpusFromQuota rounds a CFS quota up to whole CPUs; 0 means unlimited.
func cpusFromQuota(quota, period int64) int {
	if quota <= 0 || period <= 0 {
		return 0
	}
	return int(math.Ceil(float64(quota) / float64(period)))
}

// readUint reads a single-number cgroup file; "max" (v2 unlimited) reads as
// the largest value.
func readUint(dir, name string) (uint64, error) {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return 0, fmt.Errorf("reading cgroup file: %w", err)
	}
	s := string(bytes.TrimSpace(data))
	if s == "max" {
		return math.MaxUint64, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parsing %s: %w", filepath.Join(dir, name), err)
	}
	return v, nil
}

func readInt(dir, name string) (int64, error) {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 64)
}

// readKeyValues parses "key value" lines (memory.stat, cpu.stat).
func readKeyValues(path string) (map[string]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading cgroup file: %w", err)
	}
	defer f.Close()
	out := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, sc.Err()
}

package oci

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// Stats implements runtime.Backend.Stats: CPU and memory from the
// sandbox's cgroup, disk from its overlay upper dir.
func (b *Backend) Stats(ctx context.Context, id string) (*runtime.Stats, error) {
	rec, err := b.record(id)
	if err != nil {
		return nil, err
	}
	cg, err := b.cg.read(b.cgroupPath(id))
	if errors.Is(err, os.ErrNotExist) {
		// The runtime removed the cgroup: nothing runs any more.
		return nil, fmt.Errorf("stats of sandbox %s: no cgroup (not running): %w", id, errdefs.ErrFailedPrecondition)
	}
	if err != nil {
		return nil, fmt.Errorf("reading cgroup of sandbox %s: %w", id, err)
	}
	used, total, err := b.diskStats(id, rec)
	if err != nil {
		return nil, err
	}
	limit := cg.memLimit
	if rec.MemoryMB > 0 {
		// What the sandbox sees, not the Sentry's headroom above it.
		limit = min(limit, uint64(rec.MemoryMB)<<20)
	}
	cpus := cg.cpuCount
	if cpus == 0 {
		cpus = rec.CPUCount
	}
	return &runtime.Stats{
		CPUCount:      cpus,
		CPUUsageNanos: cg.cpuNanos,
		MemoryUsed:    cg.memUsed,
		MemoryCache:   cg.memCache,
		MemoryLimit:   limit,
		DiskUsed:      used,
		DiskTotal:     total,
	}, nil
}

// diskStats is the writable layer's use and size. A layer on a disk of
// its own (DiskQuota) is measured by one statfs, cheap enough to sample
// every few seconds; one on the host's filesystem has to be walked.
func (b *Backend) diskStats(id string, rec *record) (used, total uint64, err error) {
	dir := b.dir(id)
	upper, _ := layerDirs(dir)
	if _, serr := os.Stat(filepath.Join(dir, diskImage)); serr == nil {
		var st unix.Statfs_t
		if err := unix.Statfs(filepath.Join(dir, diskMount), &st); err != nil {
			return 0, 0, fmt.Errorf("statfs of sandbox %s's disk: %w", id, err)
		}
		return (st.Blocks - st.Bfree) * uint64(st.Bsize), st.Blocks * uint64(st.Bsize), nil
	}
	if used, err = diskUsage(upper); err != nil {
		return 0, 0, fmt.Errorf("measuring disk of sandbox %s: %w", id, err)
	}
	total = uint64(rec.DiskMB) << 20
	if total == 0 {
		// Not enforced: the layer may grow until its filesystem is full.
		if total, err = fsSize(upper); err != nil {
			return 0, 0, fmt.Errorf("statfs of sandbox %s: %w", id, err)
		}
	}
	return used, total, nil
}

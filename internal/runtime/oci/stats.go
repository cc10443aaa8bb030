package oci

import (
	"context"
	"errors"
	"fmt"
	"os"

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
	upper, _ := layerDirs(b.dir(id))
	used, err := diskUsage(upper)
	if err != nil {
		return nil, fmt.Errorf("measuring disk of sandbox %s: %w", id, err)
	}
	total := uint64(rec.DiskMB) << 20
	if total == 0 {
		// Not enforced: the layer may grow until its filesystem is full.
		if total, err = fsSize(upper); err != nil {
			return nil, fmt.Errorf("statfs of sandbox %s: %w", id, err)
		}
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

package fake

import (
	"context"
	"fmt"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// Pause implements runtime.Backend.
func (b *Backend) Pause(ctx context.Context, id string) error {
	return b.transition(ctx, OpPause, id, runtime.StateRunning, runtime.StatePaused)
}

// Resume implements runtime.Backend.
func (b *Backend) Resume(ctx context.Context, id string) error {
	return b.transition(ctx, OpResume, id, runtime.StatePaused, runtime.StateRunning)
}

func (b *Backend) transition(ctx context.Context, op Op, id string, from, to runtime.State) error {
	return b.update(ctx, op, id, func(st *instanceState) error {
		if st.inst.State != from {
			return fmt.Errorf("%s sandbox %s: it is %s: %w", op, id, st.inst.State, errdefs.ErrFailedPrecondition)
		}
		st.inst.State = to
		return nil
	})
}

// update runs op on sandbox id's state, under the lock: fn changes it.
func (b *Backend) update(ctx context.Context, op Op, id string, fn func(*instanceState) error) error {
	if err := b.begin(ctx, op, id); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.instances[id]
	if !ok {
		return fmt.Errorf("sandbox %s: %w", id, errdefs.ErrNotFound)
	}
	return fn(st)
}

// Stats implements runtime.Backend with plausible constant figures derived
// from the sandbox's limits (defaults 2 CPUs, 512 MB).
func (b *Backend) Stats(ctx context.Context, id string) (*runtime.Stats, error) {
	if err := b.begin(ctx, OpStats, id); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.instances[id]
	if !ok {
		return nil, fmt.Errorf("sandbox %s: %w", id, errdefs.ErrNotFound)
	}
	r := st.resources
	cpus, mem, disk := r.CPUCount, r.MemoryMB, r.DiskMB
	if cpus == 0 {
		cpus = 2
	}
	if mem == 0 {
		mem = 512
	}
	if disk == 0 {
		disk = 1024
	}
	return &runtime.Stats{
		CPUCount:      cpus,
		CPUUsageNanos: 1_000_000,
		MemoryUsed:    8 << 20,
		MemoryCache:   1 << 20,
		MemoryLimit:   uint64(mem) << 20,
		DiskUsed:      64 << 10,
		DiskTotal:     uint64(disk) << 20,
	}, nil
}

package oci

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/warren-sandbox/warren/internal/crashpoint"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// Capabilities implements runtime.Backend.Capabilities. runsc saves and
// restores a sandbox's memory itself. runc would need CRIU, whose Debian
// build (3.17) fails on current kernels (it cannot parse the vDSO), so
// runc keeps memory only by freezing.
func (b *Backend) Capabilities() runtime.Capabilities {
	return runtime.Capabilities{
		Checkpoint: b.name == Runsc, OwnKernel: b.name == Runsc,
		// Thresholds need v1's event_control; v2 has no usage ladder.
		MemoryAlerts: b.cg != nil && !b.cg.v2 && b.cg.v1["memory"] != "",
	}
}

// nprocLimit is the per-user process limit inside a runsc sandbox: there the
// cgroup pids limit counts gVisor's own host threads, not the sandbox's
// processes, while gVisor enforces RLIMIT_NPROC itself. Every gVisor task
// costs sandbox memory, so the limit also scales with it: one process per
// 4 MB. runc needs none (its pids cgroup counts processes, and RLIMIT_NPROC
// would count the UID across the whole host).
func (b *Backend) nprocLimit(r runtime.Resources) uint64 {
	if b.name != Runsc {
		return 0
	}
	return uint64(max(min(r.PidsLimit, r.MemoryMB/4), 64))
}

// Stop implements runtime.Backend.Stop. The overlay stays mounted and the
// netns attached; the container and its cgroup go, so a stopped sandbox
// holds no memory and no processes.
func (b *Backend) Stop(ctx context.Context, id string, opts runtime.StopOptions) error {
	if err := validID(id); err != nil {
		return err
	}
	if opts.Checkpoint && !b.Capabilities().Checkpoint {
		return fmt.Errorf("checkpointing sandbox %s: %s cannot save memory: %w", id, b.name, errdefs.ErrNotImplemented)
	}
	unlock := b.locks.lock(id)
	defer unlock()
	inst, err := b.Inspect(ctx, id)
	if err != nil {
		return err
	}
	if inst.State == runtime.StateStopped {
		return fmt.Errorf("stopping sandbox %s: it is stopped: %w", id, errdefs.ErrFailedPrecondition)
	}
	rec, err := b.record(id)
	if err != nil {
		return err
	}
	dir := b.dir(id)
	if opts.Checkpoint {
		// The checkpoint is the sandbox's own work and ends it even if
		// this process dies meanwhile: marked, so Recover finds it.
		rec.Checkpointing = true
		if err := writeRecord(dir, rec); err != nil {
			return err
		}
		crashpoint.Hit("oci.stop.checkpointing")
		if err := b.checkpoint(ctx, id, inst.State, filepath.Join(dir, imageDir)); err != nil {
			rec.Checkpointing = false
			return errors.Join(err, writeRecord(dir, rec))
		}
		// Recorded at once: a crash before the record would lose a
		// complete image (runsc ended the processes already).
		rec.Stopped, rec.Checkpointed, rec.Checkpointing = true, true, false
		if err := writeRecord(dir, rec); err != nil {
			return err
		}
	}
	if err := b.deleteContainer(ctx, id); err != nil {
		return fmt.Errorf("stopping sandbox %s: %w", id, err)
	}
	rec.Stopped, rec.Checkpointed = true, opts.Checkpoint
	if err := writeRecord(dir, rec); err != nil {
		return err
	}
	log.G(ctx).Debug("sandbox stopped", "sandbox", id, "checkpoint", opts.Checkpoint)
	return nil
}

// checkpoint saves container id's memory into img (replaced if present).
// runsc checkpoints only a running container, so a frozen one is thawed
// first; its processes do not run again before the checkpoint, which stops
// them.
func (b *Backend) checkpoint(ctx context.Context, id string, state runtime.State, img string) error {
	if err := os.RemoveAll(img); err != nil {
		return fmt.Errorf("clearing old memory image: %w", err)
	}
	if err := os.MkdirAll(img, 0o700); err != nil {
		return fmt.Errorf("creating memory image dir: %w", err)
	}
	if state == runtime.StatePaused {
		if err := b.cli.resume(ctx, id); err != nil {
			return fmt.Errorf("thawing sandbox %s to checkpoint it: %w", id, err)
		}
	}
	if err := b.cli.checkpoint(ctx, id, img); err != nil {
		_ = os.RemoveAll(img)
		return fmt.Errorf("checkpointing sandbox %s: %w", id, err)
	}
	return nil
}

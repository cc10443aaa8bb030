package oci

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// Start implements runtime.Backend.Start. A failed restore leaves the
// sandbox stopped with its image, so the caller can report it and retry
// with a cold boot.
func (b *Backend) Start(ctx context.Context, id string, opts runtime.StartOptions) (*runtime.Instance, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	unlock := b.locks.lock(id)
	defer unlock()
	rec, err := b.stoppedRecord(ctx, id)
	if err != nil {
		return nil, err
	}
	dir := b.dir(id)
	if opts.Mounts != nil {
		if err := remount(dir, rec, opts.Mounts); err != nil {
			return nil, fmt.Errorf("starting sandbox %s: %w", id, err)
		}
	}
	if ok, err := mounted(dir); err != nil {
		return nil, err
	} else if !ok { // the host rebooted since
		if err := mountOverlay(dir, rec.Layers); err != nil {
			return nil, err
		}
	}
	img := filepath.Join(dir, imageDir)
	var pid int
	if rec.Checkpointed && !opts.ColdBoot {
		pid, err = b.restore(ctx, id, img)
		if err != nil {
			_ = b.deleteContainer(ctx, id)
			return nil, fmt.Errorf("%w (start it without memory to boot from its disk instead)", err)
		}
	} else {
		if err := b.net.Reconfigure(ctx, id); err != nil {
			return nil, err
		}
		if pid, err = b.start(ctx, id, false); err != nil {
			_ = b.deleteContainer(ctx, id)
			return nil, err
		}
	}
	// The record first: a crash before it leaves an image that is stale
	// (the sandbox ran on) but still recorded, which Recover clears; one
	// after it, only a stale file that the next Start or Destroy removes.
	rec.Stopped, rec.Checkpointed = false, false
	if err := writeRecord(dir, rec); err != nil {
		return nil, err
	}
	// Pages still loading in the background are read through descriptors
	// the Sentry holds (memflags.go), so the files may go now.
	dropImage(ctx, id, img)
	return rec.instance(runtime.StateRunning, pid), nil
}

// stoppedRecord is the record of sandbox id if it is stopped, with
// whatever is left of its old container (an init that died on its own, a
// runtime record, a cgroup) gone, so a new one can take the id.
func (b *Backend) stoppedRecord(ctx context.Context, id string) (*record, error) {
	if !b.forgotten(id) {
		inst, err := b.Inspect(ctx, id)
		if err != nil {
			return nil, err
		}
		if inst.State != runtime.StateStopped {
			return nil, fmt.Errorf("starting sandbox %s: it is %s: %w", id, inst.State, errdefs.ErrFailedPrecondition)
		}
		if err := b.deleteContainer(ctx, id); err != nil {
			return nil, fmt.Errorf("starting sandbox %s: clearing the old container: %w", id, err)
		}
	} else if err := b.cg.remove(b.cgroupPath(id)); err != nil {
		return nil, fmt.Errorf("starting sandbox %s: clearing the old cgroup: %w", id, err)
	}
	return b.record(id)
}

// usedSuffix marks a used memory image on its way out.
const usedSuffix = ".used"

// dropImage removes a restored sandbox's used image without making the
// caller wait: unlinking a pages file of 1 GiB whose pages sit in the
// page cache took 50-150 ms. The image is renamed aside first (one
// rename), so the next checkpoint writes a new one at img while the old
// one goes; Destroy removes a leftover with the state dir.
func dropImage(ctx context.Context, id, img string) {
	used := img + usedSuffix
	if _, err := os.Lstat(used); err == nil || os.Rename(img, used) != nil {
		// The previous one is still going (or the rename failed): no
		// waiting on it, and this one goes the slow way.
		if err := os.RemoveAll(img); err != nil {
			log.G(ctx).Warn("removing used memory image", "sandbox", id, "err", err)
		}
		return
	}
	go func() {
		if err := os.RemoveAll(used); err != nil {
			log.G(ctx).Warn("removing used memory image", "sandbox", id, "err", err)
		}
	}()
}

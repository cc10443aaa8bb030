package oci

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
)

// Recover implements runtime.Backend.Recover. A state dir without an
// instance record is a Create that never finished or a Destroy that did
// not: either way nobody can use it, so it is destroyed (container, cgroup,
// mounts, disk image, network). A record with a layer on the move is a
// Snapshot that stopped half way: finishMove settles it; a stopped one the
// runtime runs was started just before the crash: settleStarted settles
// it; one marked checkpointing was being checkpointed: settleCheckpoint
// settles it. runsc lock files that lost their container (see rootGuard)
// are removed first.
func (b *Backend) Recover(ctx context.Context) error {
	if b.cli != nil {
		if err := b.cli.guard.sweep(); err != nil {
			log.G(ctx).Warn("runsc root", "err", err)
		}
	}
	ids, err := b.stateDirs()
	if err != nil {
		return err
	}
	for _, id := range ids {
		rec, err := b.record(id)
		// A used image whose removal (dropImage) a crash cut short.
		_ = os.RemoveAll(filepath.Join(b.dir(id), imageDir+usedSuffix))
		switch {
		case errors.Is(err, errdefs.ErrNotFound):
			log.G(ctx).Warn("destroying what an interrupted create or destroy left", "sandbox", id, "backend", b.name)
			if err := b.Destroy(ctx, id); err != nil {
				return err
			}
		case err != nil:
			// Records are written atomically; an unreadable one is not
			// ours to guess about. List skips it too.
			log.G(ctx).Error("unreadable instance record; leaving the sandbox alone", "sandbox", id, "err", err)
		case rec.Moving != "":
			if err := b.finishMove(rec); err != nil {
				return fmt.Errorf("recovering the snapshot of %s: %w", id, err)
			}
		case rec.Stopped && b.cli != nil:
			if err := b.settleStarted(ctx, rec); err != nil {
				log.G(ctx).Warn("settling the record of a sandbox started before a crash", "sandbox", id, "err", err)
			}
		case rec.Checkpointing && b.cli != nil:
			if err := b.settleCheckpoint(ctx, rec); err != nil {
				log.G(ctx).Warn("settling a checkpoint under way at a crash", "sandbox", id, "err", err)
			}
		}
	}
	return nil
}

// finishMove settles a writable layer that moveUpper was moving to
// rec.Moving when the process died. The move is one rename (to rec.Moving,
// or of its finished copy), so the layer is either whole at rec.Moving, and
// the sandbox stands on it with a new empty writable layer, or still the
// sandbox's writable layer. The rootfs is left unmounted; Start mounts it.
func (b *Backend) finishMove(rec *record) error {
	dir := b.dir(rec.ID)
	dst := rec.Moving
	if err := os.RemoveAll(dst + copySuffix); err != nil {
		return err
	}
	if err := unmountAll(filepath.Join(dir, rootfsDir)); err != nil {
		return err
	}
	if _, err := os.Stat(dst); err == nil {
		upper, work := layerDirs(dir)
		if upper != filepath.Join(dir, upperDir) {
			if err := mountDisk(dir); err != nil {
				return err
			}
		}
		// A copied layer's original may be partly removed: it is in dst.
		for _, d := range []string{upper, work} {
			if err := os.RemoveAll(d); err != nil {
				return fmt.Errorf("clearing the moved writable layer: %w", err)
			}
		}
		rec.Layers = append([]string{dst}, rec.Layers...)
	}
	rec.Moving = ""
	return writeRecord(dir, rec)
}

// checkpointWait bounds how long Recover waits for a checkpoint that was
// under way when the process died (a var for tests).
var checkpointWait = 30 * time.Second

// settleCheckpoint settles a sandbox Stop was checkpointing when the
// process died. The checkpoint is runsc's
// sandbox's own work, which carries on without us and ends the sandbox
// once the image is whole, so a sandbox that has ended (or that runsc no
// longer knows) left a whole image: recorded as stopped with it, a resume
// restores it instead of booting afresh and losing the processes. One
// still running after checkpointWait kept its processes; its partial image
// goes.
func (b *Backend) settleCheckpoint(ctx context.Context, rec *record) error {
	dir := b.dir(rec.ID)
	deadline := time.Now().Add(checkpointWait)
	for {
		st, err := b.cli.state(ctx, rec.ID)
		gone := errors.Is(err, errdefs.ErrNotFound)
		if err != nil && !gone {
			return err
		}
		if gone || st.Status == "stopped" || !alive(st.Pid) {
			log.G(ctx).Info("a checkpoint finished after a crash; recording the sandbox as stopped with its memory image", "sandbox", rec.ID)
			rec.Stopped, rec.Checkpointed, rec.Checkpointing = true, true, false
			return writeRecord(dir, rec)
		}
		// Still frozen: the checkpoint, which thaws first, never began.
		if st.Status == "paused" || time.Now().After(deadline) {
			log.G(ctx).Warn("a checkpoint under way at a crash did not end the sandbox; it keeps its processes and the partial image goes", "sandbox", rec.ID, "status", st.Status)
			rec.Checkpointing = false
			if err := writeRecord(dir, rec); err != nil {
				return err
			}
			return os.RemoveAll(filepath.Join(dir, imageDir))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// settleStarted clears the stopped mark of a sandbox whose start or
// restore (Start, or a snapshot's restore) succeeded just before the
// process died, when the runtime runs it. Its memory image is stale from
// the moment it ran on, so it goes: were the sandbox to die later, it must
// show as failed, not as an image to restore over a disk that moved on.
func (b *Backend) settleStarted(ctx context.Context, rec *record) error {
	st, err := b.cli.state(ctx, rec.ID)
	if errors.Is(err, errdefs.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if (st.Status != "running" && st.Status != "paused") || !alive(st.Pid) {
		return nil
	}
	log.G(ctx).Info("sandbox was started before a crash; recording it as running", "sandbox", rec.ID, "backend", b.name)
	dir := b.dir(rec.ID)
	rec.Stopped, rec.Checkpointed = false, false
	if err := writeRecord(dir, rec); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(dir, imageDir))
}

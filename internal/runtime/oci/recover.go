package oci

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
)

// Recover implements runtime.Backend.Recover. A state dir without an
// instance record is a Create that never finished or a Destroy that did
// not: either way nobody can use it, so it is destroyed (container, cgroup,
// mounts, disk image, network). A record with a layer on the move is a
// Snapshot that stopped half way: finishMove settles it; a stopped one the
// runtime runs was started just before the crash: settleStarted settles
// it. runsc lock files that lost their container (see rootGuard) are
// removed first.
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

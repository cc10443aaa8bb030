package oci

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/crashpoint"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/overlay"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// Entries of a snapshot dir.
const (
	snapshotLayer  = "layer"  // the source's writable layer, read-only from now on
	snapshotMemory = "memory" // the memory image (runsc)
)

// Snapshot implements runtime.Backend.Snapshot.
//
// When the sandbox's processes are not running in the host's memory (it is
// stopped) or can be checkpointed (runsc), its writable layer is not
// copied: it is moved into the snapshot as a read-only layer and the
// sandbox carries on with a new, empty writable layer on top of it, so a
// snapshot costs no disk. A running or frozen runc sandbox cannot change
// its mounts under its processes, so its writable layer is copied (with
// reflinks where the filesystem has them) while it is frozen; the copy
// holds only what the sandbox changed, not the template.
func (b *Backend) Snapshot(ctx context.Context, id, dst string) (_ *runtime.Snapshot, retErr error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	unlock := b.locks.lock(id)
	defer unlock()
	inst, err := b.Inspect(ctx, id)
	if err != nil {
		return nil, err
	}
	rec, err := b.record(id)
	if err != nil {
		return nil, err
	}
	if err := overlay.Check(len(rec.Layers) + 1); err != nil {
		// Each snapshot adds a layer to the sandbox's stack and to its copies'.
		return nil, errdefs.New(errdefs.ErrFailedPrecondition, fmt.Sprintf("sandbox %s cannot take another snapshot: its disk is a stack of %d layers, the most one overlay mount holds", id, len(rec.Layers)))
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		return nil, fmt.Errorf("creating snapshot dir: %w", err)
	}
	moved := false
	defer func() {
		if retErr != nil && !moved {
			_ = os.RemoveAll(dst)
		}
	}()
	layer, memory := filepath.Join(dst, snapshotLayer), filepath.Join(dst, snapshotMemory)
	snap := &runtime.Snapshot{Dir: dst, Layers: append([]string{layer}, rec.Layers...)}
	switch {
	case inst.State == runtime.StateStopped:
		if rec.Checkpointed {
			if err := linkDir(filepath.Join(b.dir(id), imageDir), memory); err != nil {
				return nil, fmt.Errorf("saving memory image: %w", err)
			}
			snap.Memory = true
		}
		moved = true
		return snap, b.moveUpper(rec, layer)
	case b.Capabilities().Checkpoint:
		snap.Memory = true
		moved, err = b.snapshotLive(ctx, rec, inst.State, layer, memory)
		return snap, err
	default:
		return snap, b.copyFrozen(ctx, id, inst.State, layer)
	}
}

// snapshotLive checkpoints a running or frozen runsc sandbox into memory,
// moves its writable layer to layer and restores it on the new stack, in
// the state it was in. moved reports whether the layer moved (the sandbox
// then depends on it). From the checkpoint on, the record says the
// sandbox is stopped with that image until the restore succeeded, so a
// crash at any step leaves a sandbox that Start brings back.
func (b *Backend) snapshotLive(ctx context.Context, rec *record, state runtime.State, layer, memory string) (moved bool, err error) {
	id := rec.ID
	if err := b.checkpoint(ctx, id, state, memory); err != nil {
		return false, err
	}
	if err := b.strand(rec, memory, nil); err != nil {
		return false, err
	}
	crashpoint.Hit("oci.snapshot.checkpointed")
	if err := b.deleteContainer(ctx, id); err != nil {
		return false, fmt.Errorf("snapshot of %s: %w", id, err)
	}
	if err := b.moveUpper(rec, layer); err != nil {
		return false, err
	}
	if _, err := b.restore(ctx, id, memory); err != nil {
		_ = b.deleteContainer(ctx, id)
		return true, err
	}
	dir := b.dir(id)
	rec.Stopped, rec.Checkpointed = false, false
	if err := writeRecord(dir, rec); err != nil {
		return true, err
	}
	_ = os.RemoveAll(filepath.Join(dir, imageDir))
	if state == runtime.StatePaused {
		if err := b.freeze(ctx, id); err != nil {
			return true, fmt.Errorf("pausing sandbox %s again after its snapshot: %w", id, err)
		}
	}
	return true, nil
}

// strand records a sandbox whose processes were checkpointed for a
// snapshot as stopped, with that image to restore when there is one, and
// returns err (and any failure to record).
func (b *Backend) strand(rec *record, memory string, err error) error {
	dir := b.dir(rec.ID)
	rec.Stopped = true
	_ = os.RemoveAll(filepath.Join(dir, imageDir))
	rec.Checkpointed = linkDir(memory, filepath.Join(dir, imageDir)) == nil
	if werr := writeRecord(dir, rec); werr != nil {
		err = errors.Join(err, werr)
	}
	return err
}

// moveUpper turns the sandbox's writable layer into the read-only layer
// at dst and remounts its rootfs with a new, empty writable layer above.
// No process of the sandbox may run meanwhile. The record names dst before
// anything moves, and the move itself is one rename, so Recover can tell
// after a crash whether it happened.
func (b *Backend) moveUpper(rec *record, dst string) (retErr error) {
	dir := b.dir(rec.ID)
	rec.Moving = dst
	if err := writeRecord(dir, rec); err != nil {
		rec.Moving = ""
		return err
	}
	// Only the rootfs: the sandbox's disk (if any) holds the upper.
	if err := unmountAll(filepath.Join(dir, rootfsDir)); err != nil {
		return b.unmove(rec, err)
	}
	upper, work := layerDirs(dir)
	if err := os.Rename(upper, dst); err != nil {
		if !errors.Is(err, unix.EXDEV) {
			return b.unmove(rec, fmt.Errorf("moving writable layer: %w", err))
		}
		// Another filesystem: copy aside, rename the whole copy into
		// place, then drop the original.
		if err := copyTree(upper, dst+copySuffix); err != nil {
			return b.unmove(rec, err)
		}
		if err := os.Rename(dst+copySuffix, dst); err != nil {
			_ = os.RemoveAll(dst + copySuffix)
			return b.unmove(rec, fmt.Errorf("moving copied writable layer: %w", err))
		}
		if err := os.RemoveAll(upper); err != nil {
			return fmt.Errorf("removing copied writable layer: %w", err)
		}
	}
	crashpoint.Hit("oci.snapshot.moved")
	// overlayfs wants an empty work dir for a new upper.
	if err := os.RemoveAll(work); err != nil {
		return fmt.Errorf("clearing overlay work dir: %w", err)
	}
	rec.Layers = append([]string{dst}, rec.Layers...)
	rec.Moving = ""
	if err := writeRecord(dir, rec); err != nil {
		return err
	}
	return mountOverlay(dir, rec.Layers)
}

// copySuffix marks a copy of a writable layer that is not whole yet.
const copySuffix = ".part"

// unmove records that the layer did not move after all, mounts the
// rootfs again as it was, and returns err.
func (b *Backend) unmove(rec *record, err error) error {
	rec.Moving = ""
	dir := b.dir(rec.ID)
	return errors.Join(err, writeRecord(dir, rec), mountOverlay(dir, rec.Layers))
}

// copyFrozen copies a runc sandbox's writable layer to dst with its
// processes frozen, so the copy is consistent.
func (b *Backend) copyFrozen(ctx context.Context, id string, state runtime.State, dst string) error {
	if state == runtime.StateRunning {
		if err := b.freeze(ctx, id); err != nil {
			return fmt.Errorf("freezing sandbox %s for its snapshot: %w", id, err)
		}
		defer func() { _ = b.cli.resume(context.WithoutCancel(ctx), id) }()
	}
	upper, _ := layerDirs(b.dir(id))
	return copyTree(upper, dst)
}

// copyTree copies src to dst (which must not exist) with owners, modes,
// xattrs (overlayfs keeps whiteout and opaque markers in them) and device
// nodes, sharing blocks through reflinks where the filesystem can.
func copyTree(src, dst string) error {
	out, err := exec.Command("cp", "-a", "--reflink=auto", "--", src, dst).CombinedOutput()
	if err != nil {
		_ = os.RemoveAll(dst)
		if strings.Contains(string(out), "No space left") {
			return fmt.Errorf("copying writable layer: %s: %w", strings.TrimSpace(string(out)), errdefs.ErrNoSpace)
		}
		return fmt.Errorf("copying writable layer: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// linkDir makes dst a directory of hard links to the files of src (a memory
// image is a flat directory): no copy, and either side may be removed.
func linkDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.Link(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

package oci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/warren-sandbox/warren/internal/durable"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

// Export implements runtime.Backend.Export. The writable layer goes as a
// tar rather than a copy of the directory because dir is usually on a
// network filesystem, which cannot hold overlay whiteouts (device nodes)
// or trusted.* xattrs; layer.Archive carries both as OCI entries.
func (b *Backend) Export(ctx context.Context, id, dst string) (_ *runtime.Export, retErr error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	unlock := b.locks.lock(id)
	defer unlock()
	inst, err := b.Inspect(ctx, id)
	if err != nil {
		return nil, err
	}
	if inst.State == runtime.StateRunning {
		return nil, fmt.Errorf("exporting sandbox %s: it is running: %w", id, errdefs.ErrFailedPrecondition)
	}
	rec, err := b.record(id)
	if err != nil {
		return nil, err
	}
	dir := b.dir(id)
	if ok, err := mounted(dir); err != nil {
		return nil, err
	} else if !ok { // stopped, and the host rebooted since
		if err := mountOverlay(dir, rec.Layers); err != nil {
			return nil, err
		}
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		return nil, fmt.Errorf("creating export dir: %w", err)
	}
	defer func() {
		if retErr != nil {
			_ = os.RemoveAll(dst)
		}
	}()
	upper, _ := layerDirs(dir)
	if err := durable.WriteFile(filepath.Join(dst, runtime.ExportLayer), func(w io.Writer) error {
		return layer.Archive(ctx, w, upper)
	}); err != nil {
		return nil, fmt.Errorf("exporting the writable layer of %s: %w", id, err)
	}
	out := &runtime.Export{Layers: slices.Clone(rec.Layers)}
	if inst.State == runtime.StateStopped && rec.Checkpointed {
		if err := durable.CopyDir(filepath.Join(dir, imageDir), filepath.Join(dst, runtime.ExportMemory)); err != nil {
			return nil, fmt.Errorf("exporting the memory image of %s: %w", id, err)
		}
		out.Memory = true
	}
	return out, nil
}

// linkOrCopyDir is linkDir, or a copy where src is on another
// filesystem.
func linkOrCopyDir(src, dst string) error {
	err := linkDir(src, dst)
	if err == nil {
		return nil
	}
	_ = os.RemoveAll(dst)
	if cerr := durable.CopyDir(src, dst); cerr != nil {
		_ = os.RemoveAll(dst)
		return errors.Join(err, cerr)
	}
	return nil
}

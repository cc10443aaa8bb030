package oci

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/overlay"
)

// mountOverlay mounts the sandbox's rootfs: the read-only layers below (top
// first: snapshot layers, then the template), the sandbox's own upper and
// work dirs above, merged at dir/rootfs. Layers are never written:
// overlayfs copies files up before changing them. Dirs that exist already
// (a stopped sandbox mounted again) are reused.
func mountOverlay(dir string, layers []string) error {
	if len(layers) == 0 {
		return errors.New("mounting overlay rootfs: no layers")
	}
	upper, work := layerDirs(dir)
	if upper != filepath.Join(dir, upperDir) {
		if err := mountDisk(dir); err != nil {
			return err
		}
	}
	for _, d := range []string{upper, work, filepath.Join(dir, rootfsDir)} {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}
	// The upper dir's root takes the top layer root's mode, so the merged
	// / looks like the template's.
	if fi, err := os.Stat(layers[0]); err == nil {
		_ = os.Chmod(upper, fi.Mode().Perm())
	}
	// Without xino/index the template can be lower of many overlays at once
	// and be shared by several mounts without inode-number conflicts.
	if err := overlay.Mount(filepath.Join(dir, rootfsDir), layers, upper, work, []string{"index=off", "xino=off"}, unix.MS_NODEV); err != nil {
		return fmt.Errorf("mounting overlay rootfs: %w", err)
	}
	return nil
}

// mounted reports whether dir/rootfs is a mount point now.
func mounted(dir string) (bool, error) { return mountedAt(filepath.Join(dir, rootfsDir)) }

// unmountAll unmounts every mount at or below dir, deepest first, and
// reports an error if any is left. Nothing under dir is mounted in the usual
// case (the runtime's mounts live in the sandbox's mount namespace); this
// also catches leftovers of a crashed runtime.
func unmountAll(dir string) error {
	mounts, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	var errs []error
	for i := len(mounts) - 1; i >= 0; i-- {
		err := unix.Unmount(mounts[i], 0)
		if errors.Is(err, unix.EBUSY) {
			// A process we could not kill still holds it: detach it now so
			// the state dir can go; the kernel frees it when released.
			err = unix.Unmount(mounts[i], unix.MNT_DETACH)
		}
		if err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", mounts[i], err))
		}
	}
	return errors.Join(errs...)
}

// mountsUnder lists the mount points at or below dir, in mount order
// (parents before children).
func mountsUnder(dir string) ([]string, error) {
	mounts, err := mountinfo.GetMounts(mountinfo.PrefixFilter(filepath.Clean(dir)))
	if err != nil {
		return nil, fmt.Errorf("reading mountinfo: %w", err)
	}
	out := make([]string, len(mounts))
	for i, m := range mounts {
		out[i] = m.Mountpoint
	}
	return out, nil
}

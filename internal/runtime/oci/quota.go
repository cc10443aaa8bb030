package oci

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/loopfs"
)

// A sandbox's writable layer lives on a filesystem of its own when its
// disk is limited: a sparse ext4 image of DiskMB, loop-mounted at
// dir/disk, holding the overlay's upper and work dirs. Filling it gives
// ENOSPC inside the sandbox (and 507 on an upload), never a full host
// disk. This kernel has no project quotas (CONFIG_QFMT_V2, XFS_QUOTA),
// and an image costs about 15 ms at create.
const (
	diskImage = "disk.img"
	diskMount = "disk"
)

// layerDirs are the overlay's upper and work dirs of the sandbox at dir:
// on its disk when it has one.
func layerDirs(dir string) (upper, work string) {
	if _, err := os.Stat(filepath.Join(dir, diskImage)); err == nil {
		return filepath.Join(dir, diskMount, upperDir), filepath.Join(dir, diskMount, workDir)
	}
	return filepath.Join(dir, upperDir), filepath.Join(dir, workDir)
}

// makeDisk creates (or takes from the pool) and mounts the sandbox's
// disk of sizeMB.
func (b *Backend) makeDisk(dir string, sizeMB int) error {
	img := filepath.Join(dir, diskImage)
	if b.disks.take(sizeMB, img) {
		return mountDisk(dir)
	}
	if err := formatDisk(img, sizeMB); err != nil {
		return err
	}
	return mountDisk(dir)
}

// formatDisk writes a fresh sparse ext4 image of sizeMB at img.
func formatDisk(img string, sizeMB int) error {
	return loopfs.MakeImage(img, sizeMB, loopfs.Scratch)
}

// mountDisk mounts the sandbox's disk at dir/disk unless it is mounted
// (after a host reboot it is not).
func mountDisk(dir string) error {
	mnt := filepath.Join(dir, diskMount)
	if err := os.Mkdir(mnt, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("creating disk mount point: %w", err)
	}
	if ok, err := mountedAt(mnt); err != nil || ok {
		return err
	}
	return loopfs.Mount(filepath.Join(dir, diskImage), mnt, unix.MS_NODEV|unix.MS_NOATIME)
}

// mountedAt reports whether p is a mount point: statx says so in one
// call, where the mount table has three lines per sandbox on the host.
func mountedAt(p string) (bool, error) {
	var stx unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BASIC_STATS, &stx)
	if err == nil && stx.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 {
		return stx.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0, nil
	}
	// A kernel before 5.8: read the mount table.
	mounts, err := mountsUnder(p)
	if err != nil {
		return false, err
	}
	for _, m := range mounts {
		if m == p {
			return true, nil
		}
	}
	return false, nil
}

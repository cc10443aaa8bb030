package base

import (
	"context"
	"io"
	"io/fs"
	"os"
)

// The building blocks below are exported for templates derived from base
// (internal/template/codeinterp), which start from a copy of the base
// rootfs and must publish, lock, trim and measure it exactly as base does.
// They behave as their unexported counterparts documented in this package.

// AcquireLock takes an exclusive flock on path, waiting while another
// process holds it and writing "<name>: waiting ..." lines to progress.
func AcquireLock(ctx context.Context, name, path string, progress io.Writer) (*os.File, error) {
	return acquireNamedLock(ctx, name, path, progress)
}

// ReadMarker loads dir's .complete marker, requiring it to be for recipe
// hash; a missing marker gives an fs.ErrNotExist error.
func ReadMarker(dir, hash string) (*Marker, error) { return readMarker(dir, hash) }

// MarkerName is the file name of the marker inside a cache entry.
const MarkerName = markerName

// Trim removes package lists, caches, logs, docs and translations from a
// finished rootfs, as base does to its own.
func Trim(rootfs string) error { return trim(rootfs) }

// DiskUsage is `du -s -x` of root in bytes.
func DiskUsage(root string) (int64, error) { return diskUsage(root) }

// InstalledPackages lists "name=version" for each package installed in rootfs.
func InstalledPackages(rootfs string) ([]string, error) { return installedPackages(rootfs) }

// UnmountUnder unmounts everything at or below dir and proves nothing is
// left mounted there.
func UnmountUnder(dir string) error { return unmountUnder(dir) }

// RemoveTree removes dir after making sure nothing is mounted inside it.
func RemoveTree(dir string) error { return removeTree(dir) }

// PutFile replaces name, relative to r, with a regular file of data and
// mode, never following a symlink already at name.
func PutFile(r *os.Root, name string, data []byte, mode fs.FileMode) error {
	return putFile(r, name, data, mode)
}

// HumanBytes formats n as whole MiB for progress lines.
func HumanBytes(n int64) string { return humanBytes(n) }

package base

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/warren-sandbox/warren/internal/mountinfo"
)

// debootstrap mounts /proc and /sys (and in containers /dev) inside the
// target while it runs maintainer scripts. It normally unmounts them on exit,
// and build runs it in a private mount namespace so they vanish with it, but
// a kill at the wrong moment, or a host where unshare is unavailable, can
// leave them mounted on the host. os.RemoveAll crosses mount points, so no
// tree is removed before these helpers have proved nothing is mounted in it.

// mountsUnder lists the mount points at or below dir, deepest first.
func mountsUnder(dir string) ([]string, error) {
	found, err := mountinfo.Under(dir)
	if err != nil {
		return nil, err
	}
	return deepestFirst(found), nil
}

// deepestFirst orders mount points so children come before their parents,
// the order to unmount them in.
func deepestFirst(mps []string) []string {
	slices.Sort(mps)
	slices.Reverse(mps)
	return slices.Compact(mps)
}

// unmountUnder unmounts everything mounted at or below dir and then checks
// the mount table again; it fails if anything is still there.
func unmountUnder(dir string) error {
	dir, err := realPath(dir)
	if err != nil {
		return err
	}
	mps, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	for _, mp := range mps {
		if err := syscall.Unmount(mp, 0); err != nil && !errors.Is(err, syscall.EINVAL) {
			// Busy (a straggler process has a file open): detach it from
			// the tree now; the kernel finishes when the user lets go.
			if err := syscall.Unmount(mp, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
				return fmt.Errorf("unmounting %s: %w", mp, err)
			}
		}
	}
	left, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("still mounted under %s after unmounting: %s", dir, strings.Join(left, ", "))
	}
	return nil
}

// removeTree removes dir after making sure nothing is mounted inside it.
func removeTree(dir string) error {
	if err := unmountUnder(dir); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	return nil
}

// realPath resolves symlinks in dir, because the mount table lists resolved
// paths; a directory that no longer exists is returned cleaned as is.
func realPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, os.ErrNotExist) {
		return abs, nil
	}
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", dir, err)
	}
	return real, nil
}

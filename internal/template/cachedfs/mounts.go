package cachedfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/moby/sys/mountinfo"
)

// debootstrap mounts /proc and /sys (and in containers /dev) inside the
// target while it runs maintainer scripts. It normally unmounts them on exit,
// and build runs it in a private mount namespace so they vanish with it, but
// a kill at the wrong moment, or a host where unshare is unavailable, can
// leave them mounted on the host. os.RemoveAll crosses mount points, so no
// tree is removed before these helpers have proved nothing is mounted in it.

// MountsUnder lists the mount points at or below dir, deepest first.
func MountsUnder(dir string) ([]string, error) {
	mounts, err := mountinfo.GetMounts(mountinfo.PrefixFilter(filepath.Clean(dir)))
	if err != nil {
		return nil, fmt.Errorf("reading mountinfo: %w", err)
	}
	return deepestFirst(mountPoints(mounts)), nil
}

func mountPoints(mounts []*mountinfo.Info) []string {
	out := make([]string, len(mounts))
	for i, m := range mounts {
		out[i] = m.Mountpoint
	}
	return out
}

// deepestFirst orders mount points so children come before their parents,
// the order to unmount them in.
func deepestFirst(mps []string) []string {
	slices.Sort(mps)
	slices.Reverse(mps)
	return slices.Compact(mps)
}

// UnmountUnder unmounts everything mounted at or below dir and then checks
// the mount table again; it fails if anything is still there.
func UnmountUnder(dir string) error {
	dir, err := RealPath(dir)
	if err != nil {
		return err
	}
	mps, err := MountsUnder(dir)
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
	left, err := MountsUnder(dir)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("still mounted under %s after unmounting: %s", dir, strings.Join(left, ", "))
	}
	return nil
}

// RemoveTree removes dir after making sure nothing is mounted inside it.
func RemoveTree(dir string) error {
	if err := UnmountUnder(dir); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	return nil
}

// RealPath resolves symlinks in dir, because the mount table lists resolved
// paths; a directory that no longer exists is returned cleaned as is.
func RealPath(dir string) (string, error) {
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

// RemoveLeftovers deletes what interrupted builds of the template name
// left behind in templates: .tmp
// directories (unmounting anything still mounted inside first) and a final
// directory without a marker. The caller holds the lock, so no live build
// owns any of it. A final directory whose marker exists but does not parse
// is left alone with an error: sandboxes may be using it, and our own builds
// never produce one.
func RemoveLeftovers(templates, name, final string) error {
	tmps, err := filepath.Glob(filepath.Join(templates, name+"-*.tmp-*"))
	if err != nil {
		return fmt.Errorf("listing interrupted builds: %w", err)
	}
	if _, err := os.Lstat(final); err == nil {
		_, err := os.Lstat(filepath.Join(final, MarkerName))
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s has an unreadable marker; remove it by hand to rebuild: %w", final, err)
		}
		tmps = append(tmps, final)
	}
	for _, dir := range tmps {
		if err := RemoveTree(dir); err != nil {
			return fmt.Errorf("removing interrupted build %s: %w", dir, err)
		}
	}
	return nil
}

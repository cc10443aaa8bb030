package base

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// debootstrap mounts /proc and /sys (and in containers /dev) inside the
// target while it runs maintainer scripts. It normally unmounts them on exit,
// and build runs it in a private mount namespace so they vanish with it, but
// a kill at the wrong moment, or a host where unshare is unavailable, can
// leave them mounted on the host. os.RemoveAll crosses mount points, so no
// tree is removed before these helpers have proved nothing is mounted in it.

const mountinfoPath = "/proc/self/mountinfo"

// mountsUnder lists the mount points at or below dir, deepest first.
func mountsUnder(dir string) ([]string, error) {
	f, err := os.Open(mountinfoPath)
	if err != nil {
		return nil, fmt.Errorf("reading mount table: %w", err)
	}
	defer f.Close()
	return parseMountsUnder(f, dir)
}

func parseMountsUnder(r io.Reader, dir string) ([]string, error) {
	dir = filepath.Clean(dir)
	var found []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		// Fields: id parent major:minor root mountpoint options ...
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			found = append(found, mp)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading mount table: %w", err)
	}
	// Deeper paths sort after their parents; unmount children first.
	slices.Sort(found)
	slices.Reverse(found)
	return slices.Compact(found), nil
}

// unescapeMountinfo undoes the kernel's octal escapes (\040 for a space,
// \011, \012, \134) in a mountinfo path.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
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

package layer

import (
	"archive/tar"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
)

// openParent returns an fd for the directory that holds name, and name's
// last element. With create, missing parents are made as real directories.
// For the layer root itself it returns the root and ".".
func (x *extractor) openParent(name string, create bool) (int, string, error) {
	if name == "." {
		fd, err := unix.Dup(x.root)
		if err != nil {
			return -1, "", fmt.Errorf("dup layer root: %w", err)
		}
		return fd, ".", nil
	}
	dir, base := path.Split(name)
	fd, err := x.walk(strings.TrimSuffix(dir, "/"), create, name)
	return fd, base, err
}

// walk opens the directory rel one component at a time, refusing to pass
// through anything but a real directory. This is what keeps "link -> /etc"
// followed by "link/passwd" from ever writing to the host: O_NOFOLLOW makes
// the symlink itself fail to open as a directory.
func (x *extractor) walk(rel string, create bool, entry string) (int, error) {
	fd, err := unix.Dup(x.root)
	if err != nil {
		return -1, fmt.Errorf("dup layer root: %w", err)
	}
	if rel == "" || rel == "." {
		return fd, nil
	}
	const flags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	for i, c := range strings.Split(rel, "/") {
		next, err := unix.Openat(fd, c, flags, 0)
		if err == unix.ENOENT && create {
			err = unix.Mkdirat(fd, c, 0o755)
			if err == nil {
				// A parent the tar never listed: 0755 as docker makes it,
				// whatever our umask says.
				err = unix.Fchmodat(fd, c, 0o755, 0)
			}
			if err == nil || err == unix.EEXIST {
				next, err = unix.Openat(fd, c, flags, 0)
			}
		}
		unix.Close(fd)
		if err != nil {
			sofar := strings.Join(strings.Split(rel, "/")[:i+1], "/")
			return -1, walkErr(entry, sofar, err)
		}
		fd = next
	}
	return fd, nil
}

func walkErr(entry, dir string, err error) error {
	switch err {
	case unix.ENOTDIR, unix.ELOOP:
		return invalid(entry, fmt.Sprintf("%q is not a directory (symlinks are never followed while extracting)", dir))
	case unix.ENOENT:
		return invalid(entry, fmt.Sprintf("%q does not exist", dir))
	}
	return fsErr("open", dir, err)
}

// removeAt deletes whatever is at parent/base, directories recursively,
// without following symlinks anywhere.
func removeAt(parent int, base string) error {
	err := unix.Unlinkat(parent, base, 0)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	if err != unix.EISDIR {
		return err
	}
	fd, err := unix.Openat(parent, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	d := os.NewFile(uintptr(fd), base)
	names, err := d.Readdirnames(-1)
	for _, n := range names {
		if err != nil {
			break
		}
		err = removeAt(fd, n)
	}
	d.Close()
	if err != nil {
		return err
	}
	return unix.Unlinkat(parent, base, unix.AT_REMOVEDIR)
}

func (x *extractor) ids(hdr *tar.Header) (int, int) {
	uid, gid := hdr.Uid, hdr.Gid
	if x.opts.UID != nil {
		uid = *x.opts.UID
	}
	if x.opts.GID != nil {
		gid = *x.opts.GID
	}
	return uid, gid
}

func (x *extractor) owner(parent int, base string, hdr *tar.Header) error {
	if !x.chown {
		return nil
	}
	uid, gid := x.ids(hdr)
	if err := unix.Fchownat(parent, base, uid, gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fsErr("chown", hdr.Name, err)
	}
	return nil
}

// mode is the permission part of the entry's mode, setuid and friends
// included, or the FileMode override.
func (x *extractor) mode(hdr *tar.Header) uint32 {
	if fm := x.opts.FileMode; fm != nil {
		m := uint32(fm.Perm())
		if *fm&os.ModeSetuid != 0 {
			m |= unix.S_ISUID
		}
		if *fm&os.ModeSetgid != 0 {
			m |= unix.S_ISGID
		}
		if *fm&os.ModeSticky != 0 {
			m |= unix.S_ISVTX
		}
		return m
	}
	return uint32(hdr.Mode) & 0o7777
}

func times(hdr *tar.Header) (atime, mtime unix.Timespec, ok bool) {
	if hdr.ModTime.IsZero() {
		return atime, mtime, false
	}
	mtime = unix.NsecToTimespec(hdr.ModTime.UnixNano())
	atime = mtime
	if !hdr.AccessTime.IsZero() {
		atime = unix.NsecToTimespec(hdr.AccessTime.UnixNano())
	}
	return atime, mtime, true
}

func (x *extractor) setTimes(parent int, base, name string, hdr *tar.Header) error {
	atime, mtime, ok := times(hdr)
	if !ok {
		return nil
	}
	if err := unix.UtimesNanoAt(parent, base, []unix.Timespec{atime, mtime}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fsErr("set times on", name, err)
	}
	return nil
}

// xattrPrefix marks extended attributes in PAX records (GNU tar, docker).
const xattrPrefix = "SCHILY.xattr."

// keepXattr says which attributes an image may set. trusted.* is where
// overlayfs keeps its own metadata (opaque, redirect, metacopy), and
// user.overlay.* is where it keeps it when mounted with userxattr, so a
// layer must not forge either; security.* labels belong to the host's LSM
// policy. File capabilities are part of what images legitimately ship.
func keepXattr(name string) bool {
	switch {
	case strings.HasPrefix(name, "trusted."), strings.HasPrefix(name, "user.overlay."):
		return false
	case strings.HasPrefix(name, "security."):
		return name == "security.capability"
	}
	return true
}

func (x *extractor) xattrs(parent int, base string, hdr *tar.Header) error {
	var names []string
	for k := range hdr.PAXRecords {
		// overlayfs reads trusted.overlay.* (and user.overlay.*) as its own
		// metadata: redirects, whiteouts, origins. From an archive they
		// can only be forged, so the archive is refused, not trimmed.
		if n, ok := strings.CutPrefix(k, xattrPrefix); ok && (strings.HasPrefix(n, "trusted.overlay.") || strings.HasPrefix(n, "user.overlay.")) {
			return invalid(hdr.Name, fmt.Sprintf("carries the overlay filesystem's own attribute %s, which an archive may not set", n))
		}
		if n, ok := strings.CutPrefix(k, xattrPrefix); ok && keepXattr(n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		err := setxattrAt(parent, base, n, []byte(hdr.PAXRecords[xattrPrefix+n]))
		switch {
		case err == nil:
		case err == unix.ENOTSUP || err == unix.EPERM:
			// The filesystem has no xattrs, or this one is not allowed here
			// (security.capability when not root, user.* on a symlink): the
			// layer still works without it.
			log.G(x.ctx).Debug("layer: xattr not kept", slog.String("path", hdr.Name), slog.String("xattr", n), slog.Any("err", err))
		case err == unix.E2BIG || err == unix.ERANGE:
			return invalid(hdr.Name, fmt.Sprintf("xattr %.80s: name or value too large", n))
		default:
			return fsErr("set xattr "+n+" on", hdr.Name, err)
		}
	}
	return nil
}

// setxattrAt sets an xattr on parent/base without following base: there is
// no fd-relative lsetxattr, so the parent is named through /proc, whose
// magic link resolves to exactly the directory we hold open.
func setxattrAt(parent int, base, name string, value []byte) error {
	return unix.Lsetxattr(procPath(parent, base), name, value, 0)
}

func procPath(fd int, base string) string {
	if base == "" {
		return fmt.Sprintf("/proc/self/fd/%d", fd)
	}
	return fmt.Sprintf("/proc/self/fd/%d/%s", fd, base)
}

// fsErr names the failing step and turns a full disk into ErrNoSpace.
func fsErr(op, name string, err error) error {
	if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
		return fmt.Errorf("%s %q: %w: %w", op, name, errdefs.ErrNoSpace, err)
	}
	return fmt.Errorf("%s %q: %w", op, name, err)
}

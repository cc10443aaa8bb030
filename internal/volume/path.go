package volume

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// maxPath is the longest path the content API takes (PATH_MAX).
const maxPath = 4096

// cleanPath turns a client's path into the name os.Root takes ("." for
// the root) and the path from the volume's root that entries show ("/"
// for the root). A leading "/" is optional; ".." that climbs above the
// root is refused rather than clamped, so a client never reads some
// other file than the one it named.
func cleanPath(p string) (rel, abs string, err error) {
	switch {
	case p == "":
		return "", "", errdefs.New(errdefs.ErrInvalidArgument, "a path is required")
	case len(p) > maxPath:
		return "", "", errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("a path is at most %d bytes", maxPath))
	case strings.IndexByte(p, 0) >= 0:
		return "", "", errdefs.New(errdefs.ErrInvalidArgument, "a path cannot hold a NUL byte")
	}
	rel = path.Clean(strings.TrimLeft(p, "/"))
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", "", errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("path %q leads out of the volume", p))
	}
	if rel == "." {
		return ".", "/", nil
	}
	return rel, "/" + rel, nil
}

// classify gives a filesystem error on the volume its class, naming the
// client's path only: the error of os.Root names the path relative to
// the volume, never the host's.
func classify(abs string, err error) error {
	var errno syscall.Errno
	errors.As(err, &errno)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errdefs.ErrNoSpace) || errors.Is(err, errdefs.ErrInvalidArgument):
		return err // classed already
	case errors.Is(err, fs.ErrNotExist) || errno == syscall.ENOTDIR:
		return errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("path %s not found", abs))
	case errors.Is(err, fs.ErrExist) || errno == syscall.ENOTEMPTY:
		return errdefs.New(errdefs.ErrAlreadyExists, fmt.Sprintf("path %s already exists", abs))
	case errno == syscall.ENOSPC || errno == syscall.EDQUOT:
		return errdefs.New(errdefs.ErrNoSpace, "the volume is full")
	case errno == syscall.EISDIR:
		return errdefs.New(errdefs.ErrConflict, fmt.Sprintf("path %s is a directory", abs))
	case errno == syscall.ELOOP || escapes(err):
		return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("path %s leads out of the volume", abs))
	case errno == syscall.ENAMETOOLONG:
		return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("path %s has a name too long", abs))
	case errno == syscall.EACCES || errno == syscall.EPERM || errno == syscall.EROFS:
		return errdefs.New(errdefs.ErrPermissionDenied, fmt.Sprintf("path %s: %v", abs, errno))
	}
	return fmt.Errorf("volume path %s: %w", abs, err)
}

// escapes reports os.Root's refusal of a path that leaves the root (a
// symlink or ".." leading out), which it gives as an unexported error.
func escapes(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes")
}

// entryOf describes the file at abs (from the volume's root) as lstat saw it.
func entryOf(abs string, fi fs.FileInfo, target string) Entry {
	e := Entry{Name: path.Base(abs), Path: abs, Size: fi.Size(), Target: target}
	switch {
	case fi.Mode().IsRegular():
		e.Type = TypeFile
	case fi.IsDir():
		e.Type = TypeDirectory
	case fi.Mode()&fs.ModeSymlink != 0:
		e.Type = TypeSymlink
	default:
		e.Type = TypeUnknown
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.Mode = st.Mode & 0o7777
		e.UID, e.GID = st.Uid, st.Gid
		e.ATime = time.Unix(st.Atim.Sec, st.Atim.Nsec)
		e.MTime = time.Unix(st.Mtim.Sec, st.Mtim.Nsec)
		e.CTime = time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	}
	return e
}

// fileMode turns a client's mode (unix bits, up to 0o7777) into Go's.
func fileMode(m uint32) (fs.FileMode, error) {
	if m > 0o7777 {
		return 0, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("mode %#o is more than permission bits", m))
	}
	fm := fs.FileMode(m & 0o777)
	if m&0o4000 != 0 {
		fm |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		fm |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		fm |= fs.ModeSticky
	}
	return fm, nil
}

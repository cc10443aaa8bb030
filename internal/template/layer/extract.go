// Package layer writes image and build layers as plain directories that
// overlayfs stacks as read-only lowerdirs, and keeps them in a
// content-addressed Store so images and templates share them on disk.
//
// Layer tars come from registries and from users, so Extract treats every
// entry as hostile: paths must stay inside the target, device nodes are
// refused, no symlink is ever followed while writing, and xattrs that
// overlayfs or the kernel would trust are dropped.
package layer

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// OCI whiteout names (image-spec layer.md).
const (
	whiteoutPrefix = ".wh."
	opaqueMarker   = ".wh..wh..opq"
	opaqueXattr    = "trusted.overlay.opaque"
)

// Options changes how Extract writes entries. The zero value writes the tar
// as it is, which is what a COPY of user files wants.
type Options struct {
	// Whiteouts converts OCI whiteout entries into overlayfs whiteouts (a
	// 0/0 character device) and opaque markers (an xattr on the directory),
	// as image layers need. Off, such entries are ordinary files.
	Whiteouts bool
	// Map renames an entry (given as a clean relative path, "." for the
	// root) or, returning ok=false, skips it. Hardlink targets are mapped
	// the same way so links keep pointing at the renamed files.
	Map func(name string) (newName string, ok bool)
	// UID and GID, when set, replace the owner of every entry.
	UID, GID *int
	// FileMode, when set, replaces the permission bits (including setuid,
	// setgid and sticky) of regular files and directories.
	FileMode *os.FileMode
	// Limit caps the total size of file content; going over it fails with
	// errdefs.ErrNoSpace. Zero means no cap. Sparse files count their full
	// size. Extraction also stops while reserveFree bytes are still free
	// on dir's filesystem, whatever the limit.
	Limit int64
	// MaxEntries caps the number of entries (default DefaultMaxEntries);
	// MaxDepth the components of a path (default DefaultMaxDepth).
	MaxEntries, MaxDepth int
}

// Defaults for Options' caps. Image layers pass larger MaxEntries: a
// distribution's layer can hold a few hundred thousand files.
const (
	DefaultMaxEntries = 50_000
	DefaultMaxDepth   = 128
	// ImageMaxEntries is the cap image layers use.
	ImageMaxEntries = 1_000_000
	// reserveFree is left free on the target filesystem: an archive that
	// would eat into it fails instead of filling the host's disk.
	reserveFree = 512 << 20
)

// Extract reads an uncompressed tar stream from r and writes its entries
// into dir, which must exist. Later entries replace earlier ones at the same
// path, as docker does. On error dir holds a partial tree; callers extract
// into a scratch directory (see Store.Create) and throw it away.
func Extract(ctx context.Context, r io.Reader, dir string, opts Options) error {
	root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open layer directory %s: %w", dir, err)
	}
	defer unix.Close(root)
	if opts.MaxEntries == 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
	if opts.MaxDepth == 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	x := &extractor{
		ctx:   ctx,
		root:  root,
		opts:  opts,
		chown: os.Geteuid() == 0,
		done:  make(map[string]bool),
		room:  roomOn(dir),
	}
	tr := tar.NewReader(ctxReader{ctx: ctx, r: r})
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return readErr(err)
		}
		if x.entries++; x.entries > opts.MaxEntries {
			return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf(
				"the archive has more than %d entries, the most one archive may hold", opts.MaxEntries))
		}
		if err := x.entry(hdr, tr); err != nil {
			return err
		}
	}
	return x.finishDirs()
}

// extractor is the state of one Extract call.
type extractor struct {
	ctx     context.Context
	root    int // O_PATH fd of the target directory; every write is relative to it
	opts    Options
	chown   bool // only root may give files away; others keep their own uid
	written int64
	entries int
	room    int64 // bytes that may be written before the filesystem's reserve; <0: unknown
	// done holds the non-directory entries written so far, the only valid
	// hardlink targets: a link can then never reach a file that was in dir
	// before, or one outside it.
	done map[string]bool
	// dirs get their mode and times once all entries are in, so that a
	// read-only directory can still be filled and its mtime is not bumped
	// by the children written after it.
	dirs []dirMeta
}

type dirMeta struct {
	name         string
	mode         uint32
	atime, mtime unix.Timespec
	hasTime      bool
}

func (x *extractor) entry(hdr *tar.Header, r io.Reader) error {
	name, err := cleanName(hdr.Name, hdr.Name, "path ")
	if err != nil {
		return err
	}
	if d := depth(name); d > x.opts.MaxDepth {
		return invalid(hdr.Name[:min(len(hdr.Name), 80)]+"…", fmt.Sprintf("path is %d directories deep; at most %d are allowed", d, x.opts.MaxDepth))
	}
	if x.opts.Map != nil {
		mapped, ok := x.opts.Map(name)
		if !ok {
			return nil
		}
		if name, err = cleanName(mapped, hdr.Name, "mapped path "+mapped+" "); err != nil {
			return err
		}
	}
	if x.opts.Whiteouts && strings.HasPrefix(path.Base(name), whiteoutPrefix) {
		return x.whiteout(name, hdr.Name)
	}
	if name == "." && hdr.Typeflag != tar.TypeDir {
		return invalid(hdr.Name, "only a directory can be the layer root")
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		return x.dir(name, hdr)
	case tar.TypeReg, tar.TypeGNUSparse:
		return x.file(name, hdr, r)
	case tar.TypeSymlink:
		return x.symlink(name, hdr)
	case tar.TypeLink:
		return x.hardlink(name, hdr)
	case tar.TypeFifo:
		return x.fifo(name, hdr)
	case tar.TypeChar, tar.TypeBlock:
		return invalid(hdr.Name, "device nodes are not allowed in a layer")
	case tar.TypeXGlobalHeader:
		return nil
	default:
		return invalid(hdr.Name, fmt.Sprintf("unsupported tar entry type %q", hdr.Typeflag))
	}
}

// cleanName turns a path from entry (its name, link target or mapped name,
// as what says) into a clean path relative to the layer root. It works on
// the string alone, so ".." can only ever cancel a component the path
// itself named, never climb out through the filesystem.
func cleanName(name, entry, what string) (string, error) {
	if name == "" {
		return "", invalid(entry, what+"is empty")
	}
	if strings.HasPrefix(name, "/") {
		return "", invalid(entry, what+"is absolute")
	}
	clean := path.Clean(name)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", invalid(entry, what+"escapes the layer")
	}
	for rest := clean; rest != ""; {
		c, after, _ := strings.Cut(rest, "/")
		if len(c) > maxNameLen {
			return "", invalid(entry[:min(len(entry), 80)]+"…", fmt.Sprintf("%shas a name of %d bytes; at most %d are allowed", what, len(c), maxNameLen))
		}
		rest = after
	}
	return clean, nil
}

// maxNameLen and maxLinkLen are Linux's NAME_MAX and PATH_MAX less its
// NUL: longer names and symlink targets are the archive's fault, refused
// before the kernel answers ENAMETOOLONG.
const (
	maxNameLen = 255
	maxLinkLen = 4095
)

func invalid(entry, why string) error {
	return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("layer entry %q: %s", entry, why))
}

func (x *extractor) dir(name string, hdr *tar.Header) error {
	parent, base, err := x.openParent(name, true)
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	if name != "." {
		var st unix.Stat_t
		err := unix.Fstatat(parent, base, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			if err := removeAt(parent, base); err != nil {
				return fsErr("replace", name, err)
			}
			err = unix.ENOENT
		}
		if err == unix.ENOENT {
			err = unix.Mkdirat(parent, base, 0o755)
		}
		if err != nil {
			return fsErr("mkdir", name, err)
		}
		delete(x.done, name)
	}
	if err := x.owner(parent, base, hdr); err != nil {
		return err
	}
	if err := x.xattrs(parent, base, hdr); err != nil {
		return err
	}
	m := dirMeta{name: name, mode: x.mode(hdr)}
	m.atime, m.mtime, m.hasTime = times(hdr)
	x.dirs = append(x.dirs, m)
	return nil
}

func (x *extractor) file(name string, hdr *tar.Header, r io.Reader) error {
	if hdr.Size < 0 || x.opts.Limit > 0 && x.written+hdr.Size > x.opts.Limit {
		return fmt.Errorf("layer entry %q: layer content exceeds the limit of %d bytes: %w", hdr.Name, x.opts.Limit, errdefs.ErrNoSpace)
	}
	if x.room >= 0 && x.written+hdr.Size > x.room {
		return fmt.Errorf("layer entry %q: writing %d bytes would leave the server's disk almost full: %w", hdr.Name, hdr.Size, errdefs.ErrNoSpace)
	}
	x.written += hdr.Size
	parent, base, err := x.prepare(name)
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	fd, err := unix.Openat(parent, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fsErr("create", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if _, err := io.Copy(f, r); err != nil {
		if pe := (*os.PathError)(nil); errors.As(err, &pe) && pe.Op == "write" {
			return fsErr("write", name, err)
		}
		return fmt.Errorf("layer entry %q: %w", hdr.Name, readErr(err))
	}
	if x.chown {
		uid, gid := x.ids(hdr)
		if err := unix.Fchown(fd, uid, gid); err != nil {
			return fsErr("chown", name, err)
		}
	}
	// After chown: the kernel clears setuid/setgid on a chown.
	if err := unix.Fchmod(fd, x.mode(hdr)); err != nil {
		return fsErr("chmod", name, err)
	}
	if err := x.xattrs(parent, base, hdr); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return fsErr("close", name, err)
	}
	x.done[name] = true
	return x.setTimes(parent, base, name, hdr)
}

func (x *extractor) symlink(name string, hdr *tar.Header) error {
	if hdr.Linkname == "" {
		return invalid(hdr.Name, "symlink without a target")
	}
	if len(hdr.Linkname) > maxLinkLen {
		return invalid(hdr.Name, fmt.Sprintf("symlink target of %d bytes; at most %d are allowed", len(hdr.Linkname), maxLinkLen))
	}
	parent, base, err := x.prepare(name)
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	// The target is stored verbatim: it means something only inside the
	// sandbox, and nothing here ever resolves it.
	if err := unix.Symlinkat(hdr.Linkname, parent, base); err != nil {
		return fsErr("symlink", name, err)
	}
	x.done[name] = true
	if err := x.owner(parent, base, hdr); err != nil {
		return err
	}
	if err := x.xattrs(parent, base, hdr); err != nil {
		return err
	}
	return x.setTimes(parent, base, name, hdr)
}

func (x *extractor) hardlink(name string, hdr *tar.Header) error {
	target, err := cleanName(hdr.Linkname, hdr.Name, "hardlink target ")
	if err != nil {
		return err
	}
	if x.opts.Map != nil {
		mapped, ok := x.opts.Map(target)
		if !ok {
			return invalid(hdr.Name, fmt.Sprintf("hardlink target %q is not extracted", hdr.Linkname))
		}
		if target, err = cleanName(mapped, hdr.Name, "mapped hardlink target "+mapped+" "); err != nil {
			return err
		}
	}
	if target == name {
		return nil // a link to itself: the file is already there
	}
	if !x.done[target] {
		return invalid(hdr.Name, fmt.Sprintf("hardlink target %q is not an earlier entry of the layer", hdr.Linkname))
	}
	tparent, tbase, err := x.openParent(target, false)
	if err != nil {
		return err
	}
	defer unix.Close(tparent)
	parent, base, err := x.prepare(name)
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	// flags 0: if the target is a symlink, link the symlink, not what it names.
	if err := unix.Linkat(tparent, tbase, parent, base, 0); err != nil {
		return fsErr("link", name, err)
	}
	x.done[name] = true
	return nil
}

func (x *extractor) fifo(name string, hdr *tar.Header) error {
	parent, base, err := x.prepare(name)
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	if err := unix.Mknodat(parent, base, unix.S_IFIFO|0o600, 0); err != nil {
		return fsErr("mkfifo", name, err)
	}
	x.done[name] = true
	if err := x.owner(parent, base, hdr); err != nil {
		return err
	}
	// The fifo was just made by us, so following base cannot lead elsewhere.
	if err := unix.Fchmodat(parent, base, uint32(hdr.Mode)&0o7777, 0); err != nil {
		return fsErr("chmod", name, err)
	}
	if err := x.xattrs(parent, base, hdr); err != nil {
		return err
	}
	return x.setTimes(parent, base, name, hdr)
}

// whiteout turns ".wh.name" into the overlayfs whiteout for name and
// ".wh..wh..opq" into the opaque mark on its directory.
func (x *extractor) whiteout(name, entry string) error {
	dir, base := path.Split(name)
	if base == opaqueMarker {
		fd, err := x.walk(path.Clean(dir), true, entry)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Setxattr(procPath(fd, ""), opaqueXattr, []byte("y"), 0); err != nil {
			return fsErr("mark opaque", path.Clean(dir), err)
		}
		return nil
	}
	hidden := strings.TrimPrefix(base, whiteoutPrefix)
	if hidden == "" || hidden == "." || hidden == ".." {
		return invalid(entry, "whiteout of an invalid name")
	}
	target := path.Join(dir, hidden)
	parent, tbase, err := x.prepare(target)
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	if err := unix.Mknodat(parent, tbase, unix.S_IFCHR, 0); err != nil {
		return fsErr("whiteout", target, err)
	}
	delete(x.done, target)
	return nil
}

// prepare opens the parent of name (creating missing directories) and
// removes whatever is at name, so the caller can create it afresh.
func (x *extractor) prepare(name string) (int, string, error) {
	parent, base, err := x.openParent(name, true)
	if err != nil {
		return -1, "", err
	}
	if err := removeAt(parent, base); err != nil {
		unix.Close(parent)
		return -1, "", fsErr("replace", name, err)
	}
	return parent, base, nil
}

// finishDirs sets directory modes and times, deepest first so that a
// directory losing its write or search bit comes after its children.
func (x *extractor) finishDirs() error {
	slices.SortStableFunc(x.dirs, func(a, b dirMeta) int {
		return depth(b.name) - depth(a.name)
	})
	for _, m := range x.dirs {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		if err := x.finishDir(m); err != nil {
			return err
		}
	}
	return nil
}

func (x *extractor) finishDir(m dirMeta) error {
	parent, base, err := x.openParent(m.name, false)
	if err != nil {
		if errdefs.IsInvalidArgument(err) {
			return nil // replaced or removed by a later entry
		}
		return err
	}
	defer unix.Close(parent)
	// O_NOFOLLOW: a later entry may have put a symlink where the directory was.
	fd, err := unix.Openat(parent, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT || err == unix.ENOTDIR || err == unix.ELOOP {
		return nil
	}
	if err != nil {
		return fsErr("open", m.name, err)
	}
	defer unix.Close(fd)
	if err := unix.Fchmod(fd, m.mode); err != nil {
		return fsErr("chmod", m.name, err)
	}
	if !m.hasTime {
		return nil
	}
	if err := unix.UtimesNanoAt(parent, base, []unix.Timespec{m.atime, m.mtime}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fsErr("set times on", m.name, err)
	}
	return nil
}

func depth(name string) int {
	if name == "." {
		return 0
	}
	return strings.Count(name, "/") + 1
}

// ctxReader stops a long copy when the caller gives up.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func readErr(err error) error {
	if errors.Is(err, tar.ErrHeader) || errors.Is(err, tar.ErrFieldTooLong) || errors.Is(err, tar.ErrInsecurePath) {
		return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("malformed layer tar: %v", err))
	}
	return fmt.Errorf("read layer tar: %w", err)
}

// roomOn is how much may be written on dir's filesystem before only
// reserveFree is left; -1 when that cannot be read.
func roomOn(dir string) int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return -1
	}
	return max(int64(st.Bavail)*int64(st.Bsize)-reserveFree, 0)
}

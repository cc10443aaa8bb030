package layer

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Archive writes the layer directory dir to w as a tar stream that
// Extract, with Options.Whiteouts, turns back into the same layer: this
// is how a cluster node hands a layer to another. Overlay whiteouts (0/0
// character devices) and opaque directories travel as OCI whiteout
// entries, because the receiving side refuses device nodes and overlay
// xattrs in an archive; hardlinks stay hardlinks; owners, modes, times
// and the xattrs Extract keeps are carried. Symlinks are never followed.
// A device node other than a whiteout cannot be carried and fails the
// archive.
func Archive(ctx context.Context, w io.Writer, dir string) error {
	a := &archiver{ctx: ctx, tw: tar.NewWriter(w), root: dir, links: map[uint64]string{}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return a.entry(p)
	})
	if err != nil {
		return fmt.Errorf("archive layer %s: %w", dir, err)
	}
	return a.tw.Close()
}

// archiver is the state of one Archive call.
type archiver struct {
	ctx   context.Context
	tw    *tar.Writer
	root  string
	links map[uint64]string // inode -> first name written, for hardlinks
}

func (a *archiver) entry(p string) error {
	rel, err := filepath.Rel(a.root, p)
	if err != nil {
		return err
	}
	rel = filepath.ToSlash(rel)
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch m := fi.Mode(); {
	case m&fs.ModeCharDevice != 0 && st != nil && st.Rdev == 0:
		return a.whiteout(path.Join(path.Dir(rel), whiteoutPrefix+path.Base(rel)), fi)
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return fmt.Errorf("%s is a device node, which a layer cannot carry", rel)
	case m&fs.ModeSocket != 0:
		return nil // a socket means nothing once its process is gone
	}
	hdr, err := a.header(p, rel, fi, st)
	if err != nil {
		return err
	}
	if err := a.tw.WriteHeader(hdr); err != nil {
		return err
	}
	if hdr.Typeflag == tar.TypeReg && hdr.Size > 0 {
		if err := a.copyFile(p, hdr.Size); err != nil {
			return err
		}
	}
	if fi.IsDir() && opaque(p) {
		return a.whiteout(path.Join(rel, opaqueMarker), fi)
	}
	return nil
}

// header describes p; a file already written under another name becomes
// a hardlink to it.
func (a *archiver) header(p, rel string, fi fs.FileInfo, st *syscall.Stat_t) (*tar.Header, error) {
	link := ""
	if fi.Mode()&fs.ModeSymlink != 0 {
		var err error
		if link, err = os.Readlink(p); err != nil {
			return nil, err
		}
	}
	hdr, err := tar.FileInfoHeader(fi, link)
	if err != nil {
		return nil, err
	}
	hdr.Name, hdr.Uname, hdr.Gname, hdr.Format = rel, "", "", tar.FormatPAX
	if fi.IsDir() {
		hdr.Name = rel + "/"
	}
	if st != nil && !fi.IsDir() && st.Nlink > 1 {
		if first, ok := a.links[st.Ino]; ok {
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeLink, first, 0
			return hdr, nil
		}
		a.links[st.Ino] = rel
	}
	xattrs, err := keptXattrs(p)
	if err != nil {
		return nil, err
	}
	for k, v := range xattrs {
		if hdr.PAXRecords == nil {
			hdr.PAXRecords = map[string]string{}
		}
		hdr.PAXRecords[xattrPrefix+k] = v
	}
	return hdr, nil
}

// whiteout writes an empty OCI whiteout file (or opaque marker) at name.
func (a *archiver) whiteout(name string, fi fs.FileInfo) error {
	return a.tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o600,
		ModTime: fi.ModTime(), Format: tar.FormatPAX})
}

// copyFile writes exactly size bytes of p: a file that changed meanwhile
// fails the archive instead of corrupting the stream.
func (a *archiver) copyFile(p string, size int64) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := io.Copy(a.tw, io.LimitReader(f, size))
	if err == nil && n != size {
		err = fmt.Errorf("%s shrank while being archived", p)
	}
	return err
}

// opaque says whether overlayfs treats directory p as opaque.
func opaque(p string) bool {
	buf := make([]byte, 8)
	n, err := unix.Lgetxattr(p, opaqueXattr, buf)
	return err == nil && n == 1 && buf[0] == 'y'
}

// keptXattrs reads the xattrs of p that Extract would set again; the
// overlay's own (trusted.*) stay behind, as Extract would refuse them.
func keptXattrs(p string) (map[string]string, error) {
	size, err := unix.Llistxattr(p, nil)
	if errors.Is(err, unix.ENOTSUP) || size == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list xattrs of %s: %w", p, err)
	}
	buf := make([]byte, size)
	if size, err = unix.Llistxattr(p, buf); err != nil {
		return nil, fmt.Errorf("list xattrs of %s: %w", p, err)
	}
	out := map[string]string{}
	for _, name := range strings.Split(strings.TrimRight(string(buf[:size]), "\x00"), "\x00") {
		if name == "" || !keepXattr(name) {
			continue
		}
		v, err := lgetxattr(p, name)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

func lgetxattr(p, name string) (string, error) {
	n, err := unix.Lgetxattr(p, name, nil)
	if err != nil {
		return "", fmt.Errorf("read xattr %s of %s: %w", name, p, err)
	}
	buf := make([]byte, n)
	if n, err = unix.Lgetxattr(p, name, buf); err != nil {
		return "", fmt.Errorf("read xattr %s of %s: %w", name, p, err)
	}
	return string(buf[:n]), nil
}

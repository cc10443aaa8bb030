package volume

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// write writes r to p through a temporary file in the same directory,
// renamed into place only once whole, so a reader (the content API or a
// sandbox) never sees half a file. Without force, a file made at p
// meanwhile is kept: the temporary file is linked, which fails on an
// existing name, where a rename would replace it. limit is the bytes the
// volume may still take (-1: the kernel enforces its size).
func (c *content) write(p string, r io.Reader, a Attrs, force bool, limit int64) (Entry, error) {
	rel, abs, err := cleanPath(p)
	if err != nil {
		return Entry{}, err
	}
	if fi, err := c.root.Lstat(rel); err == nil {
		if fi.IsDir() {
			return Entry{}, errdefs.New(errdefs.ErrConflict, fmt.Sprintf("path %s is a directory", abs))
		}
		if !force {
			return Entry{}, errdefs.New(errdefs.ErrAlreadyExists, fmt.Sprintf("path %s already exists", abs))
		}
		if limit >= 0 && fi.Mode().IsRegular() {
			limit += fi.Size() // the file it replaces frees that much
		}
	}
	mode, err := attrMode(a, 0o644)
	if err != nil {
		return Entry{}, err
	}
	tmp := tempName(rel)
	f, err := c.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Entry{}, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("the directory of %s not found", abs))
		}
		return Entry{}, classify(abs, err)
	}
	if err := fill(f, r, a, mode, limit); err != nil {
		_ = c.root.Remove(tmp)
		return Entry{}, classify(abs, err)
	}
	if err := c.publish(tmp, rel, abs, force); err != nil {
		_ = c.root.Remove(tmp)
		return Entry{}, err
	}
	return c.entry(rel, abs)
}

// fill writes the file's data, owner and mode and syncs it: the rename
// that follows must not publish a file a host crash would leave empty.
func fill(f *os.File, r io.Reader, a Attrs, mode fs.FileMode, limit int64) error {
	defer f.Close()
	src := r
	if limit >= 0 {
		src = io.LimitReader(r, limit+1)
	}
	n, err := io.Copy(f, src)
	if err != nil {
		return err
	}
	if limit >= 0 && n > limit {
		return errdefs.New(errdefs.ErrNoSpace, "the volume is full: the file does not fit in what is left of its size")
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if uid, gid, ok := chownTo(fi, a); ok {
		if err := f.Chown(uid, gid); err != nil {
			return err
		}
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

func (c *content) publish(tmp, rel, abs string, force bool) error {
	if force {
		return classify(abs, c.root.Rename(tmp, rel))
	}
	if err := c.root.Link(tmp, rel); err != nil {
		return classify(abs, err)
	}
	return classify(abs, c.root.Remove(tmp))
}

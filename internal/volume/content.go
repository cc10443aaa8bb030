package volume

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"syscall"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// maxEntries bounds one listing, so a deep list of a huge tree is a
// clear error rather than an answer of gigabytes.
const maxEntries = 100_000

// content is the content API's view of one volume: every operation goes
// through os.Root, so "..", absolute symlinks and symlinks leading out
// resolve inside the volume or fail, never reaching the host's files.
type content struct {
	root *os.Root
}

func openContent(dir string) (*content, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening a volume's root: %w", err)
	}
	return &content{root: r}, nil
}

func (c *content) Close() error { return c.root.Close() }

// entry lstats rel: a symlink is described, not followed.
func (c *content) entry(rel, abs string) (Entry, error) {
	fi, err := c.root.Lstat(rel)
	if err != nil {
		return Entry{}, classify(abs, err)
	}
	var target string
	if fi.Mode()&fs.ModeSymlink != 0 {
		if target, err = c.root.Readlink(rel); err != nil {
			return Entry{}, classify(abs, err)
		}
	}
	e := entryOf(abs, fi, target)
	if abs == "/" {
		e.Name = "/"
	}
	return e, nil
}

func (c *content) stat(p string) (Entry, error) {
	rel, abs, err := cleanPath(p)
	if err != nil {
		return Entry{}, err
	}
	return c.entry(rel, abs)
}

// list lists below the directory p, depth levels down; symlinks to
// directories are listed, not entered.
func (c *content) list(p string, depth int) ([]Entry, error) {
	rel, abs, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	if depth < 1 {
		depth = 1
	}
	fi, err := c.root.Stat(rel)
	if err != nil {
		return nil, classify(abs, err)
	}
	if !fi.IsDir() {
		return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("directory %s not found: it is a file", abs))
	}
	out := []Entry{}
	return out, c.listInto(&out, rel, abs, depth)
}

func (c *content) listInto(out *[]Entry, rel, abs string, depth int) error {
	d, err := c.root.Open(rel)
	if err != nil {
		return classify(abs, err)
	}
	// Names only: DirEntry.Info would lstat by a path outside os.Root.
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return classify(abs, err)
	}
	slices.Sort(names)
	for _, name := range names {
		if len(*out) >= maxEntries {
			return errdefs.New(errdefs.ErrTooLarge, fmt.Sprintf("more than %d entries: list with less depth", maxEntries))
		}
		crel, cabs := path.Join(rel, name), path.Join(abs, name)
		e, err := c.entry(crel, cabs)
		if errors.Is(err, errdefs.ErrNotFound) {
			continue // removed meanwhile
		}
		if err != nil {
			return err
		}
		*out = append(*out, e)
		if depth > 1 && e.Type == TypeDirectory {
			if err := c.listInto(out, crel, cabs, depth-1); err != nil {
				return err
			}
		}
	}
	return nil
}

// mkdir makes p; with force its missing parents too (each with a's
// owner and mode), and an existing directory is then no error.
func (c *content) mkdir(p string, a Attrs, force bool) (Entry, error) {
	rel, abs, err := cleanPath(p)
	if err != nil {
		return Entry{}, err
	}
	if rel == "." {
		if force {
			return c.entry(rel, abs)
		}
		return Entry{}, errdefs.New(errdefs.ErrAlreadyExists, "path / already exists")
	}
	// Stat, not Lstat: a symlink to a directory inside is a parent too.
	fi, err := c.root.Stat(path.Dir(rel))
	switch {
	case err == nil && !fi.IsDir():
		return Entry{}, errdefs.New(errdefs.ErrConflict, fmt.Sprintf("path %s is not a directory", path.Dir(abs)))
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return Entry{}, classify(path.Dir(abs), err)
	}
	if err := c.mkdirOne(rel, a, force); err != nil {
		return Entry{}, err
	}
	return c.entry(rel, abs)
}

// mkdirOne makes rel; with parents, its missing parents first, and an
// existing directory at rel is no error.
func (c *content) mkdirOne(rel string, a Attrs, parents bool) error {
	abs := "/" + rel
	if rel == "." {
		return nil
	}
	if parents {
		if err := c.mkdirOne(path.Dir(rel), a, true); err != nil {
			return err
		}
	}
	mode, err := attrMode(a, 0o755)
	if err != nil {
		return err
	}
	err = c.root.Mkdir(rel, mode.Perm())
	if errors.Is(err, fs.ErrExist) && parents {
		fi, serr := c.root.Stat(rel)
		if serr != nil {
			return classify(abs, serr)
		}
		if fi.IsDir() {
			return nil
		}
		return errdefs.New(errdefs.ErrConflict, fmt.Sprintf("path %s exists and is not a directory", abs))
	}
	if err != nil {
		return classify(abs, err)
	}
	if err := c.applyAttrs(rel, abs, a, 0o755); err != nil {
		_ = c.root.Remove(rel) // not left half made
		return err
	}
	return nil
}

// applyAttrs sets a new file's owner (root unless a says) and mode
// (dflt unless a says: the mode given to create is cut by the umask).
func (c *content) applyAttrs(rel, abs string, a Attrs, dflt uint32) error {
	mode, err := attrMode(a, dflt)
	if err != nil {
		return err
	}
	fi, err := c.root.Lstat(rel)
	if err != nil {
		return classify(abs, err)
	}
	if uid, gid, ok := chownTo(fi, a); ok {
		if err := c.root.Lchown(rel, uid, gid); err != nil {
			return classify(abs, err)
		}
	}
	return classify(abs, c.root.Chmod(rel, mode))
}

func (c *content) setAttrs(p string, a Attrs) (Entry, error) {
	rel, abs, err := cleanPath(p)
	if err != nil {
		return Entry{}, err
	}
	e, err := c.entry(rel, abs)
	if err != nil {
		return Entry{}, err
	}
	if a.UID != nil || a.GID != nil {
		uid, gid := -1, -1
		if a.UID != nil {
			uid = int(*a.UID)
		}
		if a.GID != nil {
			gid = int(*a.GID)
		}
		if err := c.root.Lchown(rel, uid, gid); err != nil {
			return Entry{}, classify(abs, err)
		}
	}
	if a.Mode != nil {
		if e.Type == TypeSymlink {
			// chmod would change the file it points to.
			return Entry{}, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("path %s is a symlink, which has no mode of its own", abs))
		}
		mode, err := fileMode(*a.Mode)
		if err != nil {
			return Entry{}, err
		}
		if err := c.root.Chmod(rel, mode); err != nil {
			return Entry{}, classify(abs, err)
		}
	}
	return c.entry(rel, abs)
}

// remove removes p and everything under it; the root stays.
func (c *content) remove(p string) error {
	rel, abs, err := cleanPath(p)
	if err != nil {
		return err
	}
	if rel == "." {
		return errdefs.New(errdefs.ErrInvalidArgument, "the volume's root cannot be removed")
	}
	if _, err := c.root.Lstat(rel); err != nil {
		return classify(abs, err)
	}
	c.emptyFiles(rel)
	return classify(abs, c.root.RemoveAll(rel))
}

// open opens the regular file p. O_NONBLOCK: a FIFO a sandbox left there
// must not hang the request; it is refused below like any non-file.
func (c *content) open(p string) (io.ReadCloser, Entry, error) {
	rel, abs, err := cleanPath(p)
	if err != nil {
		return nil, Entry{}, err
	}
	f, err := c.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, Entry{}, classify(abs, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, Entry{}, classify(abs, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, Entry{}, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("path %s is not a file", abs))
	}
	return f, entryOf(abs, fi, ""), nil
}

func attrMode(a Attrs, dflt uint32) (fs.FileMode, error) {
	return fileMode(deref(a.Mode, dflt))
}

// chownTo returns the owner a new file must get, and false when it has
// it already: a new file is the server's (root's), and a chown to the
// owner it has would only cost a syscall (and fail when not root).
func chownTo(fi fs.FileInfo, a Attrs) (uid, gid int, ok bool) {
	uid, gid = int(deref(a.UID, 0)), int(deref(a.GID, 0))
	if st, isUnix := fi.Sys().(*syscall.Stat_t); isUnix && int(st.Uid) == uid && int(st.Gid) == gid {
		return uid, gid, false
	}
	return uid, gid, true
}

func deref(p *uint32, dflt uint32) uint32 {
	if p == nil {
		return dflt
	}
	return *p
}

func tempName(rel string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return path.Join(path.Dir(rel), ".warren-write-"+hex.EncodeToString(b[:]))
}

package layer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
)

// shortLen is how much of a key names its directory: short names kept
// stacks mountable before overlay.Mount named layers by descriptor, and
// existing stores depend on them. 80 bits keep accidental clashes out of
// reach and the full key, kept next to the directory, catches the rest.
const shortLen = 20

const (
	tmpPrefix = ".tmp-" // scratch dirs and files; anything with it is garbage at startup
	keySuffix = ".key"  // root/<short>.key holds the full key of root/<short>
)

// Store keeps complete layers as directories root/<short key>. A layer
// appears there only once fully written (by a rename), so every directory
// in the store is safe to mount.
type Store struct {
	root string

	mu       sync.Mutex
	inflight map[string]chan struct{} // short key -> closed when that Create ends
}

// NewStore opens (creating if needed) the store at root and removes what
// interrupted Creates and Removes left behind. That cleanup would also
// delete the scratch dirs of a live Store on the same root, so a process
// opens each root once and shares the *Store.
func NewStore(root string) (*Store, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("create layer store %s: %w", root, err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("read layer store %s: %w", root, err)
	}
	for _, e := range entries {
		stale := strings.HasPrefix(e.Name(), tmpPrefix)
		if short, ok := strings.CutSuffix(e.Name(), keySuffix); ok && !stale {
			// A key file whose layer never made it (or was half removed).
			_, err := os.Lstat(filepath.Join(root, short))
			stale = errors.Is(err, fs.ErrNotExist)
		}
		if !stale {
			continue
		}
		if err := forceRemoveAll(filepath.Join(root, e.Name())); err != nil {
			return nil, fmt.Errorf("clean layer store: %w", err)
		}
	}
	return &Store{root: root, inflight: make(map[string]chan struct{})}, nil
}

// ValidKey reports whether key can name a layer: lowercase hex, long enough
// for its short form to be unique in practice.
func ValidKey(key string) bool {
	if len(key) < shortLen || len(key) > 128 {
		return false
	}
	for _, c := range key {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func checkKey(key string) error {
	if !ValidKey(key) {
		return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("invalid layer key %q: want at least %d lowercase hex digits", key, shortLen))
	}
	return nil
}

// Path is the directory of the layer key, whether or not it exists yet;
// "" for an invalid key.
func (s *Store) Path(key string) string {
	if !ValidKey(key) {
		return ""
	}
	return filepath.Join(s.root, key[:shortLen])
}

func (s *Store) keyFile(key string) string {
	return filepath.Join(s.root, key[:shortLen]+keySuffix)
}

// Has reports whether the complete layer key is in the store.
func (s *Store) Has(key string) bool {
	if !ValidKey(key) {
		return false
	}
	st, err := os.Lstat(s.Path(key))
	return err == nil && st.IsDir() && s.owner(key) == key
}

// owner is the full key recorded for key's directory, "" if none.
func (s *Store) owner(key string) string {
	b, err := os.ReadFile(s.keyFile(key))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Create returns the directory of layer key, calling fill to write it if
// the store lacks it. fill writes into a scratch directory that becomes the
// layer only if fill succeeds; on failure nothing is left. A Create of a key
// that another Create is filling waits for it and then reuses its layer (or
// tries again itself if that one failed).
func (s *Store) Create(ctx context.Context, key string, fill func(dir string) error) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	short := key[:shortLen]
	for {
		s.mu.Lock()
		if s.Has(key) {
			s.mu.Unlock()
			return s.Path(key), nil
		}
		wait, busy := s.inflight[short]
		if !busy {
			done := make(chan struct{})
			s.inflight[short] = done
			s.mu.Unlock()
			p, err := s.create(ctx, key, fill)
			s.mu.Lock()
			delete(s.inflight, short)
			s.mu.Unlock()
			close(done)
			return p, err
		}
		s.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

func (s *Store) create(ctx context.Context, key string, fill func(dir string) error) (string, error) {
	tmp, err := os.MkdirTemp(s.root, tmpPrefix+key[:shortLen]+"-")
	if err != nil {
		return "", fsErr("create scratch dir in", s.root, err)
	}
	ok := false
	defer func() {
		if !ok {
			if err := forceRemoveAll(tmp); err != nil {
				log.G(ctx).Warn("layer store: cannot remove scratch dir", "dir", tmp, "err", err)
			}
		}
	}()
	// The layer root is the merged root when this layer is on top; an
	// image that does not say otherwise gets the usual 0755.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	if err := fill(tmp); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	// Flush before publishing: after a crash a layer must be whole or absent.
	if err := syncfs(tmp); err != nil {
		return "", fsErr("sync", tmp, err)
	}
	if err := s.publish(ctx, key, tmp); err != nil {
		return "", err
	}
	ok = true
	return s.Path(key), nil
}

// publish moves the filled scratch dir tmp to the layer's place.
func (s *Store) publish(ctx context.Context, key, tmp string) error {
	final := s.Path(key)
	if _, err := os.Lstat(final); err == nil {
		switch owner := s.owner(key); owner {
		case key:
			// Made meanwhile by another process: use that one.
			if err := forceRemoveAll(tmp); err != nil {
				log.G(ctx).Warn("layer store: cannot remove scratch dir", "dir", tmp, "err", err)
			}
			return nil
		case "":
			// Left without its key by a crash: not a layer anyone can use.
			if err := s.discard(final); err != nil {
				return err
			}
		default:
			return errdefs.New(errdefs.ErrConflict, fmt.Sprintf("layer %s clashes with layer %s in the store", key, owner))
		}
	}
	if err := writeFileAtomic(s.keyFile(key), []byte(key+"\n")); err != nil {
		return fsErr("write key of", final, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fsErr("publish", final, err)
	}
	return nil
}

// Remove deletes layer key. Sandboxes that still have it mounted keep
// working (the kernel holds the directory); new mounts will not find it.
func (s *Store) Remove(key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if !s.Has(key) {
		return errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("layer %s not found", key))
	}
	if err := s.discard(s.Path(key)); err != nil {
		return err
	}
	if err := os.Remove(s.keyFile(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove layer key %s: %w", key, err)
	}
	return nil
}

// discard renames dir aside first so that it stops being a layer at once,
// even if deleting its contents fails halfway.
func (s *Store) discard(dir string) error {
	aside, err := os.MkdirTemp(s.root, tmpPrefix+"rm-")
	if err != nil {
		return fsErr("remove", dir, err)
	}
	if err := os.Rename(dir, filepath.Join(aside, "layer")); err != nil {
		os.Remove(aside)
		return fsErr("remove", dir, err)
	}
	if err := forceRemoveAll(aside); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	return nil
}

// List returns the keys of all complete layers, sorted.
func (s *Store) List() ([]string, error) {
	entries, err := os.ReadDir(s.root)
	if err != nil {
		return nil, fmt.Errorf("read layer store: %w", err)
	}
	var keys []string
	for _, e := range entries {
		if !e.IsDir() || len(e.Name()) != shortLen || !ValidKey(e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.root, e.Name()+keySuffix))
		if key := strings.TrimSpace(string(b)); err == nil && ValidKey(key) && strings.HasPrefix(key, e.Name()) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// Size is the disk space layer key uses, in bytes: allocated blocks, each
// hardlinked inode counted once.
func (s *Store) Size(key string) (int64, error) {
	if err := checkKey(key); err != nil {
		return 0, err
	}
	if !s.Has(key) {
		return 0, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("layer %s not found", key))
	}
	var total int64
	seen := make(map[uint64]bool)
	err := filepath.WalkDir(s.Path(key), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			total += info.Size()
			return nil
		}
		if st.Nlink > 1 && !d.IsDir() {
			if seen[st.Ino] {
				return nil
			}
			seen[st.Ino] = true
		}
		total += st.Blocks * 512
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("size of layer %s: %w", key, err)
	}
	return total, nil
}

func syncfs(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Syncfs(fd)
}

func writeFileAtomic(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), tmpPrefix+"key-")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// forceRemoveAll is os.RemoveAll that also gets through directories an
// image made read-only, which stop a non-root owner from deleting entries.
func forceRemoveAll(p string) error {
	if err := os.RemoveAll(p); err == nil {
		return nil
	}
	_ = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(q, 0o700) // WalkDir reads a directory after this call
		}
		return nil
	})
	return os.RemoveAll(p)
}

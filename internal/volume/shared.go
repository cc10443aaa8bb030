package volume

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// Shared keeps each volume as a directory <shared>/volumes/<id>/data on
// the storage every node of a cluster mounts (--shared-dir), so a sandbox
// on any node mounts it. No loop device: two nodes mounting one ext4
// image would corrupt it. So the kernel does not cap a volume: the
// content API refuses writes past its size and a volume over it is
// refused new mounts, but inside a sandbox only the shared filesystem's
// own quotas, if any, stop a writer. The size is kept beside the data
// (<id>/size) so that every node reads the same one.
type Shared struct {
	root string // <shared>/volumes
}

var _ Backend = (*Shared)(nil)

// NewShared keeps volumes under sharedDir/volumes (made if missing).
func NewShared(sharedDir string) (*Shared, error) {
	root := filepath.Join(sharedDir, "volumes")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("creating the volumes directory: %w", err)
	}
	return &Shared{root: root}, nil
}

// Capped is false: see Shared.
func (s *Shared) Capped() bool { return false }

// Create makes the volume's directory, its size file and its root.
func (s *Shared) Create(_ context.Context, id string, sizeMB int) error {
	if err := checkID(id); err != nil {
		return err
	}
	if sizeMB < 1 {
		return errdefs.New(errdefs.ErrInvalidArgument, "a volume's size must be at least 1 MB")
	}
	dir := filepath.Join(s.root, id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errdefs.New(errdefs.ErrAlreadyExists, fmt.Sprintf("volume %s already exists", id))
		}
		return fmt.Errorf("volume %s: %w", id, err)
	}
	err := os.WriteFile(filepath.Join(dir, "size"), []byte(strconv.Itoa(sizeMB)+"\n"), 0o600)
	if err == nil {
		_, err = dataDir(dir)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return fmt.Errorf("volume %s: %w", id, err)
	}
	return nil
}

// Path returns the volume's root.
func (s *Shared) Path(_ context.Context, id string) (string, error) {
	if err := checkID(id); err != nil {
		return "", err
	}
	data := filepath.Join(s.root, id, "data")
	fi, err := os.Lstat(data)
	if errors.Is(err, fs.ErrNotExist) {
		return "", errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("volume %s has no data on the shared storage", id))
	}
	if err != nil {
		return "", fmt.Errorf("volume %s: %w", id, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("volume %s: its root %s is not a directory", id, data)
	}
	return data, nil
}

// Usage walks the tree, adding up the blocks each file takes: there is
// no cheaper count of one directory on a shared filesystem.
func (s *Shared) Usage(ctx context.Context, id string) (used, size int64, err error) {
	data, err := s.Path(ctx, id)
	if err != nil {
		return 0, 0, err
	}
	b, err := os.ReadFile(filepath.Join(s.root, id, "size"))
	if err != nil {
		return 0, 0, fmt.Errorf("volume %s: reading its size: %w", id, err)
	}
	mb, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, 0, fmt.Errorf("volume %s: reading its size: %w", id, err)
	}
	err = filepath.WalkDir(data, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			used += st.Blocks * 512
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("volume %s: measuring it: %w", id, err)
	}
	return used, int64(mb) << 20, nil
}

// Delete removes the volume's directory; nothing there is no error.
func (s *Shared) Delete(_ context.Context, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(s.root, id)); err != nil {
		return fmt.Errorf("volume %s: %w", id, err)
	}
	return nil
}

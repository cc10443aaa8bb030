package volume

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/loopfs"
)

// Local keeps each volume on one machine as a sparse ext4 image
// <dir>/<id>.img of the volume's size, loop-mounted at <dir>/<id>.mnt.
// The kernel holds every writer, sandbox or content API, to the size
// (ENOSPC) and the image never grows past it on the host. The root is
// <dir>/<id>.mnt/data, which hides ext4's lost+found. An image is mounted
// on first use and stays mounted: a restarted server finds the mount and
// reuses it, and after a host reboot the first use mounts it again.
type Local struct {
	dir string
	// mu serialises the check-then-mount of Path against Delete, so two
	// callers never mount one image twice.
	mu sync.Mutex
}

var _ Backend = (*Local)(nil)

// NewLocal keeps volumes under dir (made if missing). It needs root, a
// loop device and mkfs.ext4, as sandboxes' limited disks do.
func NewLocal(dir string) (*Local, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the volumes directory: %w", err)
	}
	return &Local{dir: dir}, nil
}

// Capped is true: the filesystem is the volume's size.
func (l *Local) Capped() bool { return true }

func (l *Local) files(id string) (img, mnt string) {
	return filepath.Join(l.dir, id+".img"), filepath.Join(l.dir, id+".mnt")
}

// Create formats the image and mounts it.
func (l *Local) Create(ctx context.Context, id string, sizeMB int) error {
	if err := checkID(id); err != nil {
		return err
	}
	if sizeMB < 1 {
		return errdefs.New(errdefs.ErrInvalidArgument, "a volume's size must be at least 1 MB")
	}
	img, _ := l.files(id)
	if _, err := os.Lstat(img); err == nil {
		return errdefs.New(errdefs.ErrAlreadyExists, fmt.Sprintf("volume %s already exists", id))
	}
	if err := loopfs.MakeImage(img, sizeMB, loopfs.Durable); err != nil {
		return fmt.Errorf("volume %s: %w", id, err)
	}
	if _, err := l.Path(ctx, id); err != nil {
		_ = l.Delete(ctx, id)
		return err
	}
	return nil
}

// Path mounts the image unless it is mounted and returns its data dir.
func (l *Local) Path(_ context.Context, id string) (string, error) {
	if err := checkID(id); err != nil {
		return "", err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	img, mnt := l.files(id)
	if _, err := os.Stat(img); errors.Is(err, fs.ErrNotExist) {
		return "", errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("volume %s has no data on this machine", id))
	} else if err != nil {
		return "", fmt.Errorf("volume %s: %w", id, err)
	}
	if err := os.Mkdir(mnt, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("creating the mount point of volume %s: %w", id, err)
	}
	mounted, err := mountinfo.Mounted(mnt)
	if err != nil {
		return "", fmt.Errorf("volume %s: %w", id, err)
	}
	if !mounted {
		// nosuid and nodev: a sandbox must not plant a setuid binary or
		// a device node that means something on the host.
		if err := loopfs.Mount(img, mnt, unix.MS_NOSUID|unix.MS_NODEV); err != nil {
			return "", fmt.Errorf("volume %s: %w", id, err)
		}
	}
	return dataDir(mnt)
}

// dataDir makes (once) and returns the volume's root under mnt. It is
// open to every user: sandboxes run their commands as an unprivileged
// user, who must be able to write to a volume mounted for them.
func dataDir(mnt string) (string, error) {
	data := filepath.Join(mnt, "data")
	if err := os.Mkdir(data, 0o777); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return data, nil
		}
		return "", fmt.Errorf("creating a volume's root: %w", err)
	}
	if err := os.Chmod(data, 0o777); err != nil { // past the umask
		return "", fmt.Errorf("creating a volume's root: %w", err)
	}
	return data, nil
}

// Usage reads the filesystem's own counts: cheap, whatever the tree.
func (l *Local) Usage(ctx context.Context, id string) (used, size int64, err error) {
	data, err := l.Path(ctx, id)
	if err != nil {
		return 0, 0, err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(data, &st); err != nil {
		return 0, 0, fmt.Errorf("volume %s: %w", id, err)
	}
	img, _ := l.files(id)
	fi, err := os.Stat(img)
	if err != nil {
		return 0, 0, fmt.Errorf("volume %s: %w", id, err)
	}
	return int64(st.Blocks-st.Bfree) * st.Bsize, fi.Size(), nil
}

// Delete unmounts the image (lazily while a sandbox still holds it: its
// data goes when the last user does) and removes the image and mount
// point.
func (l *Local) Delete(_ context.Context, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	img, mnt := l.files(id)
	if err := unmount(mnt); err != nil {
		return fmt.Errorf("volume %s: %w", id, err)
	}
	if err := os.Remove(mnt); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("volume %s: %w", id, err)
	}
	if err := os.Remove(img); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("volume %s: %w", id, err)
	}
	return nil
}

// unmount unmounts mnt if it is a mount point, detaching it when busy.
func unmount(mnt string) error {
	mounted, err := mountinfo.Mounted(mnt)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !mounted) {
		return nil
	}
	if err != nil {
		return err
	}
	err = unix.Unmount(mnt, 0)
	if errors.Is(err, unix.EBUSY) {
		err = unix.Unmount(mnt, unix.MNT_DETACH)
	}
	if err != nil {
		return fmt.Errorf("unmounting %s: %w", mnt, err)
	}
	return nil
}

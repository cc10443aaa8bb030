package filesystem

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/warren-sandbox/warren/internal/envd/users"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// Chown hands path to the user. A non-root envd (tests) cannot chown and
// only ever acts as itself, so it skips the call.
func Chown(path string, u *users.User) error {
	if os.Geteuid() != 0 {
		return nil
	}
	if err := os.Lchown(path, int(u.UID), int(u.GID)); err != nil {
		return fmt.Errorf("chown %s: %w", path, err)
	}
	return nil
}

// MkdirAllOwned creates dir and any missing parents, handing each directory
// it creates (and only those) to the user. A non-directory in the way is
// errdefs.ErrInvalidArgument.
func MkdirAllOwned(dir string, u *users.User) error {
	dir = filepath.Clean(dir)
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("path '%s' exists but is not a directory", dir))
		}
		return nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		if errors.Is(err, syscall.ENOTDIR) {
			return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("a parent of '%s' is not a directory", dir))
		}
		return fmt.Errorf("stat %s: %w", dir, err)
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := MkdirAllOwned(parent, u); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil // created concurrently
		}
		return fmt.Errorf("creating directory %s: %w", dir, err)
	}
	return Chown(dir, u)
}

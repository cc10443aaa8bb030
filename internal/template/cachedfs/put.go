package cachedfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
)

// PutFile replaces name with a regular file holding data and mode.
func PutFile(r *os.Root, name string, data []byte, mode fs.FileMode) error {
	if err := r.MkdirAll(path.Dir(name), 0o755); err != nil {
		return fmt.Errorf("creating /%s: %w", path.Dir(name), err)
	}
	if err := r.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("replacing /%s: %w", name, err)
	}
	f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("writing /%s: %w", name, err)
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("writing /%s: %w", name, err)
	}
	// OpenFile's mode passes through the umask; set it exactly.
	if err := r.Chmod(name, mode); err != nil {
		return fmt.Errorf("setting mode of /%s: %w", name, err)
	}
	return nil
}

// PutSymlink replaces name with a symbolic link to target, which is read
// inside the sandbox (an absolute target is relative to its root).
func PutSymlink(r *os.Root, name, target string) error {
	if err := r.MkdirAll(path.Dir(name), 0o755); err != nil {
		return fmt.Errorf("creating /%s: %w", path.Dir(name), err)
	}
	if err := r.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("replacing /%s: %w", name, err)
	}
	if err := r.Symlink(target, name); err != nil {
		return fmt.Errorf("linking /%s: %w", name, err)
	}
	return nil
}

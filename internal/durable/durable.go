// Package durable writes files that another machine reads after this one
// may have died (a sandbox parked on a cluster's shared storage, and its
// copies on the node that takes it over): each file is created anew and
// synced before it is closed, so a reader finds it whole or not at all
// once its directory is renamed into place.
package durable

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFile creates path, which must not exist, fills it with fill and
// syncs it.
func WriteFile(path string, fill func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	err = fill(f)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// CopyDir copies the regular files of the flat directory src (a memory
// image) into the new directory dst, each as WriteFile writes it. Hard
// links would be free, but cannot cross filesystems.
func CopyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", filepath.Join(src, e.Name()))
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return WriteFile(dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}

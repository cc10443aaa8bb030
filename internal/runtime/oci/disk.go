package oci

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// diskUsage sums the blocks allocated to everything under dir (the
// sandbox's writable layer), counting hard-linked files once.
func diskUsage(dir string) (uint64, error) {
	var total uint64
	seen := map[uint64]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		if st.Nlink > 1 && !d.IsDir() {
			if seen[st.Ino] {
				return nil
			}
			seen[st.Ino] = true
		}
		total += uint64(st.Blocks) * 512
		return nil
	})
	return total, err
}

// fsSize is the size in bytes of the filesystem holding dir.
func fsSize(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Blocks * uint64(st.Bsize), nil
}

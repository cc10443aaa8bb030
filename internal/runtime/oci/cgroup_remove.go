package oci

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// removeTree empties and removes one cgroup directory and its children.
func removeTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading cgroup %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := removeTree(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	thaw(dir)
	deadline := time.Now().Add(5 * time.Second)
	for {
		killAll(dir)
		err := unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		// EBUSY until the killed tasks are reaped.
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("removing cgroup %s: %w", dir, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// thaw unfreezes the cgroup, if it has a freezer (v1 freezer.state, v2
// cgroup.freeze); errors mean there is no freezer here.
func thaw(dir string) {
	_ = os.WriteFile(filepath.Join(dir, "freezer.state"), []byte("THAWED"), 0)
	_ = os.WriteFile(filepath.Join(dir, "cgroup.freeze"), []byte("0"), 0)
}

// hasProcs reports whether any process is in the cgroup (children
// included: cgroup.procs lists only the cgroup's own).
func hasProcs(dir string) bool {
	found := false
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || found || !d.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		found = len(bytes.TrimSpace(data)) > 0
		return nil
	})
	return found
}

// killTree runs killAll on dir and every cgroup below it.
func killTree(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			killAll(p)
		}
		return nil
	})
}

// killAll sends SIGKILL to every process in the cgroup. On v2, cgroup.kill
// does it atomically (no fork race); elsewhere it is one pid at a time.
func killAll(dir string) {
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err == nil {
		return
	}
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, line := range bytes.Fields(data) {
		if pid, err := strconv.Atoi(string(line)); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

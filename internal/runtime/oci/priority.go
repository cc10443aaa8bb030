package oci

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// A background sandbox (runtime.Spec.Background) boots with the fewest CPU
// shares of its cgroup and its runtime under nice 19, so it runs on CPU
// that no other sandbox, create or warren itself wants. Foreground undoes
// both. Nice is per thread on Linux and inherited at fork and clone, so
// every thread the sandbox has must be reniced, not only its processes.
const (
	backgroundShares = 2
	defaultSharesV1  = 1024 // cpu.shares a cgroup v1 group is created with
	defaultWeightV2  = 100  // cpu.weight likewise on cgroup v2
)

// Foreground implements runtime.Backend.Foreground.
func (b *Backend) Foreground(ctx context.Context, id string) error {
	if err := validID(id); err != nil {
		return err
	}
	unlock := b.locks.lock(id)
	defer unlock()
	dir := b.dir(id)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("sandbox %s: %w", id, errdefs.ErrNotFound)
	}
	// The bundle first: a later Start (after a pause without memory, say)
	// creates the cgroup again from it.
	if err := foregroundSpec(dir); err != nil {
		return err
	}
	cpu := b.cg.controllerDir("cpu", b.cgroupPath(id))
	if cpu == "" {
		return nil // no cpu controller: shares never applied
	}
	file, value, threads := "cpu.shares", defaultSharesV1, "tasks"
	if b.cg.v2 {
		file, value, threads = "cpu.weight", defaultWeightV2, "cgroup.threads"
	}
	if err := os.WriteFile(filepath.Join(cpu, file), []byte(strconv.Itoa(value)), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("sandbox %s: raising its CPU priority: %w", id, err)
	}
	return renice(filepath.Join(cpu, threads))
}

// renice gives every thread listed in a cgroup's tasks file nice 0. A
// thread created meanwhile inherits the nice of its creator, which may not
// have been reniced yet: the file is read again until it lists no new one.
func renice(tasksFile string) error {
	done := map[int]bool{}
	for range 5 {
		data, err := os.ReadFile(tasksFile)
		if errors.Is(err, os.ErrNotExist) {
			return nil // the sandbox stopped: nothing left to renice
		}
		if err != nil {
			return fmt.Errorf("listing the sandbox's threads: %w", err)
		}
		fresh := 0
		for _, f := range strings.Fields(string(data)) {
			tid, err := strconv.Atoi(f)
			if err != nil || done[tid] {
				continue
			}
			done[tid] = true
			fresh++
			if err := unix.Setpriority(unix.PRIO_PROCESS, tid, 0); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("renicing thread %d: %w", tid, err)
			}
		}
		if fresh == 0 {
			return nil
		}
	}
	return nil
}

// foregroundSpec drops the background CPU shares from the bundle's config.
func foregroundSpec(dir string) error {
	return editSpec(dir, func(s *specs.Spec) bool {
		if s.Linux == nil || s.Linux.Resources == nil || s.Linux.Resources.CPU == nil || s.Linux.Resources.CPU.Shares == nil {
			return false
		}
		s.Linux.Resources.CPU.Shares = nil
		return true
	})
}

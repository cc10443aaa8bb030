package oci

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// cgroups describes the host's cgroup hierarchies: pure v2 (unified), or v1
// (possibly "hybrid", with an extra controller-less v2 mount that runtimes
// also place containers in). The runtimes create a sandbox's cgroup at the
// absolute cgroupsPath below every hierarchy's mount point.
type cgroups struct {
	v2      bool              // the host runs the unified hierarchy only
	unified string            // the cgroup2 mount point, "" if none
	v1      map[string]string // v1 controller (or name=...) -> mount point
}

// detectCgroups reads the hierarchies from /proc/self/mountinfo.
func detectCgroups() (*cgroups, error) {
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err != nil {
		return nil, fmt.Errorf("statfs /sys/fs/cgroup: %w", err)
	}
	cg := &cgroups{v2: st.Type == unix.CGROUP2_SUPER_MAGIC, v1: map[string]string{}}
	mounts, err := mountinfo.GetMounts(mountinfo.FSTypeFilter("cgroup", "cgroup2"))
	if err != nil {
		return nil, fmt.Errorf("reading mountinfo: %w", err)
	}
	for _, m := range mounts {
		cg.addMount(m)
	}
	if cg.v2 && cg.unified == "" {
		cg.unified = "/sys/fs/cgroup"
	}
	if missing := cg.missing(sandboxControllers); len(missing) > 0 {
		// Else the server would start and report healthy, and every
		// create fail in runc ("no cgroup mount found in mountinfo").
		return nil, fmt.Errorf("cgroup controllers %s are not mounted under /sys/fs/cgroup in this mount namespace "+
			"(a wrapper that remounts /sys, such as `ip netns exec`, hides the host's cgroup hierarchy; "+
			"use `nsenter --net=…` or mount it): %w", strings.Join(missing, ", "), errdefs.ErrUnavailable)
	}
	return cg, nil
}

// sandboxControllers are the controllers every sandbox's limits use.
var sandboxControllers = []string{"cpu", "memory", "pids"}

// missing lists the controllers of want that no mounted hierarchy offers:
// on v2 those absent from the root's cgroup.controllers (a cgroup2 mounted
// on a v1 host has none), on v1 those without a hierarchy of their own.
func (cg *cgroups) missing(want []string) []string {
	have := cg.v1
	if cg.v2 {
		have = map[string]string{}
		b, _ := os.ReadFile(filepath.Join(cg.unified, "cgroup.controllers"))
		for _, c := range strings.Fields(string(b)) {
			have[c] = cg.unified
		}
	}
	var out []string
	for _, c := range want {
		if _, ok := have[c]; !ok {
			out = append(out, c)
		}
	}
	return out
}

// addMount records a mount if it is a cgroup hierarchy; a v1 hierarchy's
// controllers are among its superblock options.
func (cg *cgroups) addMount(m *mountinfo.Info) {
	mp := m.Mountpoint
	switch m.FSType {
	case "cgroup2":
		if cg.unified == "" {
			cg.unified = mp
		}
	case "cgroup":
		for _, opt := range strings.Split(m.VFSOptions, ",") {
			if opt == "rw" || opt == "ro" || strings.HasPrefix(opt, "release_agent") || opt == "clone_children" || opt == "noprefix" || opt == "xattr" {
				continue
			}
			if _, dup := cg.v1[opt]; !dup {
				cg.v1[opt] = mp
			}
		}
	}
}

// dirs lists the existing directories of cgroup path in every hierarchy.
func (cg *cgroups) dirs(path string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(mp string) {
		d := filepath.Join(mp, path)
		if seen[d] {
			return
		}
		seen[d] = true
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	if cg.unified != "" {
		add(cg.unified)
	}
	for _, mp := range cg.v1 {
		add(mp)
	}
	return out
}

// controllerDir is where a v1 controller's (or, on v2, the unified) files
// for path live; "" when the controller is not mounted.
func (cg *cgroups) controllerDir(controller, path string) string {
	if cg.v2 {
		return filepath.Join(cg.unified, path)
	}
	mp, ok := cg.v1[controller]
	if !ok {
		return ""
	}
	return filepath.Join(mp, path)
}

// swapAccounting reports whether memory+swap can be limited.
func (cg *cgroups) swapAccounting() bool {
	if cg.v2 {
		_, err := os.Stat(filepath.Join(cg.unified, "memory.swap.max"))
		if err == nil {
			return true
		}
		// The root cgroup has no memory.swap.max; look at any child.
		matches, _ := filepath.Glob(filepath.Join(cg.unified, "*", "memory.swap.max"))
		return len(matches) > 0
	}
	mp, ok := cg.v1["memory"]
	if !ok {
		return false
	}
	_, err := os.Stat(filepath.Join(mp, "memory.memsw.limit_in_bytes"))
	return err == nil
}

// kill thaws cgroup path and SIGKILLs everything in it, in every hierarchy,
// then waits until no process is left (or timeout passes).
func (cg *cgroups) kill(path string, timeout time.Duration) error {
	dirs := cg.dirs(path)
	for _, d := range dirs {
		thaw(d)
	}
	deadline := time.Now().Add(timeout)
	for {
		busy := ""
		for _, d := range dirs {
			if hasProcs(d) {
				killTree(d)
				busy = d
			}
		}
		if busy == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes left in cgroup %s after %v", busy, timeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// remove kills whatever still runs in cgroup path (thawing it first: a
// frozen task never dies) and removes its directories in every hierarchy,
// children first. Missing directories are fine.
func (cg *cgroups) remove(path string) error {
	var errs []error
	for _, d := range cg.dirs(path) {
		if err := removeTree(d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

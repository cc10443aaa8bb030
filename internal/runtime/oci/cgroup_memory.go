package oci

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// sentryHeadroom is the host memory a runsc sandbox may use beyond the
// memory its applications see. gVisor's Sentry takes MemTotal from the
// cgroup limit at boot, and its own heap, page tables and mapped binary
// (about 70 MB with a hundred tasks) count in the same cgroup. With the
// host limit equal to MemTotal, a sandbox whose applications fill memory
// reaches the host's OOM killer, which kills the whole Sentry, before envd's
// OOM guard (which keeps a sixth of MemTotal free) can kill the culprit
// inside. Raising the host limit after boot keeps what the sandbox sees and
// gives the guard its margin.
func sentryHeadroom(memoryMB int) uint64 {
	return uint64(96+memoryMB/8) << 20
}

// raiseMemoryLimit sets the memory limit of a sandbox's cgroup, just booted
// or restored with its bundle's limit, to that limit plus the Sentry's
// headroom (runsc only).
func (b *Backend) raiseMemoryLimit(dir, id string) error {
	if b.name != Runsc {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, configFile))
	if err != nil {
		return fmt.Errorf("reading the bundle of sandbox %s: %w", id, err)
	}
	var spec specs.Spec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("parsing the bundle of sandbox %s: %w", id, err)
	}
	if spec.Linux == nil || spec.Linux.Resources == nil || spec.Linux.Resources.Memory == nil ||
		spec.Linux.Resources.Memory.Limit == nil || *spec.Linux.Resources.Memory.Limit <= 0 {
		return nil
	}
	mem := uint64(*spec.Linux.Resources.Memory.Limit)
	limit := mem + sentryHeadroom(int(mem>>20))
	if err := b.cg.setMemoryLimit(b.cgroupPath(id), limit, b.swap); err != nil {
		return fmt.Errorf("giving sandbox %s its Sentry's memory headroom: %w", id, err)
	}
	return nil
}

// setMemoryLimit raises path's memory limit (and, with swap accounting,
// memory+swap to the same value, so there is still no swap). On v1 the
// memory+swap limit must never be below the memory limit, so it goes first.
func (cg *cgroups) setMemoryLimit(path string, limit uint64, swap bool) error {
	v := strconv.FormatUint(limit, 10)
	if cg.v2 {
		return writeCgroupFile(filepath.Join(cg.unified, path), "memory.max", v)
	}
	dir := cg.controllerDir("memory", path)
	if dir == "" {
		return fmt.Errorf("no v1 memory controller")
	}
	if swap {
		if err := writeCgroupFile(dir, "memory.memsw.limit_in_bytes", v); err != nil {
			return err
		}
	}
	return writeCgroupFile(dir, "memory.limit_in_bytes", v)
}

func writeCgroupFile(dir, name, value string) error {
	if err := os.WriteFile(filepath.Join(dir, name), []byte(value), 0); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

// oomKills is how many processes the kernel's OOM killer has killed in
// cgroup path (0 when unknown or the cgroup is gone).
func (cg *cgroups) oomKills(path string) uint64 {
	name := "memory.events"
	dir := filepath.Join(cg.unified, path)
	if !cg.v2 {
		name, dir = "memory.oom_control", cg.controllerDir("memory", path)
		if dir == "" {
			return 0
		}
	}
	kv, err := readKeyValues(filepath.Join(dir, name))
	if err != nil {
		return 0
	}
	return kv["oom_kill"]
}

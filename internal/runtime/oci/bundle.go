package oci

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/warren-sandbox/warren/internal/runtime"
)

// ociVersion is the spec version we write: the newest both runc 1.1 and
// current runsc accept without complaint; we use no later fields.
const ociVersion = "1.0.2"

// bundleParams is everything buildSpec needs beyond the runtime.Spec.
type bundleParams struct {
	spec       runtime.Spec // normalised: defaults applied
	rootfs     string       // merged overlay mount
	netnsPath  string
	cgroupPath string // e.g. /warren/<id>
	seccomp    bool   // include the seccomp profile
	tmpBind    bool   // bind the rootfs's /tmp over /tmp (runsc: see tmpdir.go)
	nproc      uint64 // RLIMIT_NPROC for the init and its children; 0: none
	swap       bool   // the host accounts swap: limit memory+swap too
	// initOOM is the init's oom_score_adj (see Backend.initOOMScoreAdj).
	initOOM int
}

// buildSpec assembles the OCI config for one sandbox.
func buildSpec(p bundleParams) *specs.Spec {
	s := p.spec
	mounts := append(defaultMounts(), bindMounts(s.Binds)...)
	if p.tmpBind {
		mounts = append(mounts, tmpMount(p.rootfs))
	}
	// After /tmp's bind, so that a volume below /tmp lands on it.
	mounts = append(mounts, volumeMounts(s.Mounts)...)
	linux := &specs.Linux{
		Namespaces: []specs.LinuxNamespace{
			{Type: specs.PIDNamespace},
			{Type: specs.IPCNamespace},
			{Type: specs.UTSNamespace},
			{Type: specs.MountNamespace},
			{Type: specs.NetworkNamespace, Path: p.netnsPath},
			{Type: specs.CgroupNamespace},
		},
		CgroupsPath:   p.cgroupPath,
		Resources:     resources(s.Resources, s.Background, p.swap),
		MaskedPaths:   maskedPaths,
		ReadonlyPaths: readonlyPaths,
		Sysctl: map[string]string{
			// As Docker: any user may bind low ports and ping, so user
			// code behaves as on a normal machine without extra caps.
			"net.ipv4.ip_unprivileged_port_start": "0",
			"net.ipv4.ping_group_range":           "0 2147483647",
		},
	}
	if p.seccomp {
		linux.Seccomp = seccompProfile()
	}
	process := initProcess(s.Init)
	process.OOMScoreAdj = &p.initOOM
	if p.nproc > 0 {
		process.Rlimits = append(process.Rlimits, specs.POSIXRlimit{Type: "RLIMIT_NPROC", Hard: p.nproc, Soft: p.nproc})
	}
	return &specs.Spec{
		Version:  ociVersion,
		Process:  process,
		Root:     &specs.Root{Path: p.rootfs},
		Hostname: s.Hostname,
		Mounts:   mounts,
		Linux:    linux,
	}
}

// resources converts limits (already defaulted) to the OCI form: a CFS
// quota of CPUCount whole CPUs per 100ms period, a memory limit with no
// extra swap, and a pids limit. A background sandbox gets the fewest CPU
// shares there are (2, which cgroup v2 runtimes turn into weight 1).
func resources(r runtime.Resources, background, swap bool) *specs.LinuxResources {
	mem := int64(r.MemoryMB) << 20
	period := uint64(100000)
	quota := int64(r.CPUCount) * int64(period)
	pids := int64(r.PidsLimit)
	res := &specs.LinuxResources{
		Devices: deviceRules(),
		CPU:     &specs.LinuxCPU{Period: &period, Quota: &quota},
		Memory:  &specs.LinuxMemory{Limit: &mem},
		Pids:    &specs.LinuxPids{Limit: &pids},
	}
	if background {
		shares := uint64(backgroundShares)
		res.CPU.Shares = &shares
	}
	if swap {
		// memory+swap == memory: the sandbox gets no swap at all.
		res.Memory.Swap = &mem
	}
	return res
}

// editSpec reads the bundle's config.json, lets fn change it, and writes
// it back if fn says it did.
func editSpec(dir string, fn func(*specs.Spec) bool) error {
	data, err := os.ReadFile(filepath.Join(dir, configFile))
	if err != nil {
		return fmt.Errorf("reading OCI config: %w", err)
	}
	var s specs.Spec
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("decoding OCI config: %w", err)
	}
	if !fn(&s) {
		return nil
	}
	return writeSpec(dir, &s)
}

// writeSpec writes config.json into the bundle dir.
func writeSpec(dir string, s *specs.Spec) error {
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encoding OCI config: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, configFile), data, 0o600); err != nil {
		return fmt.Errorf("writing OCI config: %w", err)
	}
	return nil
}

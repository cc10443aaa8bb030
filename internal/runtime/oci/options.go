package oci

import (
	"fmt"
	"path/filepath"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/network"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// The runtimes this backend drives.
const (
	Runc  = "runc"
	Runsc = "runsc"
)

// Options configure a Backend.
type Options struct {
	// Runtime is Runc or Runsc.
	Runtime string
	// Binary is the runtime's executable; default: Runtime looked up in PATH.
	Binary string
	// StateRoot holds one state dir per sandbox; it belongs to this backend
	// alone. Default /var/lib/warren/sandboxes/<Runtime>.
	StateRoot string
	// RunRoot holds the runtime's own state, in <RunRoot>/<Runtime>.
	// Default /run/warren.
	RunRoot string
	// Network attaches sandboxes to the host bridge. Required.
	Network *network.Manager
	// CgroupParent is the cgroup under which each sandbox gets <id>.
	// Default /warren.
	CgroupParent string
	// Defaults replace zero fields of a Spec's Resources. Zero fields here
	// take DefaultResources'.
	Defaults runtime.Resources
	// DiskQuota gives every sandbox a filesystem of Resources.DiskMB for
	// its writable layer (quota.go), so it cannot fill the host's disk.
	DiskQuota bool
	// RunscFlags are extra global flags for runsc (e.g. --debug,
	// --debug-log=/tmp/runsc/), after the backend's own.
	RunscFlags []string
	// EagerRestore makes runsc read a sandbox's whole memory image before
	// a restore returns, as warren did before restores loaded pages in the
	// background (see memflags.go): for comparison, or for an image disk
	// too slow to page from while the sandbox runs.
	EagerRestore bool
}

// DefaultResources are the limits of a sandbox whose Spec leaves them zero.
var DefaultResources = runtime.Resources{CPUCount: 2, MemoryMB: 512, PidsLimit: 1024}

func (o Options) withDefaults() (Options, error) {
	if o.Runtime != Runc && o.Runtime != Runsc {
		return o, fmt.Errorf("runtime %q: want %q or %q: %w", o.Runtime, Runc, Runsc, errdefs.ErrInvalidArgument)
	}
	if o.Network == nil {
		return o, fmt.Errorf("oci backend needs a network manager: %w", errdefs.ErrInvalidArgument)
	}
	if o.Binary == "" {
		o.Binary = o.Runtime
	}
	if o.StateRoot == "" {
		o.StateRoot = filepath.Join("/var/lib/warren/sandboxes", o.Runtime)
	}
	if o.RunRoot == "" {
		o.RunRoot = "/run/warren"
	}
	if o.CgroupParent == "" {
		o.CgroupParent = "/warren"
	}
	for _, p := range []string{o.StateRoot, o.RunRoot, o.CgroupParent} {
		if !filepath.IsAbs(p) {
			return o, fmt.Errorf("path %q must be absolute: %w", p, errdefs.ErrInvalidArgument)
		}
	}
	o.StateRoot, o.RunRoot, o.CgroupParent = filepath.Clean(o.StateRoot), filepath.Clean(o.RunRoot), filepath.Clean(o.CgroupParent)
	o.Defaults = fillResources(o.Defaults, DefaultResources)
	return o, nil
}

// runtimeRoot is the runtime's --root.
func (o Options) runtimeRoot() string { return filepath.Join(o.RunRoot, o.Runtime) }

// rootGuard is the guard of runsc's lock files in its root; runc needs none.
func (o Options) rootGuard() *rootGuard {
	if o.Runtime != Runsc {
		return nil
	}
	return &rootGuard{dir: o.runtimeRoot()}
}

// globalFlags are passed before every subcommand, after --root.
func (o Options) globalFlags() []string {
	var flags []string
	if o.Runtime == Runsc {
		flags = append(flags,
			"--platform=systrap",
			// gVisor's netstack takes over the veth in the sandbox netns.
			"--network=sandbox",
			// sudo is how the sandbox's `user` becomes root, as on E2B.
			// gVisor ignores set-user-ID bits unless told otherwise; the
			// bundle's no_new_privileges would still forbid it.
			"--allow-suid",
			// No gVisor-internal overlay: writes land in our overlay's upper
			// dir, where Stats measures them and Destroy removes them.
			"--overlay2=none",
		)
		flags = append(flags, o.RunscFlags...)
	}
	return flags
}

// fillResources replaces zero fields of r with d's.
func fillResources(r, d runtime.Resources) runtime.Resources {
	if r.CPUCount == 0 {
		r.CPUCount = d.CPUCount
	}
	if r.MemoryMB == 0 {
		r.MemoryMB = d.MemoryMB
	}
	if r.PidsLimit == 0 {
		r.PidsLimit = d.PidsLimit
	}
	if r.DiskMB == 0 {
		r.DiskMB = d.DiskMB
	}
	return r
}

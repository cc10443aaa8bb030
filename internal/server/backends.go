package server

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"github.com/warren-sandbox/warren/internal/network"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/runtime/oci"
)

// backendKind is one runtime warren can run sandboxes on. Adding a backend
// is a row in backendKinds.
type backendKind struct {
	name   string // as templates and --runtime name it
	binary string // looked up on PATH; a missing one disables the backend
	open   func(ctx context.Context, cfg *Config, bin string, netMgr *network.Manager) (runtime.Backend, error)
}

// backendKinds are the backends a server offers, each when its binary is
// installed.
var backendKinds = []backendKind{
	{name: "runc", binary: "runc", open: openOCI("runc")},
	{name: "runsc", binary: "runsc", open: openOCI("runsc")},
}

// openOCI opens the oci backend driving the named OCI runtime, with its
// state under the data dir.
func openOCI(name string) func(context.Context, *Config, string, *network.Manager) (runtime.Backend, error) {
	return func(ctx context.Context, cfg *Config, bin string, netMgr *network.Manager) (runtime.Backend, error) {
		return oci.New(ctx, oci.Options{
			Runtime:      name,
			Binary:       bin,
			StateRoot:    filepath.Join(cfg.DataDir, "sandboxes", name),
			RunRoot:      runRoot(cfg.DataDir),
			CgroupParent: cgroupParent(cfg),
			Network:      netMgr,
			DiskQuota:    cfg.DiskQuota,
			RunscFlags:   cfg.RunscFlags,
			EagerRestore: cfg.RunscEagerRestore,
		})
	}
}

func backendByName(name string) *backendKind {
	i := slices.IndexFunc(backendKinds, func(k backendKind) bool { return k.name == name })
	if i < 0 {
		return nil
	}
	return &backendKinds[i]
}

func backendNames() string {
	names := make([]string, len(backendKinds))
	for i, k := range backendKinds {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

// cgroupParent is the cgroup under which this server's sandboxes get
// theirs. A node's is its own: a sandbox taken over from another node
// keeps its id, and were two nodes on one machine (the one-machine
// proof, a test) to share the parent, destroying the old node's copy
// would kill the new one's processes with their common cgroup.
func cgroupParent(cfg *Config) string {
	if cfg.IsNode() {
		return "/warren-" + cfg.NodeName
	}
	return "/warren"
}

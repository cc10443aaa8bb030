// Package oci is the runtime backend for OCI runtimes driven through their
// command line with OCI bundles: runc (namespaces, cgroups, seccomp on the
// host kernel) and gVisor's runsc (a user-space kernel in between).
//
// Per sandbox the backend owns a state dir <StateRoot>/<id>/ holding the
// bundle (config.json), the overlay's upper, work and merged (rootfs) dirs,
// init.log and instance.json, plus a network attachment from the shared
// network.Manager and the cgroup <CgroupParent>/<id> the runtime creates.
// The state dir is created first and removed last, so its absence proves the
// backend holds nothing for an id; instance.json is written last, so its
// presence means the sandbox was fully created.
package oci

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/network"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// Backend implements runtime.Backend with runc or runsc.
type Backend struct {
	name string
	opts Options
	cli  *cli
	net  *network.Manager
	cg   *cgroups
	// cpuUse smooths the sandboxes' CPU use where no pressure is kept.
	cpuUse useMeter
	swap   bool // the host accounts swap (limit memory+swap)
	locks  idLocks
	disks  *diskPool // formatted sandbox disks, with DiskQuota

	logWatchers sync.Map // sandbox id -> struct{}: watchLog's running watchers
}

var _ runtime.Backend = (*Backend)(nil)

// New returns a backend for opts.Runtime. It re-registers the network
// addresses of sandboxes left by an earlier warren process (so List and
// Inspect keep working and their addresses are not handed out twice) and
// destroys sandboxes whose creation that process never finished.
func New(ctx context.Context, opts Options) (*Backend, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	bin, err := exec.LookPath(opts.Binary)
	if err != nil {
		return nil, fmt.Errorf("%s binary: %w: %w", opts.Runtime, err, errdefs.ErrUnavailable)
	}
	if opts.Runtime == Runsc {
		if err := checkStatic(bin); err != nil {
			return nil, err
		}
	}
	cg, err := detectCgroups()
	if err != nil {
		return nil, err
	}
	b := &Backend{
		name: opts.Runtime,
		opts: opts,
		cli:  newCLI(bin, opts.runtimeRoot(), opts.globalFlags(), opts.rootGuard()),
		net:  opts.Network,
		cg:   cg,
		swap: cg.swapAccounting(),
	}
	b.cli.mem = probeMemoryFlags(ctx, opts, bin)
	if len(b.cli.mem.missing) > 0 {
		log.G(ctx).Warn("this runsc lacks flags warren uses for a fast resume",
			"runsc", bin, "missing", b.cli.mem.missing)
	}
	if err := b.prepareDirs(); err != nil {
		return nil, err
	}
	if opts.DiskQuota {
		if b.disks, err = newDiskPool(opts.StateRoot, 2); err != nil {
			return nil, fmt.Errorf("sandbox disk pool: %w", err)
		}
	}
	if err := b.readopt(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// Name is the runtime's name, "runc" or "runsc".
func (b *Backend) Name() string { return b.name }

// dir is sandbox id's state dir.
func (b *Backend) dir(id string) string { return filepath.Join(b.opts.StateRoot, id) }

// cgroupPath is sandbox id's cgroup, relative to every hierarchy's root.
func (b *Backend) cgroupPath(id string) string { return filepath.Join(b.opts.CgroupParent, id) }

// backendMarker records which runtime a state root belongs to: a root shared
// by two backends would have each adopt, or destroy, the other's sandboxes.
const backendMarker = ".backend"

func (b *Backend) prepareDirs() error {
	for _, d := range []string{b.opts.StateRoot, b.opts.runtimeRoot()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}
	marker := filepath.Join(b.opts.StateRoot, backendMarker)
	data, err := os.ReadFile(marker)
	if os.IsNotExist(err) {
		return os.WriteFile(marker, []byte(b.name+"\n"), 0o600)
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", marker, err)
	}
	if got := strings.TrimSpace(string(data)); got != b.name {
		return fmt.Errorf("state root %s belongs to backend %q, not %q: %w",
			b.opts.StateRoot, got, b.name, errdefs.ErrFailedPrecondition)
	}
	return nil
}

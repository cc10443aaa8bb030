// Package runtime defines the contract between the sandbox manager and the
// programs that actually isolate a sandbox (runc, gVisor's runsc, later
// microVMs). A backend owns everything host-side that one sandbox holds: its
// rootfs overlay, network namespace and veth, cgroup and processes. The
// manager never touches those directly, so "kill frees everything" is each
// backend's promise, checked by the runtimetest conformance suite.
package runtime

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/netpolicy"
)

// Backend creates and destroys sandboxes. Implementations must be safe for
// concurrent use by many goroutines on different sandbox ids.
type Backend interface {
	// Name is the backend's user-visible name ("runc", "runsc").
	Name() string

	// Create builds and starts a sandbox from spec and returns once its init
	// process (envd) has been started; it does not wait for envd to listen.
	// On error nothing the call made is left on the host. An id that already
	// exists gives errdefs.ErrAlreadyExists.
	Create(ctx context.Context, spec Spec) (*Instance, error)

	// Destroy kills every process of the sandbox and frees all it holds
	// (mounts, netns, veth, cgroup, state files, the writable layer). It is
	// idempotent: destroying an unknown id returns nil.
	Destroy(ctx context.Context, id string) error

	// Inspect reports the sandbox's current instance. errdefs.ErrNotFound when
	// the backend holds no such sandbox. A sandbox whose processes died is
	// reported with State Stopped (it still holds resources until Destroy).
	Inspect(ctx context.Context, id string) (*Instance, error)

	// MemoryAlerts returns a channel that receives once the alerts are
	// armed (which may take a moment after the call) and then whenever
	// the running sandbox's memory use crosses one of a ladder of
	// thresholds between half its memory and its limit; it is closed when
	// its processes stop (a new Start needs a new call). errdefs.ErrNotImplemented
	// where Capabilities().MemoryAlerts is false.
	MemoryAlerts(ctx context.Context, id string) (<-chan struct{}, error)

	// Recover finishes or undoes what a warren process that died left half
	// done on this host: it frees sandboxes whose Create never completed
	// and settles a Snapshot that stopped half way, so that List then
	// reports only whole sandboxes. It runs once at startup, before any
	// other call.
	Recover(ctx context.Context) error

	// List returns every sandbox the backend holds on this host, including
	// ones left by an earlier warren process, so the manager can re-adopt or
	// destroy them after a restart.
	List(ctx context.Context) ([]*Instance, error)

	// Pause freezes every process of the sandbox in memory; Resume thaws it.
	Pause(ctx context.Context, id string) error
	Resume(ctx context.Context, id string) error

	// Foreground gives a sandbox created with Spec.Background the CPU
	// priority of any other, for good (a later Start keeps it). A no-op
	// on one that already has it.
	Foreground(ctx context.Context, id string) error

	// Stats reads the sandbox's resource usage from its cgroup and disk.
	Stats(ctx context.Context, id string) (*Stats, error)

	// Stop ends a running or paused sandbox's processes but keeps its disk,
	// network address and cgroup, leaving it StateStopped for Start. With
	// Checkpoint the memory is saved to disk first, so Start can bring every
	// process back as it was; a backend that cannot checkpoint returns
	// errdefs.ErrNotImplemented and changes nothing.
	Stop(ctx context.Context, id string, opts StopOptions) error

	// Start brings a stopped sandbox back: from its memory image when it has
	// one and opts.ColdBoot is false, otherwise by booting its init afresh
	// on the disk as it was left. The image is consumed either way.
	Start(ctx context.Context, id string, opts StartOptions) (*Instance, error)

	// Snapshot saves a sandbox's state into dir (which must not exist) so
	// that Create with Spec.From can start copies of it. The sandbox keeps
	// its state (running, paused or stopped) afterwards. The memory is
	// included when the backend can checkpoint (Snapshot.Memory says).
	Snapshot(ctx context.Context, id, dir string) (*Snapshot, error)
	// Export writes a paused or stopped sandbox's own state into dir
	// (which must not exist), for another host to rebuild the sandbox with
	// Create (Spec.From, Spec.Stopped): its writable layer as ExportLayer,
	// a tar in layer.Archive's format, and, when it is stopped with a
	// memory image, that image in ExportMemory. The sandbox is left as it
	// is. A running sandbox is errdefs.ErrFailedPrecondition: its disk
	// would not be consistent.
	Export(ctx context.Context, id, dir string) (*Export, error)

	// Capabilities says what the backend can do beyond the basics.
	Capabilities() Capabilities

	// SetNetwork replaces a sandbox's egress policy while it runs.
	SetNetwork(ctx context.Context, id string, n netpolicy.Egress) error

	// Logs opens what the sandbox's init has written to its stdout and
	// stderr (envd's log lines, which carry the start command's output),
	// across every start and restore of it, for reading from any offset;
	// the caller closes it. It works in every state, stopped included;
	// errdefs.ErrNotFound for an unknown id. Lines written after the open
	// may or may not be seen.
	Logs(ctx context.Context, id string) (io.ReadSeekCloser, error)
}

// Capabilities lists optional backend features.
type Capabilities struct {
	// Checkpoint: Stop can save memory to disk and Snapshot includes it.
	Checkpoint bool
	// OwnKernel: the sandbox runs on a kernel of its own (gVisor), so the
	// host's OOM killer can only kill the whole sandbox; envd then has to
	// kill inside (its --oom-guard).
	OwnKernel bool
	// MemoryAlerts: MemoryAlerts tells when the sandbox's memory use moves
	// near its limit, so envd's OOM guard need not poll.
	MemoryAlerts bool
}

// StopOptions tune Stop.
type StopOptions struct {
	Checkpoint bool
}

// StartOptions tune Start.
type StartOptions struct {
	ColdBoot bool
	// Mounts, when not nil, are the sandbox's volume mounts from now on:
	// the same targets it was created with, whose host directories may
	// have moved since (a restart, another node). Nil keeps them as they
	// were.
	Mounts []Mount
}

// Snapshot describes a saved sandbox state in a directory. Its disk is a
// stack of read-only layers (the template's rootfs at the bottom) that
// sandboxes created from it share; Layers lists them, top first.
type Snapshot struct {
	Dir    string
	Layers []string
	Memory bool // the directory holds a memory image
}

// Entries of an Export's directory. The memory image is where a
// Snapshot's is, so the directory is a Spec.From once the layer is
// unpacked.
const (
	ExportLayer  = "layer.tar"
	ExportMemory = "memory"
)

// Export describes what Export wrote.
type Export struct {
	// Memory: the directory holds the memory image.
	Memory bool
	// Layers are the read-only layers below the exported one, top first,
	// as the sandbox stands on them on this host.
	Layers []string
}

// Spec describes one sandbox to create.
type Spec struct {
	// ID is the sandbox id: [a-z0-9]+, unique on the host.
	ID string
	// Rootfs is the template's unpacked root filesystem. Backends must never
	// write to it: each sandbox gets a writable layer of its own over it.
	Rootfs string
	// Hostname is set in the sandbox's UTS namespace and /etc/hostname, with a
	// matching /etc/hosts line.
	Hostname string
	// Init is the first process: envd. It runs as root inside the sandbox.
	Init Process
	// Binds are host paths mounted read-only into the sandbox (envd's binary).
	Binds []Bind
	// Mounts are host directories mounted read-write (volumes): writes on
	// either side reach the other at once, and nothing of them is part of
	// the sandbox's disk, its snapshots or its exports. A sandbox restored
	// from a memory image needs the same targets as the one checkpointed.
	Mounts []Mount
	// Resources are the cgroup limits.
	Resources Resources
	// Network is what may leave the sandbox.
	Network netpolicy.Egress
	// Labels are stored with the instance and returned by List/Inspect, so
	// the manager can recognise its sandboxes after a restart.
	Labels map[string]string
	// From, when set, starts the sandbox from a snapshot instead of Rootfs:
	// its layers become the lower layers of the new sandbox's disk and,
	// unless ColdBoot, its memory image is restored, so the processes
	// continue where the snapshot left them.
	From *Snapshot
	// ColdBoot boots Init even when From has a memory image.
	ColdBoot bool
	// Stopped builds the sandbox without starting it: it is left
	// StateStopped, with From's memory image (unless ColdBoot) as the one
	// Start restores. This is how a sandbox parked by another host is
	// taken over in the state it was paused in.
	Stopped bool
	// Background boots the sandbox at the host's lowest CPU priority, so
	// that it takes only CPU nobody else wants (a warm pool's refill),
	// until Foreground gives it the normal priority.
	Background bool
}

// Process is a command line with its environment.
type Process struct {
	Args []string
	Env  []string // KEY=VALUE
	Cwd  string
}

// Bind is a read-only bind mount of a host path at Target inside the sandbox.
type Bind struct {
	Source string
	Target string
}

// Mount is a read-write bind mount of the host directory Source at
// Target inside the sandbox.
type Mount struct {
	Source string
	Target string
}

// Resources are cgroup limits. Zero means the backend's default.
type Resources struct {
	CPUCount  int // whole CPUs, enforced as a CFS quota
	MemoryMB  int
	PidsLimit int
	DiskMB    int // size of the writable layer, where the backend can enforce it
}

// State of a sandbox as the backend sees it.
type State string

// The states a backend reports.
const (
	StateRunning State = "running"
	StatePaused  State = "paused"
	StateStopped State = "stopped" // processes gone, resources still held
)

// Instance is a created sandbox as the backend sees it.
type Instance struct {
	ID        string
	Backend   string
	State     State
	IP        netip.Addr // the sandbox's address on the host bridge; dial IP:port
	Pid       int        // host pid of the init process (0 if not running)
	CreatedAt time.Time
	Labels    map[string]string
	// Layers are the read-only layers below the sandbox's own writable one,
	// top first, ending with the template's rootfs. Snapshots' layers stay
	// on disk while any instance lists them.
	Layers []string
	// Checkpointed: stopped with a memory image that Start restores.
	Checkpointed bool
	// OOMKilled: stopped, and the host's OOM killer has killed in the
	// sandbox's memory cgroup (so the likely reason it stopped).
	OOMKilled bool
}

// Stats is a sandbox's resource usage.
type Stats struct {
	CPUCount      int
	CPUUsageNanos uint64 // cumulative CPU time of all processes
	MemoryUsed    uint64 // bytes, excluding page cache
	MemoryCache   uint64 // bytes of page cache
	MemoryLimit   uint64 // bytes
	DiskUsed      uint64 // bytes in the writable layer
	DiskTotal     uint64 // bytes the writable layer may use
}

// reservedTargets are where a volume may not be mounted: the kernel's
// interfaces, whose mounts the runtime makes, and warren's own binds.
var reservedTargets = []string{"/proc", "/sys", "/dev", "/.warren"}

// CheckMounts is what every backend's Create checks of Spec.Mounts
// (ErrInvalidArgument): absolute, clean targets, one mount each, not over
// the root, a reserved tree or a bind; sources that are directories.
func CheckMounts(mounts []Mount, binds []Bind) error {
	seen := make(map[string]bool, len(mounts)+len(binds))
	for _, b := range binds {
		seen[b.Target] = true
	}
	for _, m := range mounts {
		if err := checkTarget(m.Target); err != nil {
			return err
		}
		if seen[m.Target] {
			return fmt.Errorf("mount target %q: mounted twice: %w", m.Target, errdefs.ErrInvalidArgument)
		}
		seen[m.Target] = true
		if !filepath.IsAbs(m.Source) {
			return fmt.Errorf("mount source %q: must be absolute: %w", m.Source, errdefs.ErrInvalidArgument)
		}
		if fi, err := os.Stat(m.Source); err != nil {
			return fmt.Errorf("mount source: %w: %w", err, errdefs.ErrInvalidArgument)
		} else if !fi.IsDir() {
			return fmt.Errorf("mount source %s: not a directory: %w", m.Source, errdefs.ErrInvalidArgument)
		}
	}
	return nil
}

func checkTarget(target string) error {
	if !filepath.IsAbs(target) || filepath.Clean(target) != target {
		return fmt.Errorf("mount target %q: must be an absolute, clean path: %w", target, errdefs.ErrInvalidArgument)
	}
	if target == "/" {
		return fmt.Errorf("mount target %q: cannot mount over the root: %w", target, errdefs.ErrInvalidArgument)
	}
	for _, r := range reservedTargets {
		if target == r || strings.HasPrefix(target, r+"/") {
			return fmt.Errorf("mount target %q: %s is reserved: %w", target, r, errdefs.ErrInvalidArgument)
		}
	}
	return nil
}

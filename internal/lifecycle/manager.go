// Package lifecycle is the sandbox manager of one machine: it turns API
// requests into runtime backend calls, keeps each sandbox's record in the
// store, arms its timeout, hands the proxy the address of a live sandbox,
// and re-adopts what an earlier warren process left running. The types it
// shares with the API edge live in the leaf package sandbox.
package lifecycle

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/sandboxlog"
	"github.com/warren-sandbox/warren/internal/store"
)

// Options configure a Manager.
type Options struct {
	Store store.Store
	// Base is the context every timer and background goroutine of the
	// manager derives from (nil: context.Background()); Shutdown cancels
	// what derives from it and waits for it.
	Base context.Context
	// Quota is a team's limits on running sandboxes; nil: none.
	Quota func(ctx context.Context, team string) (sandbox.Quota, error)
	// HostMemoryMB and HostDiskFreeMB report what the host has left
	// (MemAvailableMB, DiskFreeMB); nil skips that check.
	HostMemoryMB, HostDiskFreeMB func() (int, error)
	// Starts queues what boots or restores a sandbox (cold creates,
	// resumes, forks' creates) while the machine is busy
	// (admission.Queue); nil starts everything at once.
	Starts         StartQueue
	Backends       map[string]runtime.Backend // by name
	DefaultBackend string
	// EnvdPath is the host path of the static envd binary bound into sandboxes.
	EnvdPath string
	// Binds are further host files bound read-only into every sandbox (the
	// code interpreter server, which templates start with their StartCmd).
	Binds []runtime.Bind
	// Defaults for sandboxes whose template does not say.
	DefaultCPUCount int
	DefaultMemoryMB int
	DefaultDiskMB   int
	// MaxTimeout caps a sandbox's lifetime per request; 0 means no cap.
	MaxTimeout time.Duration
	// EnvdReadyTimeout bounds the wait for a new sandbox's envd.
	EnvdReadyTimeout time.Duration
	// StartReadyTimeout bounds the wait for a template's ReadyPort.
	StartReadyTimeout time.Duration
	// CheckpointAfter is how long a paused sandbox whose backend can
	// checkpoint stays frozen in memory (resumed in milliseconds) before
	// its memory goes to disk (no RAM held, resumed by a restore); 0
	// checkpoints at once.
	CheckpointAfter time.Duration
	// DomainEgress: the network runs the egress proxy, so allowOut may
	// name domains.
	DomainEgress bool
	// SnapshotDir holds snapshots (one directory each); "" disables them.
	SnapshotDir string
	// EnvdPort is where the manager reaches envd at a sandbox's address;
	// wire.EnvdPort unless a test points it at a stand-in.
	EnvdPort uint16
	// PollOOMGuard makes envd's OOM guard poll even where the backend
	// has memory alerts (--oom-guard-poll: the way before them, kept to
	// measure one against the other).
	PollOOMGuard bool
	// ObserveOp, when set, is told the duration and outcome of every
	// create, pause, resume and kill (the server's Prometheus histograms).
	ObserveOp sandbox.OpObserver
	// Events records lifecycle events (created, paused, resumed, updated,
	// snapshotted, killed); nil records none.
	Events sandbox.EventRecorder
	// NodeName is the cluster node this manager runs on (--role=node);
	// "" in one-machine mode. It is stamped on every sandbox it stores,
	// and at start it re-adopts or reaps only the sandboxes bearing it:
	// the store is shared, and another node's records are not its to
	// judge. Team quotas count the whole cluster.
	NodeName string
	// LocalTemplate, when set, maps a template's recorded layer paths to
	// this node's own copies before a sandbox boots from them, pulling
	// what is missing: in a cluster the store records the paths of the
	// node that built the template. Nil uses the paths as recorded (one
	// machine).
	LocalTemplate func(ctx context.Context, tpl *store.Template) (*store.Template, error)
	// Volumes resolves the volumes sandboxes mount; nil: volumes are not
	// available, and a create that mounts one is ErrNotImplemented.
	Volumes Volumes
	// TemplateHints says, by template ID, how to get a template this
	// server could serve but was started without (desktop: --desktop);
	// a create naming one that is not found carries the hint.
	TemplateHints map[string]string
}

// StartQueue hands out turns to start sandboxes: Acquire waits for one
// (or refuses with ErrResourceExhausted past its bound) and returns the
// func that ends it.
type StartQueue interface {
	Acquire(ctx context.Context, op, team string) (done func(), err error)
}

// Manager owns the lifecycle of every sandbox on this host.
type Manager struct {
	opts   Options
	client *http.Client

	// mu guards live. A sandbox is in live from the moment its record is
	// stored until Kill removes it; the proxy only routes to sandboxes in it.
	mu   sync.Mutex
	live map[string]*entry
	// pending is what admitted creates and resumes still in flight will
	// run, by team, so two at once cannot both take a quota's last place.
	pending map[string]usage

	// snaps keeps snapshot directories and their collector
	// (SetSnapshots); nil: none are collected.
	snaps SnapshotKeeper

	// parker keeps paused sandboxes on shared storage (SetParker); nil:
	// none are parked.
	parker Parker

	// onEnding are told of each sandbox a kill is about to destroy
	// (OnEnding); set before serving.
	onEnding []func(ctx context.Context, id string, read func(context.Context, sandboxlog.Query) ([]sandboxlog.Entry, error))

	// claimer hands creates sandboxes booted ahead (ClaimFrom); nil:
	// every create starts cold.
	claimer Claimer

	// bg runs the manager's own work under the base context Shutdown
	// cancels (background.go): a server on its way out starts nothing new
	// and does not remove sandboxes whose init it sees exit (the next
	// start settles them).
	bg *background
}

// entry is the in-memory side of one sandbox.
type entry struct {
	mu sync.Mutex // serialises lifecycle operations on this sandbox
	sb *store.Sandbox
	// running mirrors sb.State == running for quota counts, which read it
	// without taking mu.
	running atomic.Bool
	ip      netip.Addr
	backend runtime.Backend
	timer   *time.Timer
	ckTimer *time.Timer // checkpoints a frozen paused sandbox
	conns   *connSet
	killed  bool
	initPid int // the init watchInit watches; 0: none
	exec    execution
}

// New returns a Manager. Call Reconcile before serving to adopt sandboxes an
// earlier process left behind.
func New(opts Options) (*Manager, error) {
	if opts.Store == nil || len(opts.Backends) == 0 {
		return nil, fmt.Errorf("sandbox manager: store and at least one backend are required")
	}
	if _, ok := opts.Backends[opts.DefaultBackend]; !ok {
		return nil, fmt.Errorf("sandbox manager: default backend %q is not configured", opts.DefaultBackend)
	}
	if opts.EnvdPort == 0 {
		opts.EnvdPort = wire.EnvdPort
	}
	if opts.StartReadyTimeout == 0 {
		opts.StartReadyTimeout = time.Minute
	}
	if opts.EnvdReadyTimeout == 0 {
		opts.EnvdReadyTimeout = 30 * time.Second
	}
	m := &Manager{
		opts:    opts,
		client:  newEnvdClient(),
		live:    make(map[string]*entry),
		pending: make(map[string]usage),
		bg:      newBackground(opts.Base),
	}
	return m, nil
}

// Backend returns the backend with this name, for the API's validation.
func (m *Manager) Backend(name string) (runtime.Backend, bool) {
	b, ok := m.opts.Backends[name]
	return b, ok
}

func (m *Manager) get(id string) (*entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.live[id]
	if !ok {
		return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("sandbox %q not found", id))
	}
	return e, nil
}

// Get returns a copy of the sandbox's record.
func (m *Manager) Get(ctx context.Context, id string) (*store.Sandbox, error) {
	e, err := m.getOrTakeOver(ctx, id)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return copySandbox(e.sb), nil
}

// List returns copies of every live sandbox's record, newest first: this
// node's only, as the store has them in order.
func (m *Manager) List(ctx context.Context) ([]*store.Sandbox, error) {
	all, err := m.opts.Store.ListSandboxesOnNode(ctx, m.opts.NodeName)
	if err != nil {
		return nil, fmt.Errorf("listing sandboxes: %w", err)
	}
	out := all[:0]
	for _, s := range all {
		if e, err := m.get(s.ID); err == nil {
			e.mu.Lock()
			out = append(out, copySandbox(e.sb))
			e.mu.Unlock()
		}
	}
	return out, nil
}

func copySandbox(s *store.Sandbox) *store.Sandbox {
	c := *s
	c.Metadata = copyMap(s.Metadata)
	c.EnvVars = copyMap(s.EnvVars)
	c.VolumeMounts = slices.Clone(s.VolumeMounts)
	return &c
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// newID returns a sandbox id: 20 characters of [a-z0-9], as E2B's are, so
// Host-based routing (`<port>-<id>.<domain>`) can split on '-' and '.'.
func newID() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return string(b)
}

// newToken returns a random hex token for envd or traffic access.
func newToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}

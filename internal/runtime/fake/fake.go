// Package fake is an in-memory runtime.Backend for unit tests of the layers
// above the runtime (sandbox manager, API). It keeps instances in a map,
// hands out addresses from 10.0.0.0/8 without touching the host, follows
// the contract's state machine and error classes (it passes the runtimetest
// suite without Real()), and lets a test script failures, crashes and
// latency.
package fake

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// Op names a Backend method, for scripting failures.
type Op string

// The operations a Hook sees.
const (
	OpCreate   Op = "create"
	OpDestroy  Op = "destroy"
	OpInspect  Op = "inspect"
	OpList     Op = "list"
	OpPause    Op = "pause"
	OpResume   Op = "resume"
	OpStats    Op = "stats"
	OpStop     Op = "stop"
	OpStart    Op = "start"
	OpSnapshot Op = "snapshot"
	// OpSnapshotWrite is seen once a snapshot's directory exists and
	// before its layer is written, the window a collector must respect.
	OpSnapshotWrite Op = "snapshotwrite"
	OpSetNetwork    Op = "setnetwork"
	OpLogs          Op = "logs"
	OpForeground    Op = "foreground"
	OpExport        Op = "export"
)

// Backend is the fake. The zero value is not usable; call New.
type Backend struct {
	name string

	mu        sync.Mutex                // mu protects everything below.
	instances map[string]*instanceState // by id
	nextIP    uint32                    // host part of the next address in 10.0.0.0/8
	fixedIP   netip.Addr                // when valid, every sandbox's address
	failures  map[Op][]failure          // scripted, consumed in order
	hook      func(ctx context.Context, op Op, id string) error
	calls     []Call
	noMemory  bool // the backend cannot checkpoint
	memAlerts bool // MemoryAlerts works
	alerts    map[string]chan struct{}
}

type instanceState struct {
	inst      runtime.Instance
	resources runtime.Resources
	network   netpolicy.Egress
	log       []byte // what WriteLog wrote: the init's output
	initArgs  []string
	mounts    []runtime.Mount // volume mounts, as the last create or start set them
	// background: created with Spec.Background and not yet Foreground;
	// booted: created with it.
	background, booted bool
}

type failure struct {
	id  string // "" matches any id
	err error
}

// Call records one method call, for assertions.
type Call struct {
	Op Op
	ID string
}

var _ runtime.Backend = (*Backend)(nil)

// New returns an empty fake that reports name ("fake" if empty).
func New(name string) *Backend {
	if name == "" {
		name = "fake"
	}
	return &Backend{name: name, instances: map[string]*instanceState{}, nextIP: 2, failures: map[Op][]failure{}, alerts: map[string]chan struct{}{}}
}

// Name implements runtime.Backend.
func (b *Backend) Name() string { return b.name }

// FailNext makes the next call of op (for id, or any id when id is "")
// return err without doing anything. Several scripted failures are consumed
// in the order they were added.
func (b *Backend) FailNext(op Op, id string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures[op] = append(b.failures[op], failure{id, err})
}

// SetHook installs fn, called at the start of every operation (outside the
// fake's lock, so it may block to simulate latency or wait on a test); a
// non-nil error is returned as the operation's result.
func (b *Backend) SetHook(fn func(ctx context.Context, op Op, id string) error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hook = fn
}

// UseIP makes every later sandbox report ip as its address, so tests of the
// layers above can point it at a stand-in envd listening on loopback.
func (b *Backend) UseIP(ip netip.Addr) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fixedIP = ip
}

// Crash marks id's processes as dead: it is then reported stopped, as a
// real backend does when the init exits.
func (b *Backend) Crash(id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.instances[id]
	if !ok {
		return fmt.Errorf("sandbox %s: %w", id, errdefs.ErrNotFound)
	}
	st.inst.State, st.inst.Pid = runtime.StateStopped, 0
	b.closeAlertsLocked(id)
	return nil
}

// Calls returns the calls made so far.
func (b *Backend) Calls() []Call {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Call(nil), b.calls...)
}

// begin records the call and returns a scripted or hooked error, if any.
func (b *Backend) begin(ctx context.Context, op Op, id string) error {
	b.mu.Lock()
	b.calls = append(b.calls, Call{op, id})
	hook := b.hook
	for i, f := range b.failures[op] {
		if f.id == "" || f.id == id {
			b.failures[op] = append(b.failures[op][:i:i], b.failures[op][i+1:]...)
			b.mu.Unlock()
			return f.err
		}
	}
	b.mu.Unlock()
	if hook != nil {
		if err := hook(ctx, op, id); err != nil {
			return err
		}
	}
	return ctx.Err()
}

var idRE = regexp.MustCompile(`^[a-z0-9]{1,64}$`)

// validate applies the checks a real backend makes before any side effect.
func validate(spec runtime.Spec) error {
	if !idRE.MatchString(spec.ID) {
		return fmt.Errorf("sandbox id %q: %w", spec.ID, errdefs.ErrInvalidArgument)
	}
	if !filepath.IsAbs(spec.Rootfs) {
		return fmt.Errorf("rootfs %q must be absolute: %w", spec.Rootfs, errdefs.ErrInvalidArgument)
	}
	if fi, err := os.Stat(spec.Rootfs); err != nil || !fi.IsDir() {
		return fmt.Errorf("rootfs %s: not a directory: %w", spec.Rootfs, errdefs.ErrInvalidArgument)
	}
	if len(spec.Init.Args) == 0 || spec.Init.Args[0] == "" {
		return fmt.Errorf("init process has no command: %w", errdefs.ErrInvalidArgument)
	}
	for _, bind := range spec.Binds {
		if _, err := os.Stat(bind.Source); err != nil {
			return fmt.Errorf("bind source %s: %w", bind.Source, errdefs.ErrInvalidArgument)
		}
	}
	if err := runtime.CheckMounts(spec.Mounts, spec.Binds); err != nil {
		return err
	}
	r := spec.Resources
	if r.CPUCount < 0 || r.MemoryMB < 0 || r.PidsLimit < 0 || r.DiskMB < 0 {
		return fmt.Errorf("negative resource limit: %w", errdefs.ErrInvalidArgument)
	}
	return nil
}

// Create implements runtime.Backend.
func (b *Backend) Create(ctx context.Context, spec runtime.Spec) (*runtime.Instance, error) {
	if err := validate(spec); err != nil {
		return nil, err
	}
	if err := b.begin(ctx, OpCreate, spec.ID); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.instances[spec.ID]; ok {
		return nil, fmt.Errorf("sandbox %s: %w", spec.ID, errdefs.ErrAlreadyExists)
	}
	st := &instanceState{
		inst: runtime.Instance{
			ID:        spec.ID,
			Backend:   b.name,
			State:     runtime.StateRunning,
			IP:        b.allocIP(),
			Pid:       1000 + len(b.calls),
			CreatedAt: time.Now().UTC(),
			Labels:    maps.Clone(spec.Labels),
			Layers:    []string{spec.Rootfs},
		},
		resources:  spec.Resources,
		network:    spec.Network,
		initArgs:   slices.Clone(spec.Init.Args),
		mounts:     slices.Clone(spec.Mounts),
		background: spec.Background,
		booted:     spec.Background,
	}
	if spec.From != nil {
		st.inst.Layers = slices.Clone(spec.From.Layers)
	}
	if spec.Stopped {
		st.inst.State, st.inst.Pid = runtime.StateStopped, 0
		st.inst.Checkpointed = spec.From != nil && spec.From.Memory && !spec.ColdBoot
	}
	b.instances[spec.ID] = st
	return copyInstance(&st.inst), nil
}

// allocIP hands out 10.0.0.2, 10.0.0.3, ... never reusing an address.
func (b *Backend) allocIP() netip.Addr {
	if b.fixedIP.IsValid() {
		return b.fixedIP
	}
	n := b.nextIP
	b.nextIP++
	return netip.AddrFrom4([4]byte{10, byte(n >> 16), byte(n >> 8), byte(n)})
}

// Destroy implements runtime.Backend.
func (b *Backend) Destroy(ctx context.Context, id string) error {
	if err := b.begin(ctx, OpDestroy, id); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.instances, id)
	b.closeAlertsLocked(id)
	return nil
}

// Foreground implements runtime.Backend.
func (b *Backend) Foreground(ctx context.Context, id string) error {
	return b.update(ctx, OpForeground, id, func(st *instanceState) error {
		st.background = false
		return nil
	})
}

// Background reports whether sandbox id was created in the background
// (booted) and whether it still runs there (now).
func (b *Backend) Background(id string) (booted, now bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.instances[id]
	return ok && st.booted, ok && st.background
}

// Mounts returns sandbox id's volume mounts.
func (b *Backend) Mounts(id string) []runtime.Mount {
	b.mu.Lock()
	defer b.mu.Unlock()
	if st, ok := b.instances[id]; ok {
		return slices.Clone(st.mounts)
	}
	return nil
}

// Inspect implements runtime.Backend.
func (b *Backend) Inspect(ctx context.Context, id string) (*runtime.Instance, error) {
	if err := b.begin(ctx, OpInspect, id); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.instances[id]
	if !ok {
		return nil, fmt.Errorf("sandbox %s: %w", id, errdefs.ErrNotFound)
	}
	return copyInstance(&st.inst), nil
}

// Recover implements runtime.Backend: the fake's operations are atomic in
// memory, so nothing is ever left half done.
func (b *Backend) Recover(ctx context.Context) error { return nil }

// List implements runtime.Backend; instances come sorted by id.
func (b *Backend) List(ctx context.Context) ([]*runtime.Instance, error) {
	if err := b.begin(ctx, OpList, ""); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*runtime.Instance, 0, len(b.instances))
	for _, st := range b.instances {
		out = append(out, copyInstance(&st.inst))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func copyInstance(in *runtime.Instance) *runtime.Instance {
	cp := *in
	cp.Labels = maps.Clone(in.Labels)
	cp.Layers = slices.Clone(in.Layers)
	return &cp
}

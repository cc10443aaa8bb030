// Package pool is the warm pools room: sandboxes booted ahead of the
// creates that will want them. It fills through the manager's narrow
// Machine (boot a sandbox for a pool, destroy one) and hands a create one
// through the hook the manager declares (lifecycle.Claimer); the manager
// imports nothing of it.
package pool

import (
	"context"
	"encoding/json"
	"math"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// A pooled sandbox is a backend instance with its final id (E2B's ids are
// the server's to choose), envd up but not yet initialised, and the
// template's start command ready; it has no record in the store, so no
// list, quota, timer or metrics sampler sees it, and a restart destroys it
// as unknown (the manager's Reconcile). A create whose request matches a
// pool's key takes one and only initialises it: envd's token, env vars and
// user, the record, the timer. Each pooled sandbox serves one create and
// dies with it, so nothing of one claim can reach another.
//
// Refills boot in the background (runtime.Spec.Background: the lowest CPU
// priority on the host), so they use only CPU that creates and running
// sandboxes leave idle; a booted one waits in the foreground.
//
// A pool's size follows demand, between Options.Min and Options.Max: the
// larger of the key's create rate (a moving average over about 10 s)
// times the time a pooled sandbox takes to boot, doubled, and the largest
// burst of the last poolIdle (the most creates that came within one boot
// time or a second, which only sandboxes already booted can serve). All
// pools together stay within Options.MemoryMB of host memory, measured on
// each pooled sandbox once it is ready.

// Machine is the sandbox manager as the pools use it.
type Machine interface {
	// PoolRecord is the record a create with default settings from tpl
	// would make; false when tpl's runtime does not run here.
	PoolRecord(tpl *store.Template) (*store.Sandbox, bool)
	// BootPooled boots a sandbox for a pool as sb describes (its id is
	// set here), envd not initialised; memMB is the host memory it holds.
	BootPooled(ctx context.Context, sb *store.Sandbox, tpl *store.Template) (inst *runtime.Instance, memMB int, err error)
	// DestroyPooled destroys a pooled sandbox nobody claimed.
	DestroyPooled(ctx context.Context, backend, id string)
}

// Options configure the pools.
type Options struct {
	// Store is where templates are looked up (rebuilds drain a pool).
	Store store.Store
	// Max is the most sandboxes one key's pool holds (0: no pools); Min
	// the fewest while creates still ask for it; MemoryMB bounds the host
	// memory all pools hold (0: no bound).
	Min, Max, MemoryMB int
	// Templates (ids or aliases) have their pools, for a create with
	// default settings, filled from the start and kept at Min however
	// long no create comes. Missing ones are skipped.
	Templates []string
}

// key is what a pooled sandbox was made with; a create takes one only if
// its own record would have made the same.
type key struct {
	Template string
	Rootfs   string // the template's build: a rebuild starts a new key and drains the old
	Backend  string
	CPU, Mem int
	Disk     int
	Network  string // the network policy, as JSON
}

type warmSandbox struct {
	id    string
	inst  *runtime.Instance
	memMB int // host memory it holds, measured when it was ready
}

// state is one key's pool.
type state struct {
	ready    []*warmSandbox
	policy   netpolicy.Policy
	pinned   bool // Options.Templates: never emptied for idleness
	lastUsed time.Time
	rate     float64     // creates per second, decaying with rateWindow
	rateAt   time.Time   // when rate was last brought up to date
	recent   []time.Time // creates within the last boot time
	burst    int         // the most creates within one boot time lately
	burstAt  time.Time   // when burst was seen
	boot     time.Duration
	booting  int       // sandboxes booting for the pool now
	retryAt  time.Time // after a failed boot, no other before this
	hits     int64
	misses   int64
}

// Pools are the warm pools of one machine.
type Pools struct {
	machine   Machine
	st        store.Store
	min, max  int
	budgetMB  int
	templates []string

	mu    sync.Mutex
	byKey map[key]*state

	wake chan struct{}
}

const (
	// poolIdle is how long a key may go without creates before its pool
	// is emptied.
	poolIdle = 10 * time.Minute
	// rateWindow is the time constant of a key's create rate: short
	// enough that a run of creates raises the pool while it lasts.
	rateWindow = 10 * time.Second
	// poolRetry is how long a key waits after a failed boot.
	poolRetry = 5 * time.Second
)

// New returns the pools over m; nil when opts.Max is 0 (no pools).
func New(m Machine, opts Options) *Pools {
	if opts.Max <= 0 {
		return nil
	}
	return &Pools{machine: m, st: opts.Store, min: min(opts.Min, opts.Max), max: opts.Max, budgetMB: opts.MemoryMB,
		templates: opts.Templates, byKey: map[key]*state{}, wake: make(chan struct{}, 1)}
}

// decay brings the key's create rate to now, adding arrivals.
func (ps *state) decay(now time.Time, arrivals float64) {
	if !ps.rateAt.IsZero() {
		ps.rate *= math.Exp(-now.Sub(ps.rateAt).Seconds() / rateWindow.Seconds())
	}
	ps.rate += arrivals / rateWindow.Seconds()
	ps.rateAt = now
}

// bootTime is how long a pooled sandbox of the key takes to boot; a
// second until one has.
func (ps *state) bootTime() time.Duration {
	if ps.boot == 0 {
		return time.Second
	}
	return ps.boot
}

// arrive records a create at now in the key's burst window: a boot time,
// and at least a second (creates sent at once reach the server spread
// over a few hundred milliseconds, longer than a runc boot).
func (ps *state) arrive(now time.Time) {
	cut := now.Add(-max(ps.bootTime(), time.Second))
	i := 0
	for i < len(ps.recent) && ps.recent[i].Before(cut) {
		i++
	}
	ps.recent = append(ps.recent[i:], now)
	if len(ps.recent) >= ps.burst || now.Sub(ps.burstAt) > poolIdle {
		ps.burst, ps.burstAt = len(ps.recent), now
	}
}

// target is how many ready sandboxes the key wants: enough for the creates
// that come, at its rate, while one boots, twice over, and for a burst as
// large as the last poolIdle's largest.
func (p *Pools) target(ps *state, now time.Time) int {
	ps.decay(now, 0)
	want := int(math.Ceil(2 * ps.rate * ps.bootTime().Seconds()))
	if now.Sub(ps.burstAt) <= poolIdle {
		want = max(want, ps.burst)
	}
	return max(p.min, min(p.max, want))
}

// heldMB is the host memory all pools hold; callers hold p.mu.
func (p *Pools) heldMB() int {
	n := 0
	for _, ps := range p.byKey {
		for _, w := range ps.ready {
			n += w.memMB
		}
	}
	return n
}

func keyFor(sb *store.Sandbox, tpl *store.Template) key {
	net, _ := json.Marshal(sb.Network)
	return key{Template: tpl.ID, Rootfs: tpl.RootfsPath, Backend: sb.Backend,
		CPU: sb.CPUCount, Mem: sb.MemoryMB, Disk: sb.DiskMB, Network: string(net)}
}

// Claim hands a create whose record is sb, from tpl, a pooled sandbox of
// the same key if one is ready, and records the demand either way: the
// manager's lifecycle.Claimer. The sandbox is the caller's from then on.
func (p *Pools) Claim(sb *store.Sandbox, tpl *store.Template) (id string, inst *runtime.Instance, ok bool) {
	if len(sb.VolumeMounts) > 0 {
		// A running sandbox cannot gain a mount; nor is this demand a
		// pool could ever meet.
		return "", nil, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.poke()
	ps := p.state(keyFor(sb, tpl), sb.Network)
	now := time.Now()
	ps.lastUsed = now
	ps.decay(now, 1)
	ps.arrive(now)
	if len(ps.ready) == 0 {
		ps.misses++
		return "", nil, false
	}
	ps.hits++
	w := ps.ready[0]
	ps.ready = ps.ready[1:]
	return w.id, w.inst, true
}

// state returns k's pool, made if new; callers hold p.mu.
func (p *Pools) state(k key, policy netpolicy.Policy) *state {
	ps := p.byKey[k]
	if ps == nil {
		ps = &state{policy: policy.Clone()}
		p.byKey[k] = ps
	}
	return ps
}

func (p *Pools) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Stats reports every pool; none without pools.
func (p *Pools) Stats() []sandbox.PoolStat {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	var out []sandbox.PoolStat
	for k, ps := range p.byKey {
		st := sandbox.PoolStat{Template: k.Template, Runtime: k.Backend, Ready: len(ps.ready),
			Target: p.target(ps, now), Hits: ps.hits, Misses: ps.misses}
		for _, w := range ps.ready {
			st.HeldMB += w.memMB
		}
		out = append(out, st)
	}
	return out
}

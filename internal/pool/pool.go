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
	goruntime "runtime"
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
// Refills start as soon as a claim takes a sandbox, up to one per CPU at
// once in the background (runtime.Spec.Background: the lowest CPU
// priority on the host), so they use only CPU that creates and running
// sandboxes leave idle. A pool that missed within surgeWindow has its
// refills first and, besides those, up to one per CPU in the foreground:
// creates are coming faster than idle CPU refills it, and the cold create
// of the miss would starve background boots (the very ones holding the
// background slots). A booted one waits in the foreground. A create that
// misses may wait for a refill already booting (wait.go).
//
// A pool's size follows demand, between Options.Min and Options.Max: the
// larger of the key's create rate (a moving average over about 10 s)
// times the time a pooled sandbox takes to boot, doubled, and the key's
// peak. The peak is the largest burst seen (the most creates that came
// within one boot time or a second, which only sandboxes already booted
// can serve), raised at once by a miss to the creates of the last
// surgeWindow plus one. It holds for surgeHold after the key's last
// create, or after the pool stopped booting toward it if that is later,
// then halves every surgeHalf: an idle pool is back at Min within about
// four minutes of being full. All pools together stay within Options.MemoryMB of
// host memory, measured on each pooled sandbox once it is ready.

// Machine is the sandbox manager as the pools use it.
type Machine interface {
	// PoolRecord is the record a create with default settings from tpl
	// would make; false when tpl's runtime does not run here.
	PoolRecord(tpl *store.Template) (*store.Sandbox, bool)
	// BootPooled boots a sandbox for a pool as sb describes (its id is
	// set here), envd not initialised; memMB is the host memory it holds.
	// foreground boots it at the host's normal CPU priority rather than
	// in the background.
	BootPooled(ctx context.Context, sb *store.Sandbox, tpl *store.Template, foreground bool) (inst *runtime.Instance, memMB int, err error)
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
	seen     []time.Time // creates within the last surgeWindow
	peak     int         // the burst or miss demand, as of holdFrom
	holdFrom time.Time   // the last create, or the pool's last boot toward its peak
	missAt   time.Time   // the last claim that found the pool empty
	boot     time.Duration
	memMB    int         // a ready sandbox's memory, a moving average
	booting  int         // sandboxes booting for the pool now
	starts   []bootStart // when each of them started, oldest first
	waiters  []*waiter   // creates waiting for them, oldest first
	retryAt  time.Time   // after a failed boot, no other before this
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

	// slots bounds the boots in the background at once, fgSlots those in
	// the foreground.
	slots, fgSlots int
	now            func() time.Time // time.Now; a fake clock in tests
	noWait         bool             // no create waits for a refill (tests compare)

	mu     sync.Mutex
	byKey  map[key]*state
	bg, fg int // boots in the background, in the foreground, now

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
	// surgeWindow is how far back a miss counts creates to raise the
	// pool's peak, and how long after a miss its refills boot in the
	// foreground.
	surgeWindow = 30 * time.Second
	// surgeHold is how long a peak holds after the last create (over a
	// quiet minute, so a burst that follows one finds the pool full);
	// surgeHalf how fast it then falls.
	surgeHold = 90 * time.Second
	surgeHalf = 30 * time.Second
)

// New returns the pools over m; nil when opts.Max is 0 (no pools).
func New(m Machine, opts Options) *Pools {
	if opts.Max <= 0 {
		return nil
	}
	cpus := max(1, goruntime.NumCPU())
	return &Pools{machine: m, st: opts.Store, min: min(opts.Min, opts.Max), max: opts.Max, budgetMB: opts.MemoryMB,
		templates: opts.Templates, slots: cpus, fgSlots: cpus, now: time.Now,
		byKey: map[key]*state{}, wake: make(chan struct{}, 1)}
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

// arrive records a create at now: in the key's burst window (a boot time,
// and at least a second: creates sent at once reach the server spread
// over a few hundred milliseconds, longer than a runc boot) and in the
// miss window, surgeWindow.
func (ps *state) arrive(now time.Time) {
	ps.recent = append(since(ps.recent, now.Add(-max(ps.bootTime(), time.Second))), now)
	ps.seen = append(since(ps.seen, now.Add(-surgeWindow)), now)
	ps.peak = max(ps.held(now), len(ps.recent))
	ps.holdFrom = now
}

// miss raises the key's peak at once, a claim at now having found the
// pool empty: the creates of the last surgeWindow and one more were
// wanted ready, up to most.
func (ps *state) miss(now time.Time, most int) {
	ps.misses++
	ps.missAt = now
	ps.peak = max(ps.peak, min(most, len(ps.seen)+1))
}

// since drops the times before cut from ts, which is in order.
func since(ts []time.Time, cut time.Time) []time.Time {
	i := 0
	for i < len(ts) && ts[i].Before(cut) {
		i++
	}
	return ts[i:]
}

// held is the key's peak at now: whole for surgeHold after the last
// create, then halved every surgeHalf. While the pool is still booting
// toward its peak the hold starts again: on a loaded host a burst's cold
// creates and the refills after it can take minutes, and a quiet minute
// counted from the burst's arrival would have ended before the pool was
// ever full.
func (ps *state) held(now time.Time) int {
	if ps.booting > 0 && len(ps.ready) < ps.peak && !now.After(ps.holdFrom.Add(surgeHold)) {
		ps.holdFrom = now
	}
	idle := now.Sub(ps.holdFrom) - surgeHold
	if ps.peak == 0 || idle <= 0 {
		return ps.peak
	}
	halvings := 1 + idle/surgeHalf
	if halvings >= 31 {
		return 0
	}
	return ps.peak >> halvings
}

// urgent: the key's pool missed within surgeWindow, so creates come
// faster than refills in the background have kept up with.
func (ps *state) urgent(now time.Time) bool {
	return !ps.missAt.IsZero() && now.Sub(ps.missAt) < surgeWindow
}

// target is how many ready sandboxes the key wants: enough for the creates
// that come, at its rate, while one boots, twice over, and for its peak;
// no more than the memory budget holds of them.
func (p *Pools) target(ps *state, now time.Time) int {
	ps.decay(now, 0)
	want := max(int(math.Ceil(2*ps.rate*ps.bootTime().Seconds())), ps.held(now))
	if p.budgetMB > 0 && ps.memMB > 0 {
		want = min(want, max(1, p.budgetMB/ps.memMB))
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

// claim records a create whose record is sb, from tpl, and takes a ready
// sandbox of its key, or else returns a waiter for a refill (waitable),
// or neither: the create goes cold.
func (p *Pools) claim(sb *store.Sandbox, tpl *store.Template) (*warmSandbox, *waiter) {
	if len(sb.VolumeMounts) > 0 {
		// A running sandbox cannot gain a mount; nor is this demand a
		// pool could ever meet.
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.poke()
	k := keyFor(sb, tpl)
	ps := p.state(k, sb.Network)
	now := p.now()
	ps.lastUsed = now
	ps.decay(now, 1)
	ps.arrive(now)
	if len(ps.ready) == 0 {
		ps.miss(now, p.max)
		if deadline, ok := p.waitable(ps, now); ok {
			wt := &waiter{k: k, ps: ps, got: make(chan *warmSandbox, 1), deadline: deadline}
			ps.waiters = append(ps.waiters, wt)
			return nil, wt
		}
		return nil, nil
	}
	ps.hits++
	w := ps.ready[0]
	ps.ready = ps.ready[1:]
	return w, nil
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
	now := p.now()
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

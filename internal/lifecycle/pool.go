package lifecycle

import (
	"context"
	"encoding/json"
	"math"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// Warm pools: sandboxes booted ahead of the creates that will want them.
// A pooled sandbox is a backend instance with its final id (E2B's ids are
// the server's to choose), envd up but not yet initialised, and the
// template's start command ready; it has no record in the store, so no
// list, quota, timer or metrics sampler sees it, and a restart destroys it
// as unknown (Reconcile). A create whose request matches a pool's key
// takes one and only initialises it: envd's token, env vars and user, the
// record, the timer. Each pooled sandbox serves one create and dies with
// it, so nothing of one claim can reach another.
//
// Refills boot in the background (runtime.Spec.Background: the lowest CPU
// priority on the host), so they use only CPU that creates and running
// sandboxes leave idle; a booted one waits in the foreground.
//
// A pool's size follows demand, between Options.PoolMin and
// Options.PoolSize: the larger of the key's create rate (a moving average
// over about 10 s) times the time a pooled sandbox takes to boot, doubled,
// and the largest burst of the last poolIdle (the most creates that came
// within one boot time or a second, which only sandboxes already booted
// can serve).
// All pools together stay within Options.PoolMemoryMB of host memory,
// measured on each pooled sandbox once it is ready.

// poolKey is what a pooled sandbox was made with; a create takes one only
// if its own record would have made the same.
type poolKey struct {
	Template string
	Rootfs   string // the template's build: a rebuild starts a new key and drains the old
	Backend  string
	CPU, Mem int
	Disk     int
	Network  string // the network policy, as JSON
}

type warmSandbox struct {
	sb    *store.Sandbox // the record it was made for: id, resources, policy
	inst  *runtime.Instance
	memMB int // host memory it holds, measured when it was ready
}

// poolState is one key's pool.
type poolState struct {
	ready    []*warmSandbox
	policy   netpolicy.Policy
	pinned   bool // Options.PoolTemplates: never emptied for idleness
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

type pools struct {
	min, max int
	budgetMB int

	mu    sync.Mutex
	byKey map[poolKey]*poolState

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

func newPools(min, max, budgetMB int) *pools {
	return &pools{min: min, max: max, budgetMB: budgetMB, byKey: map[poolKey]*poolState{}, wake: make(chan struct{}, 1)}
}

// decay brings the key's create rate to now, adding arrivals.
func (ps *poolState) decay(now time.Time, arrivals float64) {
	if !ps.rateAt.IsZero() {
		ps.rate *= math.Exp(-now.Sub(ps.rateAt).Seconds() / rateWindow.Seconds())
	}
	ps.rate += arrivals / rateWindow.Seconds()
	ps.rateAt = now
}

// bootTime is how long a pooled sandbox of the key takes to boot; a
// second until one has.
func (ps *poolState) bootTime() time.Duration {
	if ps.boot == 0 {
		return time.Second
	}
	return ps.boot
}

// arrive records a create at now in the key's burst window: a boot time,
// and at least a second (creates sent at once reach the server spread
// over a few hundred milliseconds, longer than a runc boot).
func (ps *poolState) arrive(now time.Time) {
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
func (p *pools) target(ps *poolState, now time.Time) int {
	ps.decay(now, 0)
	want := int(math.Ceil(2 * ps.rate * ps.bootTime().Seconds()))
	if now.Sub(ps.burstAt) <= poolIdle {
		want = max(want, ps.burst)
	}
	return max(p.min, min(p.max, want))
}

// heldMB is the host memory all pools hold; callers hold p.mu.
func (p *pools) heldMB() int {
	n := 0
	for _, ps := range p.byKey {
		for _, w := range ps.ready {
			n += w.memMB
		}
	}
	return n
}

func keyFor(sb *store.Sandbox, tpl *store.Template) poolKey {
	net, _ := json.Marshal(sb.Network)
	return poolKey{Template: tpl.ID, Rootfs: tpl.RootfsPath, Backend: sb.Backend,
		CPU: sb.CPUCount, Mem: sb.MemoryMB, Disk: sb.DiskMB, Network: string(net)}
}

// take returns a pooled sandbox for key, or nil, and records the demand.
func (p *pools) take(key poolKey, policy netpolicy.Policy) *warmSandbox {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.poke()
	ps := p.state(key, policy)
	now := time.Now()
	ps.lastUsed = now
	ps.decay(now, 1)
	ps.arrive(now)
	if len(ps.ready) == 0 {
		ps.misses++
		return nil
	}
	ps.hits++
	w := ps.ready[0]
	ps.ready = ps.ready[1:]
	return w
}

// state returns key's pool, made if new; callers hold p.mu.
func (p *pools) state(key poolKey, policy netpolicy.Policy) *poolState {
	ps := p.byKey[key]
	if ps == nil {
		ps = &poolState{policy: policy.Clone()}
		p.byKey[key] = ps
	}
	return ps
}

func (p *pools) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// claimWarm gives sb a pooled sandbox of key's pool if one is ready: true
// when sb is now live. A pooled sandbox that fails its initialisation is
// destroyed and the create goes on cold.
func (m *Manager) claimWarm(ctx context.Context, sb *store.Sandbox, key poolKey, tpl *store.Template, backend runtime.Backend) bool {
	w := m.pools.take(key, sb.Network)
	if w == nil {
		return false
	}
	start := time.Now()
	sb.ID, sb.IP = w.sb.ID, ""
	ctx = log.With(ctx, "sandbox", sb.ID, "template", tpl.ID, "runtime", sb.Backend)
	t := log.NewPhases()
	if err := m.register(ctx, sb, tpl, backend, w.inst, t); err != nil {
		log.G(ctx).Warn("pooled sandbox failed; starting one cold", "err", err)
		m.destroy(context.WithoutCancel(ctx), backend, sb.ID)
		sb.ID = newID()
		return false
	}
	log.G(ctx).Info("sandbox created from the pool", "ip", w.inst.IP, "took", time.Since(start))
	log.G(ctx).Debug("sandbox create steps", "steps", t.String())
	return true
}

// PoolStats reports every pool; none without pools.
func (m *Manager) PoolStats() []sandbox.PoolStat {
	if m.pools == nil {
		return nil
	}
	m.pools.mu.Lock()
	defer m.pools.mu.Unlock()
	now := time.Now()
	var out []sandbox.PoolStat
	for key, ps := range m.pools.byKey {
		st := sandbox.PoolStat{Template: key.Template, Runtime: key.Backend, Ready: len(ps.ready),
			Target: m.pools.target(ps, now), Hits: ps.hits, Misses: ps.misses}
		for _, w := range ps.ready {
			st.HeldMB += w.memMB
		}
		out = append(out, st)
	}
	return out
}

package sandbox

import (
	"context"
	"encoding/json"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/runtime"
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
// A pool's size follows demand: the key's create rate (a moving average
// over about 10 s) times the time a pooled sandbox takes to boot,
// doubled, between Options.PoolMin and Options.PoolSize; and all pools
// together stay within Options.PoolMemoryMB of host memory, measured on
// each pooled sandbox once it is ready.

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
	lastUsed time.Time
	rate     float64   // creates per second, decaying with rateWindow
	rateAt   time.Time // when rate was last brought up to date
	boot     time.Duration
	hits     int64
	misses   int64
}

type pools struct {
	min, max int
	budgetMB int

	mu    sync.Mutex
	byKey map[poolKey]*poolState

	creating atomic.Int64 // user creates in flight: refilling waits for none
	wake     chan struct{}
}

const (
	// poolIdle is how long a key may go without creates before its pool
	// is emptied.
	poolIdle = 10 * time.Minute
	// rateWindow is the time constant of a key's create rate: short
	// enough that a run of creates raises the pool while it lasts.
	rateWindow = 10 * time.Second
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

// target is how many ready sandboxes the key wants: enough for the creates
// that come, at its rate, while one boots, twice over.
func (p *pools) target(ps *poolState, now time.Time) int {
	ps.decay(now, 0)
	boot := ps.boot
	if boot == 0 {
		boot = time.Second
	}
	want := int(math.Ceil(2 * ps.rate * boot.Seconds()))
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
	ps := p.byKey[key]
	if ps == nil {
		ps = &poolState{policy: policy.Clone()}
		p.byKey[key] = ps
	}
	now := time.Now()
	ps.lastUsed = now
	ps.decay(now, 1)
	if len(ps.ready) == 0 {
		ps.misses++
		return nil
	}
	ps.hits++
	w := ps.ready[0]
	ps.ready = ps.ready[1:]
	return w
}

func (p *pools) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// claimWarm gives sb a pooled sandbox if one matches: true when sb is now
// live. A pooled sandbox that fails its initialisation is destroyed and
// the create goes on cold.
func (m *Manager) claimWarm(ctx context.Context, sb *store.Sandbox, tpl *store.Template, backend runtime.Backend) (bool, error) {
	if m.pools == nil {
		return false, nil
	}
	w := m.pools.take(keyFor(sb, tpl), sb.Network)
	if w == nil {
		return false, nil
	}
	start := time.Now()
	sb.ID, sb.IP = w.sb.ID, ""
	ctx = log.With(ctx, "sandbox", sb.ID, "template", tpl.ID, "runtime", sb.Backend)
	t := log.NewPhases()
	if err := m.register(ctx, sb, tpl, backend, w.inst, t); err != nil {
		log.G(ctx).Warn("pooled sandbox failed; starting one cold", "err", err)
		m.destroy(context.WithoutCancel(ctx), backend, sb.ID)
		sb.ID = newID()
		return false, nil
	}
	log.G(ctx).Info("sandbox created from the pool", "ip", w.inst.IP, "took", time.Since(start))
	log.G(ctx).Debug("sandbox create steps", "steps", t.String())
	return true, nil
}

// RunPools keeps the pools filled until ctx ends, then destroys what they
// hold. A pool is refilled one sandbox at a time, and a refill starts only
// while no create is in flight (one already booting goes on).
func (m *Manager) RunPools(ctx context.Context) {
	if m.pools == nil {
		return
	}
	defer m.drainPools(context.WithoutCancel(ctx), func(poolKey) bool { return true })
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.pools.wake:
		case <-tick.C:
		}
		m.drainPools(ctx, m.stalePool)
		for ctx.Err() == nil {
			key, ok, surplus := m.pools.wanting()
			for _, w := range surplus {
				m.destroy(ctx, m.opts.Backends[w.sb.Backend], w.sb.ID)
			}
			// Creates in flight come first; the gap after one ends is
			// the refill's (create pokes the loop then).
			if !ok || m.pools.creating.Load() > 0 {
				break
			}
			if err := m.warmOne(ctx, key); err != nil {
				log.G(ctx).Warn("warming a pooled sandbox", "template", key.Template, "err", err)
				break // the next tick tries again
			}
		}
	}
}

// wanting returns a key whose pool is short of its target, an empty one
// first, if the memory budget has room for one more. Sandboxes above a
// target that fell are taken out and returned, for destroying.
func (p *pools) wanting() (key poolKey, ok bool, surplus []*warmSandbox) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for _, ps := range p.byKey {
		if t := p.target(ps, now); len(ps.ready) > t {
			surplus = append(surplus, ps.ready[t:]...)
			ps.ready = ps.ready[:t]
		}
	}
	if p.budgetMB > 0 && p.heldMB() >= p.budgetMB {
		return poolKey{}, false, surplus
	}
	for k, ps := range p.byKey {
		if len(ps.ready) == 0 && p.target(ps, now) > 0 {
			return k, true, surplus
		}
	}
	for k, ps := range p.byKey {
		if len(ps.ready) < p.target(ps, now) {
			return k, true, surplus
		}
	}
	return poolKey{}, false, surplus
}

// stalePool: the key's template was rebuilt or deleted, or no create
// wanted it for poolIdle.
func (m *Manager) stalePool(key poolKey) bool {
	m.pools.mu.Lock()
	ps := m.pools.byKey[key]
	idle := ps == nil || time.Since(ps.lastUsed) > poolIdle
	m.pools.mu.Unlock()
	if idle {
		return true
	}
	tpl, err := m.opts.Store.GetTemplate(context.Background(), key.Template)
	return errdefs.IsNotFound(err) || (err == nil && tpl.RootfsPath != key.Rootfs)
}

// drainPools destroys the pooled sandboxes of every key stale says, and
// forgets the key.
func (m *Manager) drainPools(ctx context.Context, stale func(poolKey) bool) {
	m.pools.mu.Lock()
	keys := make([]poolKey, 0, len(m.pools.byKey))
	for key := range m.pools.byKey {
		keys = append(keys, key)
	}
	m.pools.mu.Unlock()
	for _, key := range keys {
		if !stale(key) {
			continue
		}
		m.pools.mu.Lock()
		var ws []*warmSandbox
		if ps := m.pools.byKey[key]; ps != nil {
			ws = ps.ready
		}
		delete(m.pools.byKey, key)
		m.pools.mu.Unlock()
		for _, w := range ws {
			m.destroy(ctx, m.opts.Backends[key.Backend], w.sb.ID)
		}
	}
}

// warmOne boots one sandbox for key's pool: the instance a create from
// the template with default settings would start, without envd's /init.
func (m *Manager) warmOne(ctx context.Context, key poolKey) error {
	tpl, err := m.opts.Store.GetTemplate(ctx, key.Template)
	if err != nil {
		return err
	}
	backend, ok := m.opts.Backends[key.Backend]
	if !ok || tpl.RootfsPath != key.Rootfs {
		return nil // stale: the next drain removes it
	}
	m.pools.mu.Lock()
	var policy netpolicy.Policy
	if ps := m.pools.byKey[key]; ps != nil {
		policy = ps.policy.Clone()
	}
	m.pools.mu.Unlock()
	sb := &store.Sandbox{ID: newID(), TemplateID: tpl.ID, Backend: key.Backend,
		CPUCount: key.CPU, MemoryMB: key.Mem, DiskMB: key.Disk, Network: policy}
	start := time.Now()
	inst, err := backend.Create(ctx, m.templateSpec(sb, tpl, backend))
	if err != nil {
		return err
	}
	if err := m.waitReady(ctx, inst.IP, sb, tpl); err != nil {
		m.destroy(context.WithoutCancel(ctx), backend, sb.ID)
		return err
	}
	w := &warmSandbox{sb: sb, inst: inst, memMB: key.Mem}
	if st, err := backend.Stats(ctx, sb.ID); err == nil {
		w.memMB = int((st.MemoryUsed + st.MemoryCache) >> 20)
	}
	m.pools.mu.Lock()
	defer m.pools.mu.Unlock()
	ps := m.pools.byKey[key]
	if ps == nil {
		go m.destroy(context.WithoutCancel(ctx), backend, sb.ID) // drained meanwhile
		return nil
	}
	took := time.Since(start)
	if ps.boot == 0 {
		ps.boot = took
	} else {
		ps.boot = (3*ps.boot + took) / 4
	}
	ps.ready = append(ps.ready, w)
	log.G(ctx).Info("pooled sandbox ready", "sandbox", sb.ID, "template", tpl.ID, "took", took.Round(time.Millisecond),
		"ready", len(ps.ready), "target", m.pools.target(ps, time.Now()), "memMB", w.memMB, "hits", ps.hits, "misses", ps.misses)
	return nil
}

// PoolStat is one pool's state, for metrics and logs.
type PoolStat struct {
	Template, Runtime     string
	Ready, Target, HeldMB int
	Hits, Misses          int64
}

// PoolStats reports every pool; none without pools.
func (m *Manager) PoolStats() []PoolStat {
	if m.pools == nil {
		return nil
	}
	m.pools.mu.Lock()
	defer m.pools.mu.Unlock()
	now := time.Now()
	var out []PoolStat
	for key, ps := range m.pools.byKey {
		st := PoolStat{Template: key.Template, Runtime: key.Backend, Ready: len(ps.ready),
			Target: m.pools.target(ps, now), Hits: ps.hits, Misses: ps.misses}
		for _, w := range ps.ready {
			st.HeldMB += w.memMB
		}
		out = append(out, st)
	}
	return out
}

package sandbox

import (
	"context"
	"encoding/json"
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
// This is the first part of the warm pools: a fixed number per key seen
// in creates (Options.PoolSize), refilled one at a time while no create
// is in flight. Sizing by demand and a memory budget are still to come.

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
	sb   *store.Sandbox // the record it was made for: id, resources, policy
	inst *runtime.Instance
}

type pools struct {
	size int

	mu       sync.Mutex
	ready    map[poolKey][]*warmSandbox
	policy   map[poolKey]netpolicy.Policy
	lastUsed map[poolKey]time.Time

	creating     atomic.Int64 // user creates in flight: refilling waits for none
	hits, misses atomic.Int64
	wake         chan struct{}
}

// poolIdle is how long a key may go without creates before its pool is
// emptied.
const poolIdle = 10 * time.Minute

func newPools(size int) *pools {
	return &pools{
		size:     size,
		ready:    map[poolKey][]*warmSandbox{},
		policy:   map[poolKey]netpolicy.Policy{},
		lastUsed: map[poolKey]time.Time{},
		wake:     make(chan struct{}, 1),
	}
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
	p.lastUsed[key] = time.Now()
	p.policy[key] = policy.Clone()
	defer p.poke()
	ws := p.ready[key]
	if len(ws) == 0 {
		p.misses.Add(1)
		return nil
	}
	p.hits.Add(1)
	w := ws[0]
	p.ready[key] = ws[1:]
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
// hold. A pool is refilled one sandbox at a time, and only while no
// create is in flight: warming never competes with a real create.
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
		for {
			key, ok := m.pools.wanting()
			if !ok || ctx.Err() != nil {
				break
			}
			if m.pools.creating.Load() > 0 {
				break // the next wake or tick tries again
			}
			if err := m.warmOne(ctx, key); err != nil {
				log.G(ctx).Warn("warming a pooled sandbox", "template", key.Template, "err", err)
				break
			}
		}
	}
}

// wanting returns a key whose pool is short of its size.
func (p *pools) wanting() (poolKey, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key := range p.lastUsed {
		if len(p.ready[key]) < p.size {
			return key, true
		}
	}
	return poolKey{}, false
}

// stalePool: the key's template was rebuilt or deleted, or no create
// wanted it for poolIdle.
func (m *Manager) stalePool(key poolKey) bool {
	m.pools.mu.Lock()
	idle := time.Since(m.pools.lastUsed[key]) > poolIdle
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
	keys := make([]poolKey, 0, len(m.pools.lastUsed))
	for key := range m.pools.lastUsed {
		keys = append(keys, key)
	}
	m.pools.mu.Unlock()
	for _, key := range keys {
		if !stale(key) {
			continue
		}
		m.pools.mu.Lock()
		ws := m.pools.ready[key]
		delete(m.pools.ready, key)
		delete(m.pools.lastUsed, key)
		delete(m.pools.policy, key)
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
	policy := m.pools.policy[key].Clone()
	m.pools.mu.Unlock()
	sb := &store.Sandbox{ID: newID(), TemplateID: tpl.ID, Backend: key.Backend,
		CPUCount: key.CPU, MemoryMB: key.Mem, DiskMB: key.Disk, Network: policy}
	spec := m.spec(sb, tpl)
	m.guardArgs(&spec, backend)
	if len(tpl.Layers) > 1 {
		spec.From = &runtime.Snapshot{Layers: tpl.Layers}
	}
	inst, err := backend.Create(ctx, spec)
	if err != nil {
		return err
	}
	if err := m.waitReady(ctx, inst.IP, sb, tpl); err != nil {
		m.destroy(context.WithoutCancel(ctx), backend, sb.ID)
		return err
	}
	m.pools.mu.Lock()
	defer m.pools.mu.Unlock()
	if _, live := m.pools.lastUsed[key]; !live {
		go m.destroy(context.WithoutCancel(ctx), backend, sb.ID) // drained meanwhile
		return nil
	}
	m.pools.ready[key] = append(m.pools.ready[key], &warmSandbox{sb: sb, inst: inst})
	log.G(ctx).Debug("pooled sandbox ready", "sandbox", sb.ID, "template", tpl.ID,
		"ready", len(m.pools.ready[key]), "hits", m.pools.hits.Load(), "misses", m.pools.misses.Load())
	return nil
}

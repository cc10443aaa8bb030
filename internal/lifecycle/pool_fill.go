package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	goruntime "runtime"
	"sync"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// RunPools keeps the pools filled until ctx ends, then destroys what they
// hold. Refills boot in the background, up to one per CPU at a time: at
// the lowest priority, more at once only use more of the idle CPU.
func (m *Manager) RunPools(ctx context.Context) {
	if m.pools == nil {
		return
	}
	defer m.drainPools(context.WithoutCancel(ctx), func(poolKey) bool { return true })
	var wg sync.WaitGroup
	defer wg.Wait() // before the drain: a boot in flight ends in a pool
	slots := make(chan struct{}, goruntime.NumCPU())
	m.prewarm(ctx, true)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.pools.wake:
		case <-tick.C:
		}
		m.drainPools(ctx, func(k poolKey) bool { return m.stalePool(ctx, k) })
		m.prewarm(ctx, false) // again: a rebuild drained the last build's
		for ctx.Err() == nil {
			free := false
			select {
			case slots <- struct{}{}:
				free = true
			default: // all busy: the one that ends pokes the loop
			}
			if !free {
				break
			}
			key, ok, surplus := m.pools.wanting()
			for _, w := range surplus {
				m.destroy(ctx, m.opts.Backends[w.sb.Backend], w.sb.ID)
			}
			if !ok {
				<-slots
				break
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := m.warmOne(ctx, key)
				m.pools.booted(key, err)
				<-slots
				m.pools.poke()
				if err != nil && ctx.Err() == nil {
					log.G(ctx).Warn("warming a pooled sandbox", "template", key.Template, "err", err)
				}
			}()
		}
	}
}

// wanting returns a key whose pool, with the sandboxes booting for it, is
// short of its target, an empty one first, if the memory budget has room
// for one more (it counts ready sandboxes: boots in flight may pass it by
// one per CPU), and counts one more booting for it. Sandboxes above a
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
	short := func(ps *poolState) bool {
		return now.After(ps.retryAt) && len(ps.ready)+ps.booting < p.target(ps, now)
	}
	for _, emptyFirst := range []bool{true, false} {
		for k, ps := range p.byKey {
			if short(ps) && (!emptyFirst || len(ps.ready)+ps.booting == 0) {
				ps.booting++
				return k, true, surplus
			}
		}
	}
	return poolKey{}, false, surplus
}

// booted ends a boot that wanting counted; after a failure the key waits
// a while before the next.
func (p *pools) booted(key poolKey, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ps := p.byKey[key]; ps != nil {
		// A drained key made again counted nothing of this boot.
		ps.booting = max(0, ps.booting-1)
		if err != nil {
			ps.retryAt = time.Now().Add(poolRetry)
		}
	}
}

// prewarm makes the pools of Options.PoolTemplates, keyed as a create
// with default settings would be: what the SDKs' Sandbox.create() sends.
// It says which it skips the first time.
func (m *Manager) prewarm(ctx context.Context, first bool) {
	for _, name := range m.opts.PoolTemplates {
		tpl, err := store.ResolveTemplate(ctx, m.opts.Store, name)
		if err != nil || tpl.RootfsPath == "" {
			if first {
				log.G(ctx).Info("not pre-warming a pool: no such template built", "template", name, "err", err)
			}
			continue
		}
		backend := m.backendOf(tpl, nil)
		if _, ok := m.opts.Backends[backend]; !ok {
			continue
		}
		req := sandbox.CreateRequest{TemplateID: name, Network: netpolicy.Default()}
		sb := newRecord(req, tpl, nil, backend, m.opts)
		m.pools.mu.Lock()
		ps := m.pools.state(keyFor(sb, tpl), sb.Network)
		ps.pinned, ps.lastUsed = true, time.Now()
		m.pools.mu.Unlock()
	}
}

// stalePool: the key's template was rebuilt or deleted, or no create
// wanted it for poolIdle.
func (m *Manager) stalePool(ctx context.Context, key poolKey) bool {
	m.pools.mu.Lock()
	ps := m.pools.byKey[key]
	idle := ps == nil || (!ps.pinned && time.Since(ps.lastUsed) > poolIdle)
	m.pools.mu.Unlock()
	if idle {
		return true
	}
	tpl, err := m.opts.Store.GetTemplate(ctx, key.Template)
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
	if err := m.hostRoom(ctx, key.Mem, key.Disk); err != nil {
		return fmt.Errorf("no room for a pooled sandbox: %w", err)
	}
	sb := &store.Sandbox{ID: newID(), TemplateID: tpl.ID, Backend: key.Backend,
		CPUCount: key.CPU, MemoryMB: key.Mem, DiskMB: key.Disk, Network: policy}
	start := time.Now()
	if tpl, err = m.localTemplate(ctx, tpl); err != nil {
		return err
	}
	spec := m.templateSpec(sb, tpl, backend)
	spec.Background = true
	inst, err := backend.Create(ctx, spec)
	if err != nil {
		return err
	}
	err = m.waitReady(ctx, inst.IP, sb, tpl)
	if err == nil {
		err = m.quietGuard(ctx, backend, inst)
	}
	if err == nil {
		// Booted: the background priority has done its work, and the
		// claim, which must be quick, finds nothing left to change.
		err = backend.Foreground(ctx, sb.ID)
	}
	if err != nil {
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

// quietGuard wakes a pooled sandbox's OOM guard once, which it takes for
// the host's memory alerts being armed: until then it polls memory every
// 50 ms (2 to 3 % of a core per pooled sandbox). The alerts are armed at
// the claim; a pooled sandbox runs no user code meanwhile, and its cgroup
// still bounds it. envd may not listen yet (a template without a start
// command has nothing to wait for), so a refused connection is retried.
func (m *Manager) quietGuard(ctx context.Context, backend runtime.Backend, inst *runtime.Instance) error {
	if !backend.Capabilities().MemoryAlerts || m.opts.PollOOMGuard {
		return nil
	}
	url := "http://" + netip.AddrPortFrom(inst.IP, m.opts.EnvdPort).String() + "/memory/check"
	ctx, cancel := context.WithTimeout(ctx, m.opts.EnvdReadyTimeout)
	defer cancel()
	err := untilEnvd(ctx, func() error { return postEnvd(ctx, m.client, url, nil, "") },
		func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) })
	if err != nil {
		return fmt.Errorf("waking the OOM guard: %w", err)
	}
	return nil
}

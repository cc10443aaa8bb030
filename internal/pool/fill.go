package pool

import (
	"context"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/store"
)

// Run keeps the pools filled until ctx ends, then destroys what they
// hold; every boot it started has ended when it returns. Up to p.slots
// refills boot at once in the background: at the lowest priority, more at
// once only use more of the idle CPU; besides them, up to p.fgSlots in
// the foreground (see the package comment).
func (p *Pools) Run(ctx context.Context) {
	if p == nil {
		return
	}
	defer p.drain(context.WithoutCancel(ctx), func(key) bool { return true })
	var wg sync.WaitGroup
	defer wg.Wait() // before the drain: a boot in flight ends in a pool
	p.prewarm(ctx, true)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-tick.C:
		}
		// Refills first: a claim's poke must not wait on the store.
		p.fill(ctx, &wg)
		p.drain(ctx, func(k key) bool { return p.stale(ctx, k) })
		p.prewarm(ctx, false) // again: a rebuild drained the last build's
		p.fill(ctx, &wg)
	}
}

// fill starts boots for the keys short of their target while a slot is
// free, and destroys what targets that fell left over.
func (p *Pools) fill(ctx context.Context, wg *sync.WaitGroup) {
	for ctx.Err() == nil {
		k, fg, ok, surplus := p.wanting()
		for _, w := range surplus {
			p.machine.DestroyPooled(ctx, w.backend, w.id)
		}
		if !ok { // nothing short, or no slot: a boot that ends pokes the loop
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := p.warmOne(ctx, k, fg)
			p.booted(k, fg, err)
			p.poke()
			if err != nil && ctx.Err() == nil {
				log.G(ctx).Warn("warming a pooled sandbox", "template", k.Template, "err", err)
			}
		}()
	}
}

// wanting returns a key whose pool, with the sandboxes booting for it, is
// short of its target, if a slot is free and the memory budget has room
// for one more (it counts ready sandboxes: boots in flight may pass it),
// and counts one more booting for it; fg says it boots in the foreground.
// An urgent key comes first and takes a foreground slot while one is free
// (background ones may all be held by boots a cold create starves), then
// an empty key. Sandboxes above a target that fell are taken out and
// returned, for destroying.
func (p *Pools) wanting() (k key, fg, ok bool, surplus []surplusSandbox) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	for pk, ps := range p.byKey {
		if t := p.target(ps, now); len(ps.ready) > t {
			for _, w := range ps.ready[t:] {
				surplus = append(surplus, surplusSandbox{backend: pk.Backend, warmSandbox: w})
			}
			ps.ready = ps.ready[:t]
		}
	}
	canFG, canBG := p.fg < p.fgSlots, p.bg < p.slots
	if (!canFG && !canBG) || (p.budgetMB > 0 && p.heldMB() >= p.budgetMB) {
		return key{}, false, false, surplus
	}
	// rank orders the keys short of their target: 0 urgent, 1 empty,
	// 2 the rest; -1 not short, or no slot for it.
	rank := func(ps *state) int {
		switch {
		case !now.After(ps.retryAt) || len(ps.ready)+ps.booting-len(ps.waiters) >= p.target(ps, now):
			return -1
		case ps.urgent(now):
			return 0
		case !canBG:
			return -1
		case len(ps.ready)+ps.booting == 0:
			return 1
		}
		return 2
	}
	var best *state
	bestRank := -1
	for pk, ps := range p.byKey {
		r := rank(ps)
		if r < 0 || (best != nil && (r > bestRank || (r == bestRank && ps.booting >= best.booting))) {
			continue
		}
		k, best, bestRank = pk, ps, r
	}
	if best == nil {
		return key{}, false, false, surplus
	}
	best.booting++
	if fg = bestRank == 0 && canFG; fg {
		p.fg++
	} else {
		p.bg++
	}
	best.starts = append(best.starts, bootStart{at: now, fg: fg})
	return k, fg, true, surplus
}

// surplusSandbox is a pooled sandbox a fallen target left over, with the
// runtime that destroys it.
type surplusSandbox struct {
	backend string
	*warmSandbox
}

// booted ends a boot that wanting counted; after a failure the key waits
// a while before the next.
func (p *Pools) booted(k key, fg bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if fg {
		p.fg--
	} else {
		p.bg--
	}
	if ps := p.byKey[k]; ps != nil {
		// A drained key made again counted nothing of this boot.
		ps.booting = max(0, ps.booting-1)
		if err != nil {
			ps.retryAt = p.now().Add(poolRetry)
		}
		ps.booted(fg)
	}
}

// prewarm makes the pools of Options.Templates, keyed as a create with
// default settings would be: what the SDKs' Sandbox.create() sends. It
// says which it skips the first time.
func (p *Pools) prewarm(ctx context.Context, first bool) {
	for _, name := range p.templates {
		tpl, err := store.ResolveTemplate(ctx, p.st, name)
		if err != nil || tpl.RootfsPath == "" {
			if first {
				log.G(ctx).Info("not pre-warming a pool: no such template built", "template", name, "err", err)
			}
			continue
		}
		sb, ok := p.machine.PoolRecord(tpl)
		if !ok {
			continue
		}
		p.mu.Lock()
		ps := p.state(keyFor(sb, tpl), sb.Network)
		ps.pinned, ps.lastUsed = true, p.now()
		p.mu.Unlock()
	}
}

// stale: the key's template was rebuilt or deleted, or no create wanted
// it for poolIdle.
func (p *Pools) stale(ctx context.Context, k key) bool {
	p.mu.Lock()
	ps := p.byKey[k]
	idle := ps == nil || (!ps.pinned && p.now().Sub(ps.lastUsed) > poolIdle)
	p.mu.Unlock()
	if idle {
		return true
	}
	tpl, err := p.st.GetTemplate(ctx, k.Template)
	return errdefs.IsNotFound(err) || (err == nil && tpl.RootfsPath != k.Rootfs)
}

// drain destroys the pooled sandboxes of every key stale says, and
// forgets the key.
func (p *Pools) drain(ctx context.Context, stale func(key) bool) {
	p.mu.Lock()
	keys := make([]key, 0, len(p.byKey))
	for k := range p.byKey {
		keys = append(keys, k)
	}
	p.mu.Unlock()
	for _, k := range keys {
		if !stale(k) {
			continue
		}
		p.mu.Lock()
		var ws []*warmSandbox
		if ps := p.byKey[k]; ps != nil {
			ws = ps.ready
			ps.release(0)
		}
		delete(p.byKey, k)
		p.mu.Unlock()
		for _, w := range ws {
			p.machine.DestroyPooled(ctx, k.Backend, w.id)
		}
	}
}

// warmOne boots one sandbox for k's pool: the instance a create from the
// template with k's settings would start, without envd's /init; in the
// foreground when fg.
func (p *Pools) warmOne(ctx context.Context, k key, fg bool) error {
	tpl, err := p.st.GetTemplate(ctx, k.Template)
	if err != nil {
		return err
	}
	if tpl.RootfsPath != k.Rootfs {
		return nil // stale: the next drain removes it
	}
	p.mu.Lock()
	sb := &store.Sandbox{TemplateID: tpl.ID, Backend: k.Backend, CPUCount: k.CPU, MemoryMB: k.Mem, DiskMB: k.Disk}
	if ps := p.byKey[k]; ps != nil {
		sb.Network = ps.policy.Clone()
	}
	p.mu.Unlock()
	start := p.now()
	inst, memMB, err := p.machine.BootPooled(ctx, sb, tpl, fg)
	if err != nil {
		return err
	}
	took := p.now().Sub(start)
	if !p.keep(ctx, k, &warmSandbox{id: sb.ID, inst: inst, memMB: memMB}, took) {
		// Drained meanwhile: destroyed here, within the boot Run awaits.
		p.machine.DestroyPooled(context.WithoutCancel(ctx), k.Backend, sb.ID)
	}
	return nil
}

// keep adds a booted sandbox to k's pool; false when k was drained.
func (p *Pools) keep(ctx context.Context, k key, w *warmSandbox, took time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	ps := p.byKey[k]
	if ps == nil {
		return false
	}
	if ps.boot == 0 {
		ps.boot, ps.memMB = took, w.memMB
	} else {
		ps.boot, ps.memMB = (3*ps.boot+took)/4, (3*ps.memMB+w.memMB)/4
	}
	waited := ps.handOver(w)
	if !waited {
		ps.ready = append(ps.ready, w)
	}
	log.G(ctx).Info("pooled sandbox ready", "waiter", waited, "sandbox", w.id, "template", k.Template, "took", took.Round(time.Millisecond),
		"ready", len(ps.ready), "target", p.target(ps, p.now()), "memMB", w.memMB, "hits", ps.hits, "misses", ps.misses)
	return true
}

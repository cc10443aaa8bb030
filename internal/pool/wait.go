package pool

import (
	"context"
	"time"

	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/store"
)

// A create that finds its pool empty while a refill for its key is
// booting waits for that refill when it will be ready sooner than a cold
// boot would take, rather than boot a second copy beside it: on a host of
// few CPUs the two would share them and both finish late. The estimate is
// the key's measured boot time against the refill's age; a key that has
// not booted once yet has none, and its creates go cold. Only refills
// booting in the foreground are waited for: one in the background gets
// only the CPU the foreground leaves, which after a miss (whose refills
// boot in the foreground) may be none for a while. The wait is
// bounded (waitLimit) and ends with the request's context; a refill that
// fails, or a pool drained meanwhile, sends its waiter cold at once. The
// sandbox a waiter gets is the one the refill would have put in the pool.

// waitFloor is the least a waiter waits for its refill: a boot's measured
// time is a moving average and a refill a little late still beats a cold
// boot begun now.
const waitFloor = time.Second

// waiter is a create waiting for a refill of its key.
type waiter struct {
	k        key
	ps       *state
	got      chan *warmSandbox // one send: the refill, or nil (go cold)
	deadline time.Time
}

// waitable says whether a claim at now that missed should wait for one of
// the key's refills, and until when: the refill it would get (the oldest
// in the foreground not already promised to an earlier waiter) ends, by
// the key's boot time, sooner than a cold boot begun now would. Callers
// hold p.mu.
func (p *Pools) waitable(ps *state, now time.Time) (time.Time, bool) {
	fg := ps.fgStarts()
	if p.noWait || ps.boot == 0 || len(ps.waiters) >= len(fg) {
		return time.Time{}, false
	}
	start := fg[len(ps.waiters)]
	left := max(0, ps.boot-now.Sub(start))
	if left >= ps.boot {
		return time.Time{}, false
	}
	// Twice its usual time from its start, or the floor from now.
	return maxTime(start.Add(waitLimit*ps.boot), now.Add(waitFloor)), true
}

// waitLimit is how many of its key's boot times a refill may take before
// its waiter gives up on it and boots cold.
const waitLimit = 2

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// bootStart is when one of a key's refills started, and whether in the
// foreground.
type bootStart struct {
	at time.Time
	fg bool
}

// fgStarts are the starts of the key's refills in the foreground, oldest
// first; callers hold p.mu.
func (ps *state) fgStarts() []time.Time {
	var out []time.Time
	for _, b := range ps.starts {
		if b.fg {
			out = append(out, b.at)
		}
	}
	return out
}

// booted forgets the start of one of the key's refills, ended: the
// oldest of those in the foreground, or not, as fg says (which one ended
// is not known: the oldest is the likeliest). The waiters beyond the
// foreground refills left go cold. Callers hold p.mu.
func (ps *state) booted(fg bool) {
	for i, b := range ps.starts {
		if b.fg == fg {
			ps.starts = append(ps.starts[:i:i], ps.starts[i+1:]...)
			break
		}
	}
	ps.release(len(ps.fgStarts()))
}

// handOver gives a booted sandbox to the key's oldest waiter, if any;
// callers hold p.mu.
func (ps *state) handOver(w *warmSandbox) bool {
	if len(ps.waiters) == 0 {
		return false
	}
	wt := ps.waiters[0]
	ps.waiters = ps.waiters[1:]
	wt.got <- w
	return true
}

// release sends the key's waiters beyond the first n cold, the youngest
// first; callers hold p.mu.
func (ps *state) release(n int) {
	for len(ps.waiters) > n {
		wt := ps.waiters[len(ps.waiters)-1]
		ps.waiters = ps.waiters[:len(ps.waiters)-1]
		wt.got <- nil
	}
}

// await waits for wt's refill until its deadline or ctx's end; nil: the
// create goes cold. A refill handed over as the wait ended is taken,
// unless ctx ended: then it goes back to its pool (or is destroyed, the
// pool gone).
func (p *Pools) await(ctx context.Context, wt *waiter) *warmSandbox {
	timer := time.NewTimer(wt.deadline.Sub(p.now()))
	defer timer.Stop()
	select {
	case w := <-wt.got:
		return w
	case <-timer.C:
	case <-ctx.Done():
	}
	if p.abandon(wt) {
		return nil
	}
	w := <-wt.got // handed over meanwhile
	if w == nil || ctx.Err() == nil {
		return w
	}
	p.putBack(context.WithoutCancel(ctx), wt, w)
	return nil
}

// abandon takes wt out of its key's waiters: false when it was no longer
// there (its refill, or nil, was sent).
func (p *Pools) abandon(wt *waiter) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range wt.ps.waiters {
		if x == wt {
			wt.ps.waiters = append(wt.ps.waiters[:i:i], wt.ps.waiters[i+1:]...)
			return true
		}
	}
	return false
}

// putBack returns a refill a cancelled waiter got to its pool, or
// destroys it when the pool was drained.
func (p *Pools) putBack(ctx context.Context, wt *waiter, w *warmSandbox) {
	p.mu.Lock()
	kept := p.byKey[wt.k] == wt.ps
	if kept && !wt.ps.handOver(w) {
		wt.ps.ready = append([]*warmSandbox{w}, wt.ps.ready...)
	}
	p.mu.Unlock()
	if !kept {
		p.machine.DestroyPooled(ctx, wt.k.Backend, w.id)
	}
}

// Claim hands a create whose record is sb, from tpl, a pooled sandbox of
// the same key if one is ready or, as the package comment says, soon
// will be; it records the demand either way: the manager's
// lifecycle.Claimer. The sandbox is the caller's from then on.
func (p *Pools) Claim(ctx context.Context, sb *store.Sandbox, tpl *store.Template) (id string, inst *runtime.Instance, ok bool) {
	w, wt := p.claim(sb, tpl)
	if wt != nil {
		w = p.await(ctx, wt)
	}
	if w == nil {
		return "", nil, false
	}
	return w.id, w.inst, true
}

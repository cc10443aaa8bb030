package pool

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/store"
)

// sim drives the pools' decisions (Claim, wanting, keep, booted) on a fake
// clock with a fake booter, as Run and a client would, without goroutines:
// a boot takes boot of a CPU's time, which it gets as rates says: one in
// the background only takes what a cold create and the foreground boots
// leave of the host's two CPUs (its CPU priority is the lowest).
type sim struct {
	t        *testing.T
	p        *Pools
	now      time.Time
	boot     time.Duration
	inflight []*simBoot
	n        int // sandboxes booted
	sb       *store.Sandbox
	tpl      *store.Template
	trace    strings.Builder // in claim order: h a hit, w a wait for a refill, m a cold create
	slow     int             // back-to-back creates that took a cold create's time or longer
}

type simBoot struct {
	k    key
	fg   bool
	left time.Duration
}

func newSim(t *testing.T, opts Options, boot time.Duration) *sim {
	s := &sim{t: t, p: New(nil, opts), now: time.Unix(1e9, 0), boot: boot,
		tpl: &store.Template{ID: "code-interpreter-v1", RootfsPath: "/r"},
		sb:  &store.Sandbox{TemplateID: "code-interpreter-v1", Backend: "fake", CPUCount: 2, MemoryMB: 512, Network: netpolicy.Default()}}
	s.p.now = func() time.Time { return s.now }
	s.p.slots, s.p.fgSlots = 2, 2 // a 2-CPU host
	// Pre-warmed, as --pool-templates makes it.
	s.p.state(keyFor(s.sb, s.tpl), s.sb.Network).pinned = true
	s.fill()
	return s
}

// fill starts boots while a slot is free, as Pools.fill does.
func (s *sim) fill() {
	for {
		k, fg, ok, _ := s.p.wanting()
		if !ok {
			return
		}
		s.inflight = append(s.inflight, &simBoot{k: k, fg: fg, left: s.boot})
	}
}

// run lets d pass, a cold create running all the while if cold, ending
// boots (and starting the next) as their time comes.
func (s *sim) run(d time.Duration, cold bool) {
	for {
		fgRate, bgRate := s.rates(cold)
		rate := func(b *simBoot) float64 { return map[bool]float64{true: fgRate, false: bgRate}[b.fg] }
		next, step := -1, d
		for i, b := range s.inflight {
			if r := rate(b); r > 0 {
				if t := time.Duration(float64(b.left) / r); t <= step {
					next, step = i, t
				}
			}
		}
		for _, b := range s.inflight {
			b.left -= time.Duration(float64(step) * rate(b))
		}
		s.now, d = s.now.Add(step), d-step
		if next < 0 {
			return
		}
		b := s.inflight[next]
		s.inflight = append(s.inflight[:next], s.inflight[next+1:]...)
		s.n++
		if !s.p.keep(context.Background(), b.k, &warmSandbox{id: fmt.Sprint("sb", s.n), memMB: 60}, s.boot) {
			s.t.Fatal("a booted sandbox's key was gone")
		}
		s.p.booted(b.k, b.fg, nil)
		s.fill()
	}
}

// rates are how fast a boot in the foreground and one in the background
// progress on the host's two CPUs: a cold create and the foreground boots
// share them evenly, each taking at most one; background boots share what
// is left.
func (s *sim) rates(cold bool) (fg, bg float64) {
	const cpus = 2.0
	var nfg, nbg float64
	for _, b := range s.inflight {
		if b.fg {
			nfg++
		} else {
			nbg++
		}
	}
	busy := nfg
	if cold {
		busy++
	}
	fg = 1.0
	if busy > cpus {
		fg = cpus / busy
	}
	if left := cpus - busy*fg; nbg > 0 && left > 0 {
		bg = min(1, left/nbg)
	}
	return fg, bg
}

// claim is one create: true when the pool served it, at once or after a
// wait for a refill, which it returns; boots go on meanwhile, no cold
// create beside them.
func (s *sim) claim() (ok bool, waited time.Duration) {
	w, wt := s.p.claim(s.sb, s.tpl)
	s.fill() // claim pokes Run
	if wt != nil {
		start := s.now
		w = s.await(wt)
		waited = s.now.Sub(start)
	}
	s.trace.WriteByte(outcome(w, wt))
	return w != nil, waited
}

// await is Pools.await on the fake clock.
func (s *sim) await(wt *waiter) *warmSandbox {
	for len(wt.got) == 0 && s.now.Before(wt.deadline) {
		s.run(min(50*time.Millisecond, wt.deadline.Sub(s.now)), false)
	}
	if len(wt.got) == 0 && s.p.abandon(wt) {
		return nil
	}
	return <-wt.got
}

// backToBack makes n creates one after another: each takes hit when the
// pool serves it (after its wait for a refill, if any), cold (a cold
// create running) when not.
func (s *sim) backToBack(n int, hit, cold time.Duration) {
	for range n {
		if ok, waited := s.claim(); ok {
			s.run(hit, false)
			if waited+hit >= cold {
				s.slow++
			}
		} else {
			s.run(cold, true)
			s.slow++
		}
	}
}

func (s *sim) ready() int {
	n := 0
	for _, ps := range s.p.byKey {
		n += len(ps.ready)
	}
	return n
}

// TestBackToBackCreates: creates one after another, each killed before
// the next (an agent's loop; the code interpreter's numbers on this 2-CPU
// host: a pooled boot of about 3 s, a cold create of 5 s). When refills
// can keep up (4 boots at once against a create a second), the pool
// misses only while it learns, then serves every create. When they cannot
// (a create every 300 ms), most creates are still served: each miss raises
// the target and refills boot in the foreground while it waits.
func TestBackToBackCreates(t *testing.T) {
	tests := []struct {
		name        string
		max         int
		hit         time.Duration
		n, warmup   int
		maxMisses   int // after warmup
		firstMisses int // within warmup, at most
	}{
		{name: "refills keep up", max: 8, hit: 1500 * time.Millisecond, n: 40, warmup: 5, maxMisses: 0, firstMisses: 2},
		{name: "faster than refills", max: 8, hit: 300 * time.Millisecond, n: 40, warmup: 5, maxMisses: 11, firstMisses: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, Options{Min: 1, Max: tc.max}, 3*time.Second)
			s.run(time.Minute, false) // the pre-warmed pool fills
			s.backToBack(tc.n, tc.hit, 5*time.Second)
			tr := s.trace.String()
			first, rest := strings.Count(tr[:tc.warmup], "m"), strings.Count(tr[tc.warmup:], "m")
			t.Logf("claims: %s", tr)
			if first > tc.firstMisses || rest > tc.maxMisses {
				t.Errorf("%d misses in the first %d creates, %d after; want at most %d and %d", first, tc.warmup, rest, tc.firstMisses, tc.maxMisses)
			}
		})
	}
}

// TestBurstAfterQuiet: 20 creates at once, after a quiet minute that
// followed what the pool has seen (a first burst, served cold but for
// one; or a run of back-to-back creates): the pool kept its peak over the
// minute and serves all but at most one. Then, with no creates, it
// shrinks back to its floor within a few minutes, giving back its surplus.
func TestBurstAfterQuiet(t *testing.T) {
	tests := []struct {
		name    string
		history func(s *sim)
	}{
		{name: "a first burst", history: func(s *sim) { s.burst(20) }},
		{name: "back-to-back creates", history: func(s *sim) { s.backToBack(30, time.Second, 5*time.Second) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, Options{Min: 1, Max: 24}, 3*time.Second)
			s.run(time.Minute, false)
			tc.history(s)
			s.run(time.Minute, false)
			s.trace.Reset()
			s.burst(20)
			if misses := strings.Count(s.trace.String(), "m"); misses > 1 {
				t.Errorf("burst of 20 after a quiet minute: %s, %d misses; want at most 1", s.trace.String(), misses)
			}
			s.run(4*time.Minute, false)
			s.fill() // gives the surplus back, as Run's next pass does
			if got := s.ready(); got != 1 {
				t.Errorf("4 minutes without creates: %d ready, want the floor 1", got)
			}
		})
	}
}

// outcome is a claim's letter in sim.trace.
func outcome(w *warmSandbox, wt *waiter) byte {
	switch {
	case w == nil:
		return 'm'
	case wt != nil:
		return 'w'
	}
	return 'h'
}

// burst makes n creates 10 ms apart, at once: those that wait for a
// refill wait side by side while the misses' cold creates run, for 5 s
// after the last.
func (s *sim) burst(n int) {
	var waiting []*waiter
	cold := false
	for range n {
		w, wt := s.p.claim(s.sb, s.tpl)
		s.fill()
		if wt != nil {
			waiting = append(waiting, wt)
			continue
		}
		s.trace.WriteByte(outcome(w, nil))
		cold = cold || w == nil
		s.run(10*time.Millisecond, false)
	}
	s.run(5*time.Second, cold)
	for _, wt := range waiting {
		s.trace.WriteByte(outcome(s.await(wt), wt))
	}
}

// TestWaitForRefill: back-to-back creates that come faster than refills
// (a create every 300 ms on the 2-CPU host, an interpreter's 3 s boot, a
// cold create 5 s): a miss that waits for the refill already booting for
// its key, rather than booting a copy cold beside it, gets its sandbox
// sooner, so fewer creates take a cold create's time, and the 40 take
// less time in all. Compared with the same run where every miss goes
// cold.
func TestWaitForRefill(t *testing.T) {
	tests := []struct {
		name     string
		hit      time.Duration
		maxSlow  int // of 40, waiting
		minFewer int // fewer slow creates than when no miss waits
	}{
		{name: "a create every 300 ms", hit: 300 * time.Millisecond, maxSlow: 4, minFewer: 3},
		{name: "a create every second", hit: time.Second, maxSlow: 2, minFewer: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			slow, took := map[bool]int{}, map[bool]time.Duration{}
			for _, noWait := range []bool{true, false} {
				s := newSim(t, Options{Min: 1, Max: 8}, 3*time.Second)
				s.p.noWait = noWait
				s.run(time.Minute, false)
				start := s.now
				s.backToBack(40, tc.hit, 5*time.Second)
				slow[noWait], took[noWait] = s.slow, s.now.Sub(start)
				t.Logf("no wait %v: %s, %d slow, %s in all", noWait, s.trace.String(), s.slow, took[noWait])
			}
			if slow[false] > tc.maxSlow || slow[true]-slow[false] < tc.minFewer || took[false] >= took[true] {
				t.Errorf("%d slow creates waiting for refills (%s in all), %d going cold (%s); want at most %d, and %d fewer, in less time",
					slow[false], took[false], slow[true], took[true], tc.maxSlow, tc.minFewer)
			}
		})
	}
}

// TestPeakHoldsWhileFilling: on a loaded host (boots of 20 s, the burst's
// cold creates still running a minute after it), refilling 20 takes
// minutes; the peak holds while the pool boots toward it, so the pool
// ends full rather than decaying halfway, and then, with no creates,
// shrinks back to its floor within a few minutes.
func TestPeakHoldsWhileFilling(t *testing.T) {
	s := newSim(t, Options{Min: 1, Max: 24}, 20*time.Second)
	s.run(time.Minute, false)
	s.burst(20)
	s.run(time.Minute, true)
	s.run(3*time.Minute, false)
	if got := s.ready(); got < 19 {
		t.Errorf("4 minutes after a burst of 20 on a slow host: %d ready, want the peak (at least 19)", got)
	}
	s.run(5*time.Minute, false)
	s.fill()
	if got := s.ready(); got != 1 {
		t.Errorf("5 minutes later, no creates: %d ready, want the floor 1", got)
	}
}

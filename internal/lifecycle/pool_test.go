package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"github.com/warren-sandbox/warren/internal/admission"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// poolReady is how many pooled sandboxes are ready, all keys together.
func (m *Manager) poolReady() int {
	m.pools.mu.Lock()
	defer m.pools.mu.Unlock()
	n := 0
	for _, ps := range m.pools.byKey {
		n += len(ps.ready)
	}
	return n
}

// TestPoolClaim: a template's first create is a miss and starts its pool;
// the next one takes the pooled sandbox, whose envd is initialised only
// then, with that create's own env vars and token; the pool refills; the
// pooled sandbox is in no list before it is claimed; a create with other
// settings does not take it; a rebuilt template's pool is drained; and
// stopping the pools destroys what they hold.
func TestPoolClaim(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(o *Options) { o.PoolSize, o.PoolMin = 1, 1 })
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { e.m.RunPools(ctx); close(done) }()

	first := e.create(t, sandbox.CreateRequest{})
	waitPool(t, e.m, 1)
	if n := len(e.envd.calls()); n != 1 {
		t.Fatalf("the pooled sandbox's envd was initialised before a claim: %d /init calls", n)
	}
	if list, _ := e.m.List(e.ctx); len(list) != 1 {
		t.Fatalf("listed %d sandboxes, want only the one created", len(list))
	}
	e.m.pools.mu.Lock()
	var pooled string
	for _, ps := range e.m.pools.byKey {
		pooled = ps.ready[0].sb.ID
	}
	e.m.pools.mu.Unlock()
	if booted, now := e.b.Background(pooled); !booted || now {
		t.Fatalf("the pooled sandbox: booted in the background %v, waits there %v; want true, false", booted, now)
	}

	second := e.create(t, sandbox.CreateRequest{Secure: true, EnvVars: map[string]string{"CLAIM": "2"}})
	if second.ID != pooled || second.ID == first.ID {
		t.Fatalf("second create got %s, want the pooled %s", second.ID, pooled)
	}
	calls := e.envd.calls()
	last := calls[len(calls)-1]
	if last.EnvVars["CLAIM"] != "2" || last.AccessToken != second.EnvdAccessToken || last.AccessToken == "" {
		t.Fatalf("claim's /init = %+v", last)
	}
	if got, err := e.m.Get(e.ctx, second.ID); err != nil || got.State != store.SandboxRunning {
		t.Fatalf("claimed sandbox: %+v, %v", got, err)
	}
	waitPool(t, e.m, 1) // refilled
	if st := e.m.PoolStats(); len(st) != 1 || st[0].Hits != 1 || st[0].Misses != 1 || st[0].Ready != 1 {
		t.Fatalf("pool stats %+v; want 1 hit, 1 miss, 1 ready", st)
	}

	other := e.create(t, sandbox.CreateRequest{CPUCount: 2})
	if other.ID == pooled {
		t.Fatal("a create with other resources took the pooled sandbox")
	}

	tpl, err := e.st.GetTemplate(e.ctx, "base")
	if err != nil {
		t.Fatal(err)
	}
	tpl.RootfsPath = t.TempDir() // a rebuild
	if err := e.st.PutTemplate(e.ctx, tpl); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		if n := e.m.poolReady(); n != 0 {
			return fmt.Errorf("%d pooled sandboxes of the old build left", n)
		}
		return nil
	})

	cancel()
	<-done
	if got, want := e.instances(t), 3; got != want {
		t.Fatalf("%d instances after the pools stopped, want the %d created", got, want)
	}
}

func waitPool(t *testing.T, m *Manager, n int) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, func() error {
		if got := m.poolReady(); got != n {
			return fmt.Errorf("%d pooled sandboxes ready, want %d", got, n)
		}
		return nil
	})
}

// TestPoolPrewarm: a template in PoolTemplates has its pool filled before
// any create, for the settings an SDK's plain Sandbox.create() sends, so
// the first such create takes a pooled sandbox; the pool is not emptied
// for idleness.
func TestPoolPrewarm(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(o *Options) {
		o.PoolSize, o.PoolMin, o.PoolTemplates = 2, 1, []string{"py", "missing"}
	})
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	go e.m.RunPools(ctx)
	waitPool(t, e.m, 1)
	if n := len(e.envd.calls()); n != 0 {
		t.Fatalf("%d /init calls before any create", n)
	}
	sb := e.create(t, sandbox.CreateRequest{TemplateID: "py", Network: netpolicy.Policy{Egress: netpolicy.Egress{AllowInternet: true}}})
	if st := e.m.PoolStats(); len(st) != 1 || st[0].Hits != 1 || st[0].Misses != 0 {
		t.Fatalf("first create %s: pool stats %+v, want a hit", sb.ID, st)
	}
	e.m.pools.mu.Lock()
	var key poolKey
	for k, ps := range e.m.pools.byKey {
		key = k
		ps.lastUsed = time.Now().Add(-2 * poolIdle)
	}
	e.m.pools.mu.Unlock()
	if e.m.stalePool(context.Background(), key) {
		t.Error("a pre-warmed pool is stale after poolIdle without creates")
	}
}

// TestPoolTarget: a pool's size follows its key's create rate times the
// boot time and the largest recent burst, between the floor and the
// ceiling, and decays when creates stop; the memory budget stops refills.
func TestPoolTarget(t *testing.T) {
	p := newPools(1, 8, 100)
	ps := &poolState{boot: 2 * time.Second}
	now := time.Now()
	if got := p.target(ps, now); got != 1 {
		t.Errorf("no creates: target %d, want the floor 1", got)
	}
	ps.decay(now, 10) // a create a second for the last 10 s
	if got := p.target(ps, now); got != 4 {
		t.Errorf("1 create/s, 2 s boots: target %d, want 4", got)
	}
	ps.decay(now, 600)
	if got := p.target(ps, now); got != 8 {
		t.Errorf("a burst: target %d, want the ceiling 8", got)
	}
	if got := p.target(ps, now.Add(30*time.Minute)); got != 1 {
		t.Errorf("30 minutes later: target %d, want the floor", got)
	}

	p.max = 50
	ps = &poolState{boot: time.Second}
	for i := range 20 {
		ps.arrive(now.Add(time.Duration(i) * time.Millisecond))
	}
	ps.arrive(now.Add(5 * time.Second)) // alone: the burst stays 20
	if got := p.target(ps, now.Add(5*time.Second)); got != 20 {
		t.Errorf("after a burst of 20 within a boot: target %d, want 20", got)
	}
	if got := p.target(ps, now.Add(poolIdle+time.Minute)); got != 1 {
		t.Errorf("a burst older than poolIdle: target %d, want the floor", got)
	}
	p.max = 8

	key := poolKey{Template: "t"}
	p.byKey[key] = &poolState{rate: 1, rateAt: time.Now(), boot: 2 * time.Second,
		ready: []*warmSandbox{{memMB: 60}, {memMB: 60}}}
	if _, ok, _ := p.wanting(); ok {
		t.Error("refilling past the memory budget")
	}
	p.budgetMB = 1000
	if k, ok, _ := p.wanting(); !ok || k != key {
		t.Errorf("wanting = %v, %v; want the key short of its target", k, ok)
	}
	p.byKey[key].rate = 0
	p.min = 0
	if _, ok, surplus := p.wanting(); ok || len(surplus) != 2 || len(p.byKey[key].ready) != 0 {
		t.Errorf("a pool whose demand went: ok %v, %d surplus, %d left", ok, len(surplus), len(p.byKey[key].ready))
	}
}

// TestPoolClaimSkipsTheQueue: while every start's turn is taken (a busy
// machine), a create that a pooled sandbox serves goes through at once,
// while a cold one waits for a turn and is refused when none comes.
func TestPoolClaimSkipsTheQueue(t *testing.T) {
	t.Parallel()
	starts := admission.New(admission.Options{Slots: 1, MaxWait: 200 * time.Millisecond})
	e := newEnvWith(t, func(o *Options) {
		o.PoolSize, o.PoolMin, o.PoolTemplates = 1, 1, []string{"base"}
		o.Starts = starts
	})
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	go e.m.RunPools(ctx)
	waitPool(t, e.m, 1)
	// RunPools keeps running: stopping it drains the pool, racing the
	// claim below. Its refill after the claim takes no turn.
	held, err := starts.Acquire(e.ctx, "test", "other")
	if err != nil {
		t.Fatal(err)
	}
	defer held()
	req := sandbox.CreateRequest{TemplateID: "base", Timeout: time.Minute, Network: netpolicy.Policy{Egress: netpolicy.Egress{AllowInternet: true}}}
	if _, err := e.m.Create(e.ctx, req); err != nil {
		t.Fatalf("a create the pool serves, with no turn free: %v", err)
	}
	req.CPUCount = 2
	if _, err := e.m.Create(e.ctx, req); !errors.Is(err, errdefs.ErrResourceExhausted) {
		t.Fatalf("a cold create with no turn free for its whole wait: %v, want resource exhausted", err)
	}
	if st := starts.Stats(); st.TimedOut != 1 || st.Running != 1 {
		t.Fatalf("queue after the refused create: %+v", st)
	}
}

// TestPoolRefillNeedsHostRoom: a refill boots only while the host has the
// memory for one more sandbox (but it ignores CPU pressure, which its own
// background boots raise), so a pool never takes the last memory a create
// would need.
func TestPoolRefillNeedsHostRoom(t *testing.T) {
	t.Parallel()
	var availMB atomic.Int64
	e := newEnvWith(t, func(o *Options) {
		o.PoolSize, o.PoolMin, o.PoolTemplates = 1, 1, []string{"base"}
		o.HostMemoryMB = func() (int, error) { return int(availMB.Load()), nil }
	})
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	go e.m.RunPools(ctx)
	// Wait for the pool's first boot to end, one way or the other.
	testutil.Eventually(t, 10*time.Second, func() error {
		e.m.pools.mu.Lock()
		defer e.m.pools.mu.Unlock()
		for _, ps := range e.m.pools.byKey {
			if !ps.retryAt.IsZero() || len(ps.ready) > 0 {
				return nil
			}
		}
		return errors.New("no refill attempt ended yet")
	})
	if n := e.m.poolReady(); n != 0 {
		t.Fatalf("%d pooled sandboxes booted with no memory available", n)
	}
	e.m.pools.mu.Lock()
	for _, ps := range e.m.pools.byKey {
		ps.retryAt = time.Time{} // the failed attempt's back-off, skipped
	}
	e.m.pools.mu.Unlock()
	availMB.Store(1 << 20)
	e.m.pools.poke()
	waitPool(t, e.m, 1)
}

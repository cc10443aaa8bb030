package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/admission"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/pool"
	"github.com/warren-sandbox/warren/internal/runtime/fake"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// The pools room (internal/pool) is tested on its own against a stand-in
// machine; these tests run it over a real manager, for the manager's side:
// the claim at create, the boot of a pooled sandbox, its destroy.

// runPools registers pools over e's manager as the server does and runs
// them until the returned stop, which waits for Run to end.
func runPools(t *testing.T, e *env, opts pool.Options) (*pool.Pools, func()) {
	t.Helper()
	opts.Store = e.st
	p := pool.New(e.m, opts)
	e.m.ClaimFrom(p)
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return p, stop
}

// poolReady is how many pooled sandboxes are ready, all keys together.
func poolReady(p *pool.Pools) int {
	n := 0
	for _, st := range p.Stats() {
		n += st.Ready
	}
	return n
}

func waitPool(t *testing.T, p *pool.Pools, n int) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, func() error {
		if got := poolReady(p); got != n {
			return fmt.Errorf("%d pooled sandboxes ready, want %d", got, n)
		}
		return nil
	})
}

// TestPoolClaim: a template's first create is a miss and starts its pool;
// the next one takes the pooled sandbox (booted in the foreground: the
// pool had just missed), whose
// envd is initialised only then, with that create's own env vars and
// token; the pool refills; the pooled sandbox is in no list before it is
// claimed; a create with other settings does not take it; a rebuilt
// template's pool is drained; and stopping the pools destroys what they
// hold.
func TestPoolClaim(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p, stop := runPools(t, e, pool.Options{Min: 1, Max: 1})

	first := e.create(t, sandbox.CreateRequest{})
	waitPool(t, p, 1)
	if n := len(e.envd.calls()); n != 1 {
		t.Fatalf("the pooled sandbox's envd was initialised before a claim: %d /init calls", n)
	}
	if list, _ := e.m.List(e.ctx); len(list) != 1 {
		t.Fatalf("listed %d sandboxes, want only the one created", len(list))
	}
	if got := e.instances(t); got != 2 {
		t.Fatalf("%d instances, want the one created and the pooled one", got)
	}

	second := e.create(t, sandbox.CreateRequest{Secure: true, EnvVars: map[string]string{"CLAIM": "2"}})
	if booted, now := e.b.Background(second.ID); booted || now || second.ID == first.ID {
		t.Fatalf("second create %s: booted in the background %v, waits there %v; want the pooled sandbox, booted in the foreground", second.ID, booted, now)
	}
	calls := e.envd.calls()
	last := calls[len(calls)-1]
	if last.EnvVars["CLAIM"] != "2" || last.AccessToken != second.EnvdAccessToken || last.AccessToken == "" {
		t.Fatalf("claim's /init = %+v", last)
	}
	if got, err := e.m.Get(e.ctx, second.ID); err != nil || got.State != store.SandboxRunning {
		t.Fatalf("claimed sandbox: %+v, %v", got, err)
	}
	waitPool(t, p, 1) // refilled
	if st := p.Stats(); len(st) != 1 || st[0].Hits != 1 || st[0].Misses != 1 || st[0].Ready != 1 {
		t.Fatalf("pool stats %+v; want 1 hit, 1 miss, 1 ready", st)
	}

	other := e.create(t, sandbox.CreateRequest{CPUCount: 2})
	if booted, _ := e.b.Background(other.ID); booted {
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
		if n := poolReady(p); n != 0 {
			return fmt.Errorf("%d pooled sandboxes of the old build left", n)
		}
		return nil
	})

	stop()
	if got, want := e.instances(t), 3; got != want {
		t.Fatalf("%d instances after the pools stopped, want the %d created", got, want)
	}
}

// TestPoolPrewarm: a template in Options.Templates has its pool filled
// before any create, for the settings an SDK's plain Sandbox.create()
// sends (PoolRecord), so the first such create takes a pooled sandbox.
func TestPoolPrewarm(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p, _ := runPools(t, e, pool.Options{Min: 1, Max: 2, Templates: []string{"py", "missing"}})
	waitPool(t, p, 1)
	if n := len(e.envd.calls()); n != 0 {
		t.Fatalf("%d /init calls before any create", n)
	}
	sb := e.create(t, sandbox.CreateRequest{TemplateID: "py", Network: netpolicy.Policy{Egress: netpolicy.Egress{AllowInternet: true}}})
	if st := p.Stats(); len(st) != 1 || st[0].Hits != 1 || st[0].Misses != 0 {
		t.Fatalf("first create %s: pool stats %+v, want a hit", sb.ID, st)
	}
}

// TestPoolClaimSkipsTheQueue: while every start's turn is taken (a busy
// machine), a create that a pooled sandbox serves goes through at once,
// while a cold one waits for a turn and is refused when none comes.
func TestPoolClaimSkipsTheQueue(t *testing.T) {
	t.Parallel()
	starts := admission.New(admission.Options{Slots: 1, MaxWait: 200 * time.Millisecond})
	e := newEnvWith(t, func(o *Options) { o.Starts = starts })
	p, _ := runPools(t, e, pool.Options{Min: 1, Max: 1, Templates: []string{"base"}})
	waitPool(t, p, 1)
	// The pools keep running: stopping them drains the pool, racing the
	// claim below. Their refill after the claim takes no turn.
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

// TestBootPooled: a pool's boot needs the host's memory for one more
// sandbox (but not a start turn), so a pool never takes the last memory a
// create would need; it starts without envd's /init, in the background
// unless asked for the foreground, ends in the foreground either way, and
// DestroyPooled removes it.
func TestBootPooled(t *testing.T) {
	t.Parallel()
	var availMB atomic.Int64
	e := newEnvWith(t, func(o *Options) {
		o.HostMemoryMB = func() (int, error) { return int(availMB.Load()), nil }
	})
	tpl, err := e.st.GetTemplate(e.ctx, "base")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		availMB    int64
		foreground bool
		wantErr    error
	}{
		{name: "no memory left", availMB: 64, wantErr: errdefs.ErrResourceExhausted},
		{name: "room", availMB: 1 << 20},
		{name: "room, in the foreground", availMB: 1 << 20, foreground: true},
	}
	for _, tc := range tests {
		availMB.Store(tc.availMB)
		sb, ok := e.m.PoolRecord(tpl)
		if !ok {
			t.Fatal("PoolRecord: the default runtime is not run here")
		}
		sb.ID = ""
		inst, _, err := e.m.BootPooled(e.ctx, sb, tpl, tc.foreground)
		if !errors.Is(err, tc.wantErr) {
			t.Fatalf("%s: BootPooled = %v, want %v", tc.name, err, tc.wantErr)
		}
		if err != nil {
			if n := e.instances(t); n != 0 {
				t.Fatalf("%s: %d instances after a refused boot", tc.name, n)
			}
			continue
		}
		if booted, now := e.b.Background(sb.ID); booted == tc.foreground || now || inst == nil || len(e.envd.calls()) != 0 {
			t.Fatalf("%s: booted in the background %v, still there %v, instance %v, %d /init calls", tc.name, booted, now, inst, len(e.envd.calls()))
		}
		e.m.DestroyPooled(e.ctx, sb.Backend, sb.ID)
		if n := e.instances(t); n != 0 {
			t.Fatalf("%s: %d instances after DestroyPooled", tc.name, n)
		}
	}
}

// TestPoolClaimWaitsForRefill: a create that finds its pool empty while
// a refill boots in the foreground (the pool had missed) waits for it
// instead of booting cold: it has not returned while every boot is held.
// When the refill is ready the create gets it, initialised as any claimed
// pooled sandbox; when the refill fails it goes on cold; when its request
// is cancelled it ends with the context's error and the refill, ready
// later, stays in the pool for the next create.
func TestPoolClaimWaitsForRefill(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		fail   bool // the held boots fail
		cancel bool // the waiting create's request is cancelled
	}{
		{name: "refill ready"},
		{name: "refill fails", fail: true},
		{name: "cancelled", cancel: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			p, _ := runPools(t, e, pool.Options{Min: 1, Max: 1})
			e.create(t, sandbox.CreateRequest{}) // a miss: refills boot in the foreground, their time measured
			waitPool(t, p, 1)
			gate := holdBoots(e, tc.fail)
			e.create(t, sandbox.CreateRequest{}) // a hit: its refill is held
			testutil.Eventually(t, 5*time.Second, func() error {
				if n := len(gate.held()); n == 0 {
					return errors.New("no refill booting")
				}
				return nil
			})
			ctx, cancel := context.WithCancel(e.ctx)
			defer cancel()
			type result struct {
				sb  *store.Sandbox
				err error
			}
			done := make(chan result, 1)
			go func() {
				sb, err := e.m.Create(ctx, sandbox.CreateRequest{TemplateID: "base", Timeout: time.Minute})
				done <- result{sb, err}
			}()
			select {
			case r := <-done:
				t.Fatalf("a miss while a refill boots returned at once (%+v, %v): it booted cold", r.sb, r.err)
			case <-time.After(200 * time.Millisecond):
			}
			if tc.cancel {
				cancel()
				if r := <-done; !errors.Is(r.err, context.Canceled) {
					t.Fatalf("cancelled while waiting: %v, want the context's error", r.err)
				}
			}
			gate.open()
			refills := gate.held() // the one the create waits for, and those the miss added
			if tc.cancel {
				waitPool(t, p, 1) // the refill the cancelled create would have had
				return
			}
			r := <-done
			if r.err != nil {
				t.Fatalf("create after its refill %s: %v", map[bool]string{true: "failed", false: "was ready"}[tc.fail], r.err)
			}
			if got := slices.Contains(refills, r.sb.ID); got == tc.fail {
				t.Fatalf("create got %s, the held refills were %v: took one %v, want %v", r.sb.ID, refills, got, !tc.fail)
			}
			calls := e.envd.calls()
			if last := calls[len(calls)-1]; len(calls) != 3 || last.AccessToken != r.sb.EnvdAccessToken {
				t.Fatalf("%d /init calls, the last %+v; want one per create, the last this one's", len(calls), last)
			}
			if got, err := e.m.Get(e.ctx, r.sb.ID); err != nil || got.State != store.SandboxRunning {
				t.Fatalf("the waiting create's sandbox: %+v, %v", got, err)
			}
		})
	}
}

// bootGate holds every backend Create from holdBoots until open; the held
// ones then fail if fail.
type bootGate struct {
	mu     sync.Mutex
	ch     chan struct{}
	ids    []string
	closed bool
}

func holdBoots(e *env, fail bool) *bootGate {
	g := &bootGate{ch: make(chan struct{})}
	e.b.SetHook(func(ctx context.Context, op fake.Op, id string) error {
		if op != fake.OpCreate {
			return nil
		}
		g.mu.Lock()
		if g.closed {
			g.mu.Unlock()
			return nil
		}
		g.ids = append(g.ids, id)
		g.mu.Unlock()
		select {
		case <-g.ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		if fail {
			return errors.New("held boot failed")
		}
		return nil
	})
	return g
}

func (g *bootGate) held() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.ids...)
}

func (g *bootGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	close(g.ch)
}

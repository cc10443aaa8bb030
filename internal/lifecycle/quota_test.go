package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/admission"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/retention"
	"github.com/warren-sandbox/warren/internal/runtime/fake"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// withQuota sets every team's quota to q, except team "free" which has none.
func withQuota(q sandbox.Quota) func(*Options) {
	return func(o *Options) {
		o.Quota = func(_ context.Context, team string) (sandbox.Quota, error) {
			if team == "free" {
				return sandbox.Quota{}, nil
			}
			return q, nil
		}
	}
}

// TestQuotaSandboxes: a team runs at most its quota of sandboxes; paused
// ones do not count, resuming one counts again, other teams are apart.
func TestQuotaSandboxes(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, withQuota(sandbox.Quota{Sandboxes: 2}))
	a := e.create(t, sandbox.CreateRequest{TeamID: "acme", AnyTeam: true})
	e.create(t, sandbox.CreateRequest{TeamID: "acme", AnyTeam: true})
	_, err := e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: "base", Timeout: 60e9, TeamID: "acme", AnyTeam: true})
	if !errors.Is(err, errdefs.ErrQuotaExceeded) {
		t.Fatalf("third sandbox: %v, want quota exceeded", err)
	}
	e.create(t, sandbox.CreateRequest{TeamID: "free", AnyTeam: true}) // another team
	if err := e.m.Pause(e.ctx, a.ID, true); err != nil {
		t.Fatal(err)
	}
	b := e.create(t, sandbox.CreateRequest{TeamID: "acme", AnyTeam: true}) // a paused one frees its place
	if _, _, err := e.m.Connect(e.ctx, a.ID, 60e9, true); !errors.Is(err, errdefs.ErrQuotaExceeded) {
		t.Fatalf("resume over the quota: %v, want quota exceeded", err)
	}
	if err := e.m.Kill(e.ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.m.Connect(e.ctx, a.ID, 60e9, true); err != nil {
		t.Fatalf("resume within the quota: %v", err)
	}
}

// TestQuotaResources: memory and vCPUs add up per team.
func TestQuotaResources(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, withQuota(sandbox.Quota{MemoryMB: 300, CPUs: 3}))
	e.create(t, sandbox.CreateRequest{TeamID: "acme", AnyTeam: true, MemoryMB: 200, CPUCount: 1})
	for _, tc := range []struct {
		name      string
		mem, cpus int
		ok        bool
	}{
		{"memory over", 128, 1, false},
		{"cpus over", 64, 3, false},
		{"fits", 100, 2, true},
	} {
		_, err := e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: "base", Timeout: 60e9, TeamID: "acme", AnyTeam: true, MemoryMB: tc.mem, CPUCount: tc.cpus})
		if tc.ok != (err == nil) || (!tc.ok && !errors.Is(err, errdefs.ErrQuotaExceeded)) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestQuotaConcurrentCreates: creates racing for the last places get
// exactly the quota, no more.
func TestQuotaConcurrentCreates(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, withQuota(sandbox.Quota{Sandboxes: 3}))
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			_, err := e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: "base", Timeout: 60e9, TeamID: "acme", AnyTeam: true})
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, errdefs.ErrQuotaExceeded):
				refused.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 3 || refused.Load() != 7 {
		t.Fatalf("%d created, %d refused; want 3 and 7", ok.Load(), refused.Load())
	}
}

// TestHostAdmission: a sandbox the host cannot hold is refused up front.
func TestHostAdmission(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(o *Options) {
		o.HostMemoryMB = func() (int, error) { return 256, nil }
		o.HostDiskFreeMB = func() (int, error) { return 2048, nil }
		o.DefaultDiskMB = 1024
	})
	e.create(t, sandbox.CreateRequest{MemoryMB: 256})
	for name, req := range map[string]sandbox.CreateRequest{
		"memory": {TemplateID: "base", Timeout: 60e9, MemoryMB: 512},
	} {
		if _, err := e.m.Create(e.ctx, req); !errors.Is(err, errdefs.ErrResourceExhausted) {
			t.Errorf("%s: %v, want resource exhausted", name, err)
		}
	}
	big := newEnvWith(t, func(o *Options) {
		o.HostDiskFreeMB = func() (int, error) { return 2048, nil }
		o.DefaultDiskMB = 4096
	})
	if _, err := big.m.Create(big.ctx, sandbox.CreateRequest{TemplateID: "base", Timeout: 60e9}); !errors.Is(err, errdefs.ErrResourceExhausted) {
		t.Errorf("disk: %v, want resource exhausted", err)
	}
}

// TestLiveTokensDoNotWait: routing a signed file URL reads the tokens
// without waiting for a sandbox that is busy (here, a pause that hangs).
func TestLiveTokensDoNotWait(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.create(t, sandbox.CreateRequest{Secure: true})
	b := e.create(t, sandbox.CreateRequest{Secure: true})
	release := make(chan struct{})
	e.b.SetHook(func(ctx context.Context, op fake.Op, id string) error {
		if (op == fake.OpPause || op == fake.OpStop) && id == a.ID {
			<-release
		}
		return nil
	})
	go e.m.Pause(e.ctx, a.ID, true)
	defer close(release)
	time.Sleep(50 * time.Millisecond) // the pause holds a's lock now
	done := make(chan map[string]string, 1)
	go func() { done <- e.m.LiveTokens() }()
	select {
	case tokens := <-done:
		if tokens[b.ID] != b.EnvdAccessToken || tokens[a.ID] != a.EnvdAccessToken {
			t.Errorf("tokens = %v; a %s %q, b %s %q", tokens, a.ID, a.EnvdAccessToken, b.ID, b.EnvdAccessToken)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("LiveTokens waited for a busy sandbox")
	}
}

// TestRetention: paused sandboxes and snapshots past the operator's
// retention are removed; running ones and younger ones stay.
func TestRetention(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := retention.New(machine{e.m, e.snaps}, retention.Options{Paused: time.Hour, Snapshots: 24 * time.Hour})
	paused := e.create(t, sandbox.CreateRequest{})
	running := e.create(t, sandbox.CreateRequest{})
	snap, err := e.snaps.Snapshot(e.ctx, running.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.m.Pause(e.ctx, paused.ID, true); err != nil {
		t.Fatal(err)
	}
	r.Retain(e.ctx, time.Now().Add(30*time.Minute)) // nothing is old enough yet
	if _, err := e.m.Get(e.ctx, paused.ID); err != nil {
		t.Fatalf("paused 30 minutes ago, removed: %v", err)
	}
	r.Retain(e.ctx, time.Now().Add(2*time.Hour))
	if _, err := e.m.Get(e.ctx, paused.ID); !errdefs.IsNotFound(err) {
		t.Errorf("paused two hours ago, still there: %v", err)
	}
	if _, err := e.m.Get(e.ctx, running.ID); err != nil {
		t.Errorf("a running sandbox was removed: %v", err)
	}
	if s, _ := e.snaps.ListSnapshots(e.ctx, "", ""); len(s) != 1 {
		t.Errorf("a 2-hour-old snapshot under a 24-hour retention: %d left", len(s))
	}
	r.Retain(e.ctx, time.Now().Add(48*time.Hour))
	if s, _ := e.snaps.ListSnapshots(e.ctx, "", ""); len(s) != 0 {
		t.Errorf("snapshot %s past its retention is still listed", snap.ID)
	}
}

// TestStartsWaitTheirTurn: a cold create with no turn free waits for one
// instead of failing, and starts once a turn ends, its lifetime counted
// from then; a resume waits the same way. Each holds its turn only while it starts.
func TestStartsWaitTheirTurn(t *testing.T) {
	t.Parallel()
	starts := admission.New(admission.Options{Slots: 1, MaxWait: time.Minute})
	e := newEnvWith(t, func(o *Options) { o.Starts = starts })
	paused := e.create(t, sandbox.CreateRequest{})
	if err := e.m.Pause(e.ctx, paused.ID, true); err != nil {
		t.Fatal(err)
	}
	held, err := starts.Acquire(e.ctx, "test", "other")
	if err != nil {
		t.Fatal(err)
	}
	created := make(chan error, 1)
	var sb *store.Sandbox
	go func() {
		var err error
		sb, err = e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: "base", Timeout: time.Minute})
		created <- err
	}()
	resumed := make(chan error, 1)
	go func() { _, _, err := e.m.Connect(e.ctx, paused.ID, time.Minute, true); resumed <- err }()
	testutil.Eventually(t, 10*time.Second, func() error {
		if st := starts.Stats(); st.Waiting != 2 {
			return fmt.Errorf("%d starts waiting, want 2", st.Waiting)
		}
		return nil
	})
	select {
	case err := <-created:
		t.Fatalf("the create ended while no turn was free: %v", err)
	case err := <-resumed:
		t.Fatalf("the resume ended while no turn was free: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	freed := time.Now()
	held()
	for _, ch := range []chan error{created, resumed} {
		if err := <-ch; err != nil {
			t.Fatalf("a start after the turn was freed: %v", err)
		}
	}
	// The wait did not eat into the sandbox's lifetime.
	if sb.StartedAt.Before(freed) || sb.EndAt.Sub(sb.StartedAt) != time.Minute {
		t.Fatalf("started %v (the turn came at %v), ends %v: want its minute from its start", sb.StartedAt, freed, sb.EndAt)
	}
	if st := starts.Stats(); st.Running != 0 || st.Waiting != 0 || st.Admitted != 2 {
		t.Fatalf("queue after both starts: %+v", st)
	}
}

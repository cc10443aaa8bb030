package lifecycle

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime/fake"
	"github.com/warren-sandbox/warren/internal/sandbox"
)

// opLog records what the manager tells its OpObserver.
type opLog struct {
	mu  sync.Mutex
	ops []string // "op runtime ok|error"
}

func (l *opLog) observe(op, runtime string, took time.Duration, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	res := "ok"
	if err != nil {
		res = "error"
	}
	l.ops = append(l.ops, op+" "+runtime+" "+res)
}

func (l *opLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.ops
	l.ops = nil
	return out
}

func TestObserveOps(t *testing.T) {
	t.Parallel()
	var log opLog
	e := newEnvWith(t, func(o *Options) { o.ObserveOp = log.observe })
	sb := e.create(t, sandbox.CreateRequest{})
	steps := []struct {
		name string
		do   func() error
		want []string
	}{
		{"pause", func() error { return e.m.Pause(e.ctx, sb.ID, true) }, []string{"pause fake ok"}},
		// Refused before it acts: nothing was timed.
		{"pause again", func() error { return e.m.Pause(e.ctx, sb.ID, true) }, nil},
		{"resume", func() error { _, _, err := e.m.Connect(e.ctx, sb.ID, time.Minute, true); return err }, []string{"resume fake ok"}},
		{"failed create", func() error {
			e.b.FailNext(fake.OpCreate, "", errors.New("runtime exploded"))
			_, err := e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: "base", Timeout: time.Minute})
			if err == nil {
				return errors.New("the create did not fail")
			}
			return nil
		}, []string{"create fake error"}},
		{"kill", func() error { return e.m.Kill(e.ctx, sb.ID) }, []string{"kill fake ok"}},
	}
	if got := log.take(); !slices.Equal(got, []string{"create fake ok"}) {
		t.Fatalf("after create: %v", got)
	}
	for _, s := range steps {
		err := s.do()
		if err != nil && !errdefs.IsConflict(err) {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := log.take(); !slices.Equal(got, s.want) {
			t.Fatalf("%s: observed %v, want %v", s.name, got, s.want)
		}
	}
}

// TestCensus: every live sandbox with its team, runtime and resources,
// running or paused, without samples (the metrics history room adds
// those), and a killed one no longer.
func TestCensus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.create(t, sandbox.CreateRequest{TeamID: "acme", AnyTeam: true})
	b := e.create(t, sandbox.CreateRequest{})
	byID := func() map[string]sandbox.Live {
		out := map[string]sandbox.Live{}
		for _, l := range e.m.Census() {
			out[l.ID] = l
		}
		return out
	}
	if err := e.m.Pause(e.ctx, b.ID, true); err != nil {
		t.Fatal(err)
	}
	live := byID()
	if got := live[a.ID]; !got.Running || got.Latest != nil || got.Team != "acme" || got.Runtime != "fake" ||
		got.TemplateID != "base" || got.CPUCount != 1 || got.MemoryMB != 128 {
		t.Fatalf("running: %+v", got)
	}
	if got := live[b.ID]; got.Running || got.Team != "default" {
		t.Fatalf("paused: %+v, want not running", got)
	}
	if err := e.m.Kill(e.ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := byID()[a.ID]; ok || len(byID()) != 1 {
		t.Fatalf("a killed sandbox is still in the census: %+v", byID())
	}
}

// TestReadStats: the metrics history reads a running sandbox's cgroup;
// a paused one is not read (it must not wake), a busy one only when the
// caller waits, an unknown one is not found.
func TestReadStats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := e.create(t, sandbox.CreateRequest{TeamID: "acme", AnyTeam: true})
	paused := e.create(t, sandbox.CreateRequest{})
	if err := e.m.Pause(e.ctx, paused.ID, true); err != nil {
		t.Fatal(err)
	}
	busy := e.create(t, sandbox.CreateRequest{})
	be, err := e.m.get(busy.ID)
	if err != nil {
		t.Fatal(err)
	}
	be.mu.Lock() // a lifecycle operation in progress
	defer be.mu.Unlock()
	tests := []struct {
		name    string
		id      string
		wait    bool
		ok      bool
		wantErr error
	}{
		{name: "running", id: run.ID, ok: true},
		{name: "paused", id: paused.ID, wait: true},
		{name: "busy, not waiting", id: busy.ID},
		{name: "unknown", id: "nobody", wantErr: errdefs.ErrNotFound},
	}
	for _, tc := range tests {
		r, ok, err := e.m.ReadStats(e.ctx, tc.id, tc.wait)
		if ok != tc.ok || !errors.Is(err, tc.wantErr) {
			t.Fatalf("%s: ok %v, err %v; want %v, %v", tc.name, ok, err, tc.ok, tc.wantErr)
		}
		if ok && (r.Team != "acme" || r.CPUCount != 1 || r.CPUNanos == 0 || r.MemTotal != 128<<20 || !r.StartedAt.Equal(run.StartedAt)) {
			t.Fatalf("%s: reading %+v", tc.name, r)
		}
	}
}

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

func TestCensusAndCPUUsed(t *testing.T) {
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
	if got := byID()[a.ID]; !got.Running || got.Latest != nil || got.Team != "acme" || got.Runtime != "fake" || got.TemplateID != "base" {
		t.Fatalf("before any sample: %+v", got)
	}
	e.m.sampleAll(e.ctx, time.Now())
	// The fake backend's cgroup has used 1 ms of CPU since each started.
	if got := e.m.TakeCPUUsed(); got["acme"] != time.Millisecond || got["default"] != time.Millisecond || len(got) != 2 {
		t.Fatalf("TakeCPUUsed = %v, want 1ms for acme and default", got)
	}
	if got := e.m.TakeCPUUsed(); len(got) != 0 {
		t.Fatalf("a second TakeCPUUsed = %v, want nothing new", got)
	}
	if err := e.m.Pause(e.ctx, b.ID, true); err != nil {
		t.Fatal(err)
	}
	live := byID()
	if got := live[a.ID]; got.Latest == nil || got.Latest.MemUsed != 8<<20 || got.CPUCount != 1 || got.MemoryMB != 128 {
		t.Fatalf("running and sampled: %+v", got)
	}
	if got := live[b.ID]; got.Running || got.Latest != nil {
		t.Fatalf("paused: %+v, want not running and no sample", got)
	}
	if err := e.m.Kill(e.ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := byID()[a.ID]; ok || len(byID()) != 1 {
		t.Fatalf("a killed sandbox is still in the census: %+v", byID())
	}
}

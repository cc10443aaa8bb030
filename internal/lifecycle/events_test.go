package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// eventLog is an EventRecorder that keeps what it is given.
type eventLog struct {
	mu     sync.Mutex
	events []*store.Event
}

func (l *eventLog) Record(_ context.Context, e *store.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

// of returns the events of sandbox id as "type" or "type:reason".
func (l *eventLog) of(id string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.events {
		if e.SandboxID != id {
			continue
		}
		s := e.Type
		var d map[string]any
		_ = json.Unmarshal(e.Data, &d)
		if r, ok := d["reason"].(string); ok {
			s += ":" + r
		}
		out = append(out, s)
	}
	return out
}

func (l *eventLog) data(id, typ string) map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		if e.SandboxID == id && e.Type == typ {
			var d map[string]any
			_ = json.Unmarshal(e.Data, &d)
			return d
		}
	}
	return nil
}

func withEvents(l *eventLog) func(*Options) { return func(o *Options) { o.Events = l } }

// TestEventsOfALifecycle: each operation records its event once it
// succeeded, with E2B's eventData, and a failed one records none.
func TestEventsOfALifecycle(t *testing.T) {
	t.Parallel()
	l := &eventLog{}
	e := newEnvWith(t, withEvents(l))
	sb := e.create(t, sandbox.CreateRequest{Metadata: map[string]string{"k": "v"}})
	steps := []func() error{
		func() error { return e.m.SetTimeout(e.ctx, sb.ID, time.Hour) },
		func() error { return e.m.UpdateNetwork(e.ctx, sb.ID, netpolicy.Egress{AllowInternet: true}) },
		func() error { _, err := e.snaps.Snapshot(e.ctx, sb.ID, ""); return err },
		func() error { return e.m.Pause(e.ctx, sb.ID, true) },
		func() error { return e.m.Pause(e.ctx, sb.ID, true) }, // fails: already paused
		func() error { _, _, err := e.m.Connect(e.ctx, sb.ID, time.Minute, true); return err },
		func() error { return e.m.Kill(e.ctx, sb.ID) },
	}
	for i, step := range steps {
		if err := step(); err != nil && i != 4 {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	want := []string{store.EventCreated, store.EventUpdated, store.EventUpdated, store.EventSnapshotted,
		store.EventPaused, store.EventResumed, store.EventKilled + ":" + sandbox.KillRequested}
	if got := l.of(sb.ID); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if md := l.data(sb.ID, store.EventCreated)["sandbox_metadata"]; fmt.Sprint(md) != "map[k:v]" {
		t.Errorf("created eventData.sandbox_metadata = %v", md)
	}
	if ex, ok := l.data(sb.ID, store.EventPaused)["execution"].(map[string]any); !ok || ex["vcpu_count"] != 1.0 || ex["memory_mb"] != 128.0 {
		t.Errorf("paused eventData.execution = %v", ex)
	}
	if _, ok := l.data(sb.ID, store.EventUpdated)["set_timeout"].(string); !ok {
		t.Errorf("updated eventData = %v, want set_timeout", l.data(sb.ID, store.EventUpdated))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	execs := map[string]bool{}
	for _, ev := range l.events {
		if ev.TeamID != store.DefaultTeam || ev.TemplateID != "base" || ev.ExecutionID == "" {
			t.Errorf("event %+v lacks its team, template or execution", ev)
		}
		execs[ev.ExecutionID] = true
	}
	if len(execs) != 2 {
		t.Errorf("%d executions, want 2: one until the pause, one from the resume", len(execs))
	}
}

// TestKilledReasons: a timeout, a sandbox found dead at a restart and a
// kill a crash cut short each say so.
func TestKilledReasons(t *testing.T) {
	t.Parallel()
	l := &eventLog{}
	e := newEnvWith(t, withEvents(l))
	expiring := e.create(t, sandbox.CreateRequest{Timeout: 30 * time.Millisecond})
	dying := e.create(t, sandbox.CreateRequest{})
	cut := e.create(t, sandbox.CreateRequest{})
	testutil.Eventually(t, 5*time.Second, func() error {
		if len(l.of(expiring.ID)) < 2 {
			return errors.New("no killed event yet")
		}
		return nil
	})
	e.m.Shutdown(context.Background())
	if err := e.b.Crash(dying.ID); err != nil {
		t.Fatal(err)
	}
	rec, err := e.st.GetSandbox(e.ctx, cut.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec.Intent = store.IntentKilling
	if err := e.st.UpdateSandbox(e.ctx, rec); err != nil {
		t.Fatal(err)
	}
	e.restart(t)
	for id, want := range map[string]string{expiring.ID: sandbox.KillTimeout, dying.ID: sandbox.KillDied, cut.ID: sandbox.KillInterrupted} {
		got := l.of(id)
		if got[len(got)-1] != store.EventKilled+":"+want {
			t.Errorf("events of %s: %v, want killed:%s last", id, got, want)
		}
	}
}

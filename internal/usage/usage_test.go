package usage

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// fakeSource is a manager with a settable census and CPU time.
type fakeSource struct {
	mu   sync.Mutex
	live []sandbox.Live
	cpu  map[string]time.Duration
}

func (s *fakeSource) Census() []sandbox.Live {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sandbox.Live(nil), s.live...)
}

func (s *fakeSource) TakeCPUUsed() map[string]time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.cpu
	s.cpu = map[string]time.Duration{}
	return out
}

func (s *fakeSource) set(live []sandbox.Live, cpu map[string]time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live, s.cpu = live, cpu
}

// fakeClock hands each wait to the test, which moves time to its end.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits chan time.Duration
	fire  chan time.Time
}

func newFakeClock(now time.Time) *fakeClock {
	return &fakeClock{now: now, waits: make(chan time.Duration), fire: make(chan time.Time)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.waits <- d
	return c.fire
}

// advance waits for the recorder to wait, checks how long, runs before
// (the recorder is idle then), and ends the wait plus extra (a timer that
// fires late).
func (c *fakeClock) advance(t *testing.T, want, extra time.Duration, before func()) {
	t.Helper()
	select {
	case d := <-c.waits:
		if d != want {
			t.Fatalf("recorder waits %s, want %s", d, want)
		}
		before()
		c.mu.Lock()
		c.now = c.now.Add(d + extra)
		now := c.now
		c.mu.Unlock()
		c.fire <- now
	case <-time.After(5 * time.Second):
		t.Fatal("the recorder never waited")
	}
}

func sb(id, team string, running bool, cpus, mem int) sandbox.Live {
	return sandbox.Live{ID: id, Team: team, Running: running, CPUCount: cpus, MemoryMB: mem}
}

func TestRecorderRunsEachMinute(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 5, 1, 12, 0, 30, 0, time.UTC)
	src := &fakeSource{}
	st := sqlitetest.Open(t)
	clock := newFakeClock(t0)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { New(src, st, 2*time.Minute, clock).Run(ctx); close(done) }()

	clock.advance(t, 30*time.Second, 0, func() { // to 12:01:00
		src.set([]sandbox.Live{sb("a", "acme", true, 2, 512), sb("c", "beta", true, 1, 128)}, nil)
	})
	clock.advance(t, time.Minute, 2*time.Second, func() { // to 12:02:02, a late tick
		src.set([]sandbox.Live{sb("c", "beta", true, 1, 128)}, nil)
	})
	// Back on the minute: 12:03:00, then 12:04:00.
	clock.advance(t, 58*time.Second, 0, func() { src.set(nil, nil) })
	clock.advance(t, time.Minute, 0, func() {
		src.set(nil, map[string]time.Duration{"beta": time.Second})
	})
	<-clock.waits // the recorder waits for 12:05 having stored 12:04
	cancel()
	<-done

	got, err := st.UsageTotals(t.Context(), "", t0.Add(-time.Hour), t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// 12:01 is past the 2-minute retention by 12:04 and gone; 12:03 had nothing.
	minute := func(n int) time.Time { return time.Date(2026, 5, 1, 12, n, 0, 0, time.UTC) }
	want := []store.UsageSample{
		{At: minute(2), RunningSandboxes: 1, VCPUs: 1, MemoryMB: 128},
		{At: minute(4), CPUUsed: time.Second},
	}
	if len(got) != len(want) {
		t.Fatalf("stored %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("minute %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestRecordTotalsByTeam(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 1, 12, 1, 0, 0, time.UTC)
	src := &fakeSource{}
	src.set([]sandbox.Live{sb("a", "acme", true, 2, 512), sb("b", "acme", true, 1, 256), sb("p", "acme", false, 4, 4096), sb("c", "beta", true, 1, 128)},
		map[string]time.Duration{"acme": 3 * time.Second, "gone": time.Second})
	st := sqlitetest.Open(t)
	if err := New(src, st, 0, nil).Record(t.Context(), at.Add(15*time.Second)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		team string
		want store.UsageSample
	}{
		{"acme", store.UsageSample{Team: "acme", At: at, RunningSandboxes: 2, VCPUs: 3, MemoryMB: 768, CPUUsed: 3 * time.Second}},
		{"beta", store.UsageSample{Team: "beta", At: at, RunningSandboxes: 1, VCPUs: 1, MemoryMB: 128}},
		// A team whose sandboxes all ended still had their CPU time.
		{"gone", store.UsageSample{Team: "gone", At: at, CPUUsed: time.Second}},
	}
	for _, tt := range tests {
		got, err := st.UsageTotals(t.Context(), tt.team, at, at.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.team, got, tt.want)
		}
	}
}

// TestRecorderNodesAddUp: two nodes on one store record the same team's
// minute; each keeps its own sample, and the totals are their sum. Without
// OnNode the second would replace the first.
func TestRecorderNodesAddUp(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 1, 12, 1, 0, 0, time.UTC)
	st := sqlitetest.Open(t)
	for _, node := range []string{"a", "b"} {
		src := &fakeSource{}
		src.set([]sandbox.Live{sb("x-"+node, "acme", true, 2, 512)}, nil)
		if err := New(src, st, 0, nil).OnNode(node).Record(t.Context(), at); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.UsageTotals(t.Context(), "acme", at, at.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].RunningSandboxes != 2 || got[0].VCPUs != 4 || got[0].MemoryMB != 1024 {
		t.Fatalf("totals of two nodes = %+v, want 2 sandboxes, 4 vCPUs, 1024 MB", got)
	}
}

package history

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/sandbox"
)

// metricsT0 stands for the sampler's clock: samples carry the time the
// sampler passes, so windows are exact.
var metricsT0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

const unbounded = math.MinInt64

// box is one sandbox of the stand-in manager.
type box struct {
	team         string
	paused, busy bool
	started      time.Time
	cpu          uint64 // cumulative CPU nanoseconds its cgroup reports
	reads        int
}

// machine stands in for the manager's live sandboxes.
type machine struct {
	mu    sync.Mutex
	boxes map[string]*box
}

func newMachine(ids ...string) *machine {
	m := &machine{boxes: map[string]*box{}}
	for _, id := range ids {
		m.boxes[id] = &box{team: "default", started: time.Now(), cpu: uint64(time.Millisecond)}
	}
	return m
}

func (m *machine) Census() []sandbox.Live {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []sandbox.Live
	for id, b := range m.boxes {
		out = append(out, sandbox.Live{ID: id, Team: b.team, Running: !b.paused, CPUCount: 1, MemoryMB: 128})
	}
	return out
}

func (m *machine) ReadStats(ctx context.Context, id string, wait bool) (sandbox.Reading, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.boxes[id]
	if b == nil {
		return sandbox.Reading{}, false, errdefs.New(errdefs.ErrNotFound, "no such sandbox")
	}
	if b.busy && !wait || b.paused {
		return sandbox.Reading{}, false, nil
	}
	b.reads++
	return sandbox.Reading{Team: b.team, StartedAt: b.started, CPUCount: 1, CPUNanos: b.cpu,
		MemUsed: 8 << 20, MemTotal: 128 << 20}, true, nil
}

func (m *machine) set(id string, fn func(b *box)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if b := m.boxes[id]; b != nil {
		fn(b)
	}
}

func (m *machine) kill(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.boxes, id)
}

func (m *machine) reads(id string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.boxes[id].reads
}

// sampleTimes runs the sampler at t0 + each of the offsets (seconds).
func sampleTimes(h *Metrics, offsets ...int) {
	for _, s := range offsets {
		h.sampleAll(context.Background(), metricsT0.Add(time.Duration(s)*time.Second))
	}
}

func TestMetricsWindow(t *testing.T) {
	t.Parallel()
	src := newMachine("a")
	h := NewMetrics(src, MetricsOptions{})
	sampleTimes(h, 0, 5, 10, 15, 20, 25)
	t0 := metricsT0.Unix()
	tests := []struct {
		name     string
		from, to int64
		want     []int64 // offsets of the samples returned
	}{
		{"no bounds: the whole life", unbounded, math.MaxInt64, []int64{0, 5, 10, 15, 20, 25}},
		{"inside, bounds included", t0 + 5, t0 + 15, []int64{5, 10, 15}},
		{"an hour before", t0 - 7200, t0 - 3600, nil},
		{"after the last", t0 + 26, t0 + 60, nil},
		{"one second", t0 + 20, t0 + 20, []int64{20}},
		{"from only", t0 + 21, math.MaxInt64, []int64{25}},
	}
	for _, tc := range tests {
		got, err := h.Metrics(context.Background(), "a", tc.from, tc.to)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got == nil || len(got) != len(tc.want) {
			t.Fatalf("%s: %d samples (%v), want %v", tc.name, len(got), got, tc.want)
		}
		for i, m := range got {
			if m.Timestamp.Unix() != t0+tc.want[i] || m.CPUCount != 1 || m.MemTotal != 128<<20 {
				t.Fatalf("%s: sample %d = %+v, want at +%ds", tc.name, i, m, tc.want[i])
			}
		}
	}
	if latest, ok, err := h.LatestMetric(context.Background(), "a"); err != nil || !ok || latest.Timestamp.Unix() != t0+25 {
		t.Fatalf("LatestMetric = %+v, %v, %v", latest, ok, err)
	}
	if _, err := h.Metrics(context.Background(), "nobody", unbounded, math.MaxInt64); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("an unknown sandbox: %v, want not found", err)
	}
}

func TestMetricsSamplesANewSandboxOnce(t *testing.T) {
	t.Parallel()
	src := newMachine("a")
	h := NewMetrics(src, MetricsOptions{})
	ctx := context.Background()
	now := time.Now().Unix()
	old, err := h.Metrics(ctx, "a", now-7200, now-3600)
	if err != nil || old == nil || len(old) != 0 {
		t.Fatalf("an hour-old window = %v, %v; want []", old, err)
	}
	all, err := h.Metrics(ctx, "a", unbounded, math.MaxInt64)
	if err != nil || len(all) != 1 {
		t.Fatalf("a new sandbox's history = %v, %v; want the one sample taken on demand", all, err)
	}
	if n := src.reads("a"); n != 1 {
		t.Fatalf("%d stats reads, want 1: a sampled sandbox is not read again on request", n)
	}
}

func TestSamplerSkipsPausedAndBusySandboxes(t *testing.T) {
	t.Parallel()
	src := newMachine("paused", "busy")
	src.set("paused", func(b *box) { b.paused = true })
	src.set("busy", func(b *box) { b.busy = true }) // a lifecycle operation in progress
	h := NewMetrics(src, MetricsOptions{})
	sampleTimes(h, 0, 5)
	for _, id := range []string{"paused", "busy"} {
		if n := src.reads(id); n != 0 {
			t.Fatalf("sandbox %s was read %d times", id, n)
		}
	}
	got, err := h.Metrics(context.Background(), "paused", unbounded, math.MaxInt64)
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("a paused sandbox never sampled: %v, %v; want [] without waking it", got, err)
	}
	if _, ok, err := h.LatestMetric(context.Background(), "paused"); ok || err != nil {
		t.Fatalf("LatestMetric of a paused sandbox never sampled: ok %v, err %v", ok, err)
	}
	src.set("busy", func(b *box) { b.busy = false })
	sampleTimes(h, 10)
	if n := src.reads("busy"); n != 1 {
		t.Fatalf("a sandbox no longer busy: %d reads, want 1", n)
	}
}

func TestMetricsOfKilledSandboxesStayForTheRetention(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		retention time.Duration
		// after the kill, the sampler runs at +10 s and at this offset
		later    int
		keptLate bool
	}{
		{"within the retention", time.Minute, 50, true},
		{"after the retention", time.Minute, 80, false},
		{"no retention", 0, 10, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := newMachine("a")
			h := NewMetrics(src, MetricsOptions{Retention: tc.retention})
			sampleTimes(h, 0, 5)
			src.kill("a")
			sampleTimes(h, 10)
			got, err := h.Metrics(context.Background(), "a", unbounded, math.MaxInt64)
			if tc.retention > 0 && (err != nil || len(got) != 2) {
				t.Fatalf("just killed: %v, %v; want its 2 samples", got, err)
			}
			sampleTimes(h, tc.later)
			got, err = h.Metrics(context.Background(), "a", unbounded, math.MaxInt64)
			if tc.keptLate != (err == nil) {
				t.Fatalf("at +%ds: %v, %v; kept = %v", tc.later, got, err, tc.keptLate)
			}
			if err != nil && !errors.Is(err, errdefs.ErrNotFound) {
				t.Fatalf("a forgotten sandbox: %v, want not found", err)
			}
		})
	}
}

// TestCensusAndCPUUsed: the census carries a running sandbox's newest
// sample; CPU time is counted per team once, and not for the first sample
// of a sandbox started before this history (re-adopted after a restart),
// whose time the previous run counted.
func TestCensusAndCPUUsed(t *testing.T) {
	t.Parallel()
	src := newMachine("a", "b", "old")
	src.set("a", func(b *box) { b.team = "acme" })
	h := NewMetrics(src, MetricsOptions{})
	for _, id := range []string{"a", "b"} { // started after the history was made
		src.set(id, func(b *box) { b.started = h.h.born.Add(time.Millisecond) })
	}
	src.set("old", func(b *box) { b.started = h.h.born.Add(-time.Hour) })
	byID := func() map[string]sandbox.Live {
		out := map[string]sandbox.Live{}
		for _, l := range h.Census() {
			out[l.ID] = l
		}
		return out
	}
	if got := byID()["a"]; !got.Running || got.Latest != nil {
		t.Fatalf("before any sample: %+v", got)
	}
	h.sampleAll(context.Background(), time.Now())
	if got := h.TakeCPUUsed(); got["acme"] != time.Millisecond || got["default"] != time.Millisecond || len(got) != 2 {
		t.Fatalf("TakeCPUUsed = %v, want 1ms for acme and for default's b (not old)", got)
	}
	if got := h.TakeCPUUsed(); len(got) != 0 {
		t.Fatalf("a second TakeCPUUsed = %v, want nothing new", got)
	}
	src.set("old", func(b *box) { b.cpu += uint64(time.Millisecond) })
	h.sampleAll(context.Background(), time.Now().Add(10*time.Second))
	if got := h.TakeCPUUsed(); got["default"] != time.Millisecond || got["acme"] != 0 {
		t.Fatalf("after old used 1ms more: %v, want that 1ms only", got)
	}
	src.set("b", func(b *box) { b.paused = true })
	live := byID()
	if got := live["a"]; got.Latest == nil || got.Latest.MemUsed != 8<<20 {
		t.Fatalf("running and sampled: %+v", got)
	}
	if got := live["b"]; got.Running || got.Latest != nil {
		t.Fatalf("paused: %+v, want not running and no sample", got)
	}
}

func TestHistoryThinsWhenFull(t *testing.T) {
	t.Parallel()
	h := newMetricsHistory(5*time.Second, time.Hour, 8)
	taken := 0
	for i := 0; i <= 200; i++ { // 1000 s of ticks
		now := metricsT0.Add(time.Duration(i) * 5 * time.Second)
		if h.due("a", now) {
			h.add("a", sandbox.Metric{Timestamp: now})
			taken++
		}
	}
	got, _ := h.window("a", unbounded, math.MaxInt64)
	if len(got) > 8 || len(got) < 4 {
		t.Fatalf("%d samples kept, want 4..8", len(got))
	}
	if taken >= 100 {
		t.Fatalf("%d samples taken: a coarser series must be sampled less often", taken)
	}
	if first := got[0].Timestamp.Sub(metricsT0); first > 200*time.Second {
		t.Fatalf("oldest sample at +%s: the history must still reach back to the start", first)
	}
	if last := got[len(got)-1].Timestamp.Sub(metricsT0); last < 1000*time.Second-h.interval*time.Duration(h.byID["a"].stride) {
		t.Fatalf("newest sample at +%s, too old", last)
	}
	for i := 1; i < len(got); i++ {
		if !got[i].Timestamp.After(got[i-1].Timestamp) {
			t.Fatalf("samples out of order: %v", got)
		}
	}
}

package lifecycle

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime/fake"
	"github.com/warren-sandbox/warren/internal/sandbox"
)

// metricsT0 stands for the sampler's clock: samples carry the time the
// sampler passes, so windows are exact.
var metricsT0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

const unbounded = math.MinInt64

// sampleTimes runs the sampler at t0 + each of the offsets (seconds).
func sampleTimes(e *env, offsets ...int) {
	for _, s := range offsets {
		e.m.sampleAll(e.ctx, metricsT0.Add(time.Duration(s)*time.Second))
	}
}

func statsCalls(e *env, id string) int {
	n := 0
	for _, c := range e.b.Calls() {
		if c.Op == fake.OpStats && c.ID == id {
			n++
		}
	}
	return n
}

func TestMetricsWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb := e.create(t, sandbox.CreateRequest{})
	sampleTimes(e, 0, 5, 10, 15, 20, 25)
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
		got, err := e.m.Metrics(e.ctx, sb.ID, tc.from, tc.to)
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
	if latest, ok, err := e.m.LatestMetric(e.ctx, sb.ID); err != nil || !ok || latest.Timestamp.Unix() != t0+25 {
		t.Fatalf("LatestMetric = %+v, %v, %v", latest, ok, err)
	}
}

func TestMetricsSamplesANewSandboxOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb := e.create(t, sandbox.CreateRequest{})
	now := time.Now().Unix()
	old, err := e.m.Metrics(e.ctx, sb.ID, now-7200, now-3600)
	if err != nil || old == nil || len(old) != 0 {
		t.Fatalf("an hour-old window = %v, %v; want []", old, err)
	}
	all, err := e.m.Metrics(e.ctx, sb.ID, unbounded, math.MaxInt64)
	if err != nil || len(all) != 1 {
		t.Fatalf("a new sandbox's history = %v, %v; want the one sample taken on demand", all, err)
	}
	if n := statsCalls(e, sb.ID); n != 1 {
		t.Fatalf("%d stats reads, want 1: a sampled sandbox is not read again on request", n)
	}
}

func TestSamplerSkipsPausedAndBusySandboxes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
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
	sampleTimes(e, 0, 5)
	be.mu.Unlock()
	for _, id := range []string{paused.ID, busy.ID} {
		if n := statsCalls(e, id); n != 0 {
			t.Fatalf("sandbox %s was read %d times", id, n)
		}
	}
	got, err := e.m.Metrics(e.ctx, paused.ID, unbounded, math.MaxInt64)
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("a paused sandbox never sampled: %v, %v; want [] without waking it", got, err)
	}
	if _, ok, err := e.m.LatestMetric(e.ctx, paused.ID); ok || err != nil {
		t.Fatalf("LatestMetric of a paused sandbox never sampled: ok %v, err %v", ok, err)
	}
	sampleTimes(e, 10)
	if n := statsCalls(e, busy.ID); n != 1 {
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
			e := newEnvWith(t, func(o *Options) { o.MetricsRetention = tc.retention })
			sb := e.create(t, sandbox.CreateRequest{})
			sampleTimes(e, 0, 5)
			if err := e.m.Kill(e.ctx, sb.ID); err != nil {
				t.Fatal(err)
			}
			sampleTimes(e, 10)
			got, err := e.m.Metrics(e.ctx, sb.ID, unbounded, math.MaxInt64)
			if tc.retention > 0 && (err != nil || len(got) != 2) {
				t.Fatalf("just killed: %v, %v; want its 2 samples", got, err)
			}
			sampleTimes(e, tc.later)
			got, err = e.m.Metrics(e.ctx, sb.ID, unbounded, math.MaxInt64)
			if tc.keptLate != (err == nil) {
				t.Fatalf("at +%ds: %v, %v; kept = %v", tc.later, got, err, tc.keptLate)
			}
			if err != nil && !errors.Is(err, errdefs.ErrNotFound) {
				t.Fatalf("a forgotten sandbox: %v, want not found", err)
			}
		})
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

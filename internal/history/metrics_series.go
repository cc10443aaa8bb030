package history

import (
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/sandbox"
)

// metricsHistory holds the samples of every sandbox, live or killed less
// than retention ago.
type metricsHistory struct {
	interval  time.Duration
	retention time.Duration
	max       int

	mu   sync.Mutex
	byID map[string]*series
	// cpuUsed is the CPU time each team's sandboxes used since the last
	// takeCPU; born is when the history was made (see Metrics.sample).
	cpuUsed map[string]time.Duration
	born    time.Time
}

// series is one sandbox's samples, oldest first.
type series struct {
	samples []sandbox.Metric
	stride  int       // one sample is kept per stride intervals
	ended   time.Time // when the sampler found the sandbox gone; zero while it lives
	// lastCPU is the CPU time read at lastTime, the previous reading: the
	// next sample's CPU use is the share of its CPUs used since.
	lastCPU  uint64
	lastTime time.Time
}

func newMetricsHistory(interval, retention time.Duration, max int) *metricsHistory {
	return &metricsHistory{interval: interval, retention: retention, max: max, byID: map[string]*series{},
		cpuUsed: map[string]time.Duration{}, born: time.Now()}
}

// takeCPU returns the CPU time counted per team and starts again at zero.
func (h *metricsHistory) takeCPU() map[string]time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.cpuUsed
	h.cpuUsed = make(map[string]time.Duration, len(out))
	return out
}

// due reports whether id wants a sample at now: it has none, or its newest
// is about stride intervals old (half an interval early, for tick jitter).
func (h *metricsHistory) due(id string, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.byID[id]
	if s == nil || len(s.samples) == 0 {
		return true
	}
	last := s.samples[len(s.samples)-1].Timestamp
	return now.Sub(last) >= time.Duration(s.stride)*h.interval-h.interval/2
}

// add appends a sample, thinning the series first when it is full.
// Samples not newer than the newest are dropped, so a series stays in order.
func (h *metricsHistory) add(id string, m sandbox.Metric) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seriesOf(id).add(m, h.max)
}

// seriesOf returns id's series, made if new; callers hold h.mu.
func (h *metricsHistory) seriesOf(id string) *series {
	s := h.byID[id]
	if s == nil {
		s = &series{stride: 1}
		h.byID[id] = s
	}
	return s
}

func (s *series) add(m sandbox.Metric, max int) {
	if n := len(s.samples); n > 0 && !m.Timestamp.After(s.samples[n-1].Timestamp) {
		return
	}
	if len(s.samples) >= max {
		s.thin()
	}
	s.samples = append(s.samples, m)
}

// thin keeps every other sample, the newest included, and doubles the
// stride.
func (s *series) thin() {
	n, j := len(s.samples), 0
	for i := (n - 1) % 2; i < n; i += 2 {
		s.samples[j] = s.samples[i]
		j++
	}
	s.samples = s.samples[:j]
	s.stride *= 2
}

// has reports whether id has at least one sample.
func (h *metricsHistory) has(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.byID[id]
	return s != nil && len(s.samples) > 0
}

// window returns a copy of id's samples whose unix second lies in
// [from, to]; ok is false when id has no history at all.
func (h *metricsHistory) window(id string, from, to int64) (out []sandbox.Metric, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.byID[id]
	if s == nil {
		return nil, false
	}
	out = []sandbox.Metric{}
	for _, m := range s.samples {
		if t := m.Timestamp.Unix(); t >= from && t <= to {
			out = append(out, m)
		}
	}
	return out, true
}

// latest returns id's newest sample.
func (h *metricsHistory) latest(id string) (sandbox.Metric, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.byID[id]
	if s == nil || len(s.samples) == 0 {
		return sandbox.Metric{}, false
	}
	return s.samples[len(s.samples)-1], true
}

// sweep marks the series of sandboxes no longer live as ended at now and
// drops those ended retention ago (at once when retention is 0).
func (h *metricsHistory) sweep(live map[string]bool, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, s := range h.byID {
		if s.ended.IsZero() {
			if live[id] {
				continue
			}
			s.ended = now
			s.samples = append([]sandbox.Metric(nil), s.samples...) // give back the spare capacity
		}
		if now.Sub(s.ended) >= h.retention {
			delete(h.byID, id)
		}
	}
}

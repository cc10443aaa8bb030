package telemetry

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warren-sandbox/warren/internal/admission"
)

// waitBuckets span a turn that came at once to the whole default bound.
var waitBuckets = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60}

// starts is the start queue's wait histogram, made on first use so that a
// server without a queue (the API role) exports none.
type starts struct {
	once sync.Once
	wait *prometheus.HistogramVec
}

// ObserveStart records a start that had to wait for its turn: how long,
// and how the wait ended (admission.Outcome). It is the queue's
// Options.Observe.
func (r *Registry) ObserveStart(op string, waited time.Duration, outcome admission.Outcome) {
	r.starts.once.Do(func() {
		r.starts.wait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "warren_start_wait_seconds",
			Help:    "How long cold creates, resumes and forks waited for their turn while the machine was busy, by operation and outcome (admitted, timed_out and full: refused with 503, cancelled: the client left).",
			Buckets: waitBuckets,
		}, []string{"op", "outcome"})
		r.reg.MustRegister(r.starts.wait)
	})
	r.starts.wait.WithLabelValues(op, string(outcome)).Observe(waited.Seconds())
}

// startCollector reports the start queue as it is at each scrape.
type startCollector struct {
	stats                                           func() admission.Stats
	running, waiting, byTeam, slots, oldest, counts *prometheus.Desc
}

// RegisterStarts adds the start queue's levels and counts to r.
func (r *Registry) RegisterStarts(stats func() admission.Stats) {
	r.reg.MustRegister(&startCollector{
		stats:   stats,
		running: prometheus.NewDesc("warren_start_running", "Cold creates, resumes and forks under way.", nil, nil),
		waiting: prometheus.NewDesc("warren_start_waiting", "Starts waiting for their turn.", nil, nil),
		byTeam:  prometheus.NewDesc("warren_start_waiting_by_team", "Starts waiting for their turn, by team (only teams with one waiting).", []string{"team"}, nil),
		slots:   prometheus.NewDesc("warren_start_slots", "Starts that may run at once now (one while the sandboxes are short of CPU).", nil, nil),
		oldest:  prometheus.NewDesc("warren_start_oldest_wait_seconds", "How long the oldest waiting start has waited.", nil, nil),
		counts:  prometheus.NewDesc("warren_start_waits_total", "Starts that had to wait, by how the wait ended (admitted; timed_out and full: refused with 503; cancelled).", []string{"outcome"}, nil),
	})
}

func (c *startCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.running, c.waiting, c.byTeam, c.slots, c.oldest, c.counts} {
		ch <- d
	}
}

func (c *startCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(s.Running))
	ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, float64(s.Waiting))
	ch <- prometheus.MustNewConstMetric(c.slots, prometheus.GaugeValue, float64(s.Slots))
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, s.OldestWait.Seconds())
	for team, n := range s.WaitingByTeam {
		ch <- prometheus.MustNewConstMetric(c.byTeam, prometheus.GaugeValue, float64(n), team)
	}
	for outcome, n := range map[admission.Outcome]uint64{
		admission.Admitted: s.Admitted, admission.TimedOut: s.TimedOut, admission.Full: s.Full, admission.Cancelled: s.Cancelled,
	} {
		ch <- prometheus.MustNewConstMetric(c.counts, prometheus.CounterValue, float64(n), string(outcome))
	}
}

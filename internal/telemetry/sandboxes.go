package telemetry

import (
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warren-sandbox/warren/internal/sandbox"
)

// DefaultSandboxLimit is how many running sandboxes get per-sandbox series
// unless the server is told otherwise (--metrics-sandbox-limit).
const DefaultSandboxLimit = 1000

// sandboxCollector reports the manager's live view at each scrape: counts
// by state, template, runtime and team, and each running sandbox's latest
// sample (the 5 s sampler's, so a scrape reads no cgroup), for at most
// limit sandboxes.
type sandboxCollector struct {
	census  func() []sandbox.Live
	limit   int
	dropped prometheus.Counter

	count, cpu, mem, memLimit, disk, diskLimit *prometheus.Desc
}

// RegisterSandboxes adds the live sandboxes to r. Per-sandbox series are
// kept for the first limit running sandboxes by id (the same ones from one
// scrape to the next); the rest are counted in
// warren_sandbox_series_dropped_total. limit 0 keeps none.
func (r *Registry) RegisterSandboxes(census func() []sandbox.Live, limit int) {
	per := []string{"sandbox_id", "template", "team"}
	c := &sandboxCollector{
		census: census,
		limit:  max(limit, 0),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "warren_sandbox_series_dropped_total",
			Help: "Running sandboxes left out of the per-sandbox series because of --metrics-sandbox-limit, summed over scrapes.",
		}),
		count: prometheus.NewDesc("warren_sandboxes", "Live sandboxes by state (running, paused).",
			[]string{"state", "template", "runtime", "team"}, nil),
		cpu: prometheus.NewDesc("warren_sandbox_cpu_usage_ratio",
			"Share of its vCPUs a running sandbox used over the last sampling interval (0 to 1).", per, nil),
		mem:       prometheus.NewDesc("warren_sandbox_memory_bytes", "Memory a running sandbox uses.", per, nil),
		memLimit:  prometheus.NewDesc("warren_sandbox_memory_limit_bytes", "A running sandbox's memory limit.", per, nil),
		disk:      prometheus.NewDesc("warren_sandbox_disk_bytes", "Disk a running sandbox's writable layer uses.", per, nil),
		diskLimit: prometheus.NewDesc("warren_sandbox_disk_limit_bytes", "Size of a running sandbox's disk.", per, nil),
	}
	r.reg.MustRegister(c)
}

func (c *sandboxCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.count, c.cpu, c.mem, c.memLimit, c.disk, c.diskLimit} {
		ch <- d
	}
	c.dropped.Describe(ch)
}

// countKey is one warren_sandboxes series.
type countKey struct{ state, template, runtime, team string }

func (c *sandboxCollector) Collect(ch chan<- prometheus.Metric) {
	live := c.census()
	counts := map[countKey]int{}
	sampled := make([]sandbox.Live, 0, len(live))
	for _, l := range live {
		state := "paused"
		if l.Running {
			state = "running"
		}
		counts[countKey{state, l.TemplateID, l.Runtime, l.Team}]++
		if l.Latest != nil {
			sampled = append(sampled, l)
		}
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.count, prometheus.GaugeValue, float64(n), k.state, k.template, k.runtime, k.team)
	}
	if len(sampled) > c.limit {
		slices.SortFunc(sampled, func(a, b sandbox.Live) int { return strings.Compare(a.ID, b.ID) })
		c.dropped.Add(float64(len(sampled) - c.limit))
		sampled = sampled[:c.limit]
	}
	for _, l := range sampled {
		c.collectOne(ch, l)
	}
	c.dropped.Collect(ch)
}

// collectOne sends one running sandbox's gauges from its latest sample.
func (c *sandboxCollector) collectOne(ch chan<- prometheus.Metric, l sandbox.Live) {
	s := l.Latest
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, l.ID, l.TemplateID, l.Team)
	}
	gauge(c.cpu, s.CPUUsedPct/100)
	gauge(c.mem, float64(s.MemUsed))
	gauge(c.memLimit, float64(s.MemTotal))
	gauge(c.disk, float64(s.DiskUsed))
	gauge(c.diskLimit, float64(s.DiskTotal))
}

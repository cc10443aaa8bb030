package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/warren-sandbox/warren/internal/sandbox"
)

// poolCollector reports the warm pools as they are at each scrape.
type poolCollector struct {
	stats                      func() []sandbox.PoolStat
	ready, target, held, claim *prometheus.Desc
}

// RegisterPools adds the warm pools' levels and claims to r.
func (r *Registry) RegisterPools(stats func() []sandbox.PoolStat) {
	labels := []string{"template", "runtime"}
	r.reg.MustRegister(&poolCollector{
		stats:  stats,
		ready:  prometheus.NewDesc("warren_pool_ready", "Sandboxes booted ahead and waiting in the pool.", labels, nil),
		target: prometheus.NewDesc("warren_pool_target", "The pool's size for its current demand.", labels, nil),
		held:   prometheus.NewDesc("warren_pool_memory_bytes", "Host memory the pool's sandboxes hold.", labels, nil),
		claim:  prometheus.NewDesc("warren_pool_creates_total", "Creates that wanted the pool, by result (hit: took a pooled sandbox; miss: started cold).", append(labels, "result"), nil),
	})
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.ready
	ch <- c.target
	ch <- c.held
	ch <- c.claim
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.stats() {
		ch <- prometheus.MustNewConstMetric(c.ready, prometheus.GaugeValue, float64(s.Ready), s.Template, s.Runtime)
		ch <- prometheus.MustNewConstMetric(c.target, prometheus.GaugeValue, float64(s.Target), s.Template, s.Runtime)
		ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, float64(s.HeldMB)*(1<<20), s.Template, s.Runtime)
		ch <- prometheus.MustNewConstMetric(c.claim, prometheus.CounterValue, float64(s.Hits), s.Template, s.Runtime, "hit")
		ch <- prometheus.MustNewConstMetric(c.claim, prometheus.CounterValue, float64(s.Misses), s.Template, s.Runtime, "miss")
	}
}

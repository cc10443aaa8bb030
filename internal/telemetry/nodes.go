package telemetry

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/store"
)

// mib is a MiB in bytes: nodes report memory in MiB, metrics in bytes.
const mib = 1 << 20

// nodeCollector reports the cluster's nodes as the store has them at each
// scrape: how many are alive and dead, and each one's capacity, what its
// sandboxes reserve and the age of its heartbeat. The API role serves it,
// so one scrape of any API replica shows the whole cluster.
type nodeCollector struct {
	list      func(context.Context) ([]*store.Node, error)
	deadAfter time.Duration
	now       func() time.Time

	count, sandboxes, cpus, reservedCPUs, memory, reservedMemory, age *prometheus.Desc
}

// RegisterNodes adds the cluster's nodes, read with list, to r; a node is
// dead when its heartbeat is older than deadAfter.
func (r *Registry) RegisterNodes(list func(context.Context) ([]*store.Node, error), deadAfter time.Duration) {
	per := []string{"node"}
	r.reg.MustRegister(&nodeCollector{
		list: list, deadAfter: deadAfter, now: time.Now,
		count:          prometheus.NewDesc("warren_nodes", "Cluster nodes by state (alive, dead).", []string{"state"}, nil),
		sandboxes:      prometheus.NewDesc("warren_node_sandboxes", "Running sandboxes on a node, at its last heartbeat.", per, nil),
		cpus:           prometheus.NewDesc("warren_node_cpus", "A node's CPUs.", per, nil),
		reservedCPUs:   prometheus.NewDesc("warren_node_reserved_cpus", "vCPUs a node's running sandboxes reserve.", per, nil),
		memory:         prometheus.NewDesc("warren_node_memory_bytes", "A node's memory (MemTotal).", per, nil),
		reservedMemory: prometheus.NewDesc("warren_node_reserved_memory_bytes", "Memory a node's running sandboxes reserve.", per, nil),
		age:            prometheus.NewDesc("warren_node_heartbeat_age_seconds", "Time since a node's last heartbeat.", per, nil),
	})
}

func (c *nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.count, c.sandboxes, c.cpus, c.reservedCPUs, c.memory, c.reservedMemory, c.age} {
		ch <- d
	}
}

func (c *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	nodes, err := c.list(ctx)
	if err != nil {
		log.G(ctx).Warn("metrics: listing nodes", "err", err)
		return
	}
	now := c.now()
	alive := 0
	gauge := func(d *prometheus.Desc, v float64, node string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, node)
	}
	for _, n := range nodes {
		if n.Alive(now, c.deadAfter) {
			alive++
		}
		gauge(c.sandboxes, float64(n.Sandboxes), n.Name)
		gauge(c.cpus, float64(n.CPUs), n.Name)
		gauge(c.reservedCPUs, float64(n.ReservedCPUs), n.Name)
		gauge(c.memory, float64(n.MemoryMB)*mib, n.Name)
		gauge(c.reservedMemory, float64(n.ReservedMemoryMB)*mib, n.Name)
		gauge(c.age, now.Sub(n.HeartbeatAt).Seconds(), n.Name)
	}
	ch <- prometheus.MustNewConstMetric(c.count, prometheus.GaugeValue, float64(alive), "alive")
	ch <- prometheus.MustNewConstMetric(c.count, prometheus.GaugeValue, float64(len(nodes)-alive), "dead")
}

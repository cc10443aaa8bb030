// Package telemetry holds the server's Prometheus registry: the Go
// runtime's and the process's own metrics (goroutines, heap, open file
// descriptors), the live sandboxes and their resource use, lifecycle and
// build durations, warm pools, webhook deliveries, and the REST API's
// requests. The parts it
// measures call its Observe methods through hooks they declare, so none of
// them imports Prometheus. docs/operations.md lists every series.
package telemetry

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry is one server's metrics.
type Registry struct {
	reg      *prometheus.Registry
	ops      *ops
	http     *httpMetrics
	starts   starts
	webhooks *webhooks
}

// New returns a registry with the Go runtime and process collectors and
// warren's operation and request metrics; the live views (sandboxes,
// pools) register once their sources exist.
func New() *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return &Registry{reg: reg, ops: newOps(reg), http: newHTTPMetrics(reg), webhooks: newWebhooks(reg)}
}

// Registerer is where more collectors go.
func (r *Registry) Registerer() prometheus.Registerer { return r.reg }

// Handler serves the metrics in Prometheus' text format.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

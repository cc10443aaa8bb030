// Package telemetry holds the server's Prometheus registry. It exports the
// Go runtime's and the process's own metrics (goroutines, heap, open file
// descriptors), which operators and the load test watch; warren's own
// metrics register here as they are added.
package telemetry

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry is one server's metrics.
type Registry struct {
	reg *prometheus.Registry
}

// New returns a registry with the Go runtime and process collectors.
func New() *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return &Registry{reg: reg}
}

// Registerer is where more collectors go.
func (r *Registry) Registerer() prometheus.Registerer { return r.reg }

// Handler serves the metrics in Prometheus' text format.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

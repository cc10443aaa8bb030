package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// httpMetrics count the API's requests by the route pattern that served
// them: the patterns are a fixed set, where raw paths (sandbox ids) would
// grow without bound.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// httpBuckets: most API calls answer in milliseconds; a create waits for
// the sandbox, a build-file upload for its bytes.
var httpBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warren_http_requests_total",
			Help: "REST API requests answered, by route pattern (\"other\": no route) and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "warren_http_request_duration_seconds",
			Help:    "How long REST API requests took to answer, by route pattern.",
			Buckets: httpBuckets,
		}, []string{"route"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// ObserveRequest records one API request answered by the handler
// registered for route (its ServeMux pattern; "" when none matched).
func (r *Registry) ObserveRequest(route string, status int, took time.Duration) {
	if route == "" || route == "/" {
		route = "other"
	}
	r.http.requests.WithLabelValues(route, codeLabel(status)).Inc()
	r.http.duration.WithLabelValues(route).Observe(took.Seconds())
}

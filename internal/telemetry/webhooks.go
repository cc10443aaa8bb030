package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// webhookBuckets span a receiver on the same network (milliseconds) to
// one that answers at the attempt timeout (10 s by default).
var webhookBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// webhooks are the webhook delivery attempts' count and durations.
type webhooks struct {
	attempts *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newWebhooks(reg prometheus.Registerer) *webhooks {
	w := &webhooks{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warren_webhook_deliveries_total",
			Help: "Webhook delivery attempts, by outcome: delivered (the receiver answered 2xx), retry (failed; another attempt follows), failed (failed, the last attempt).",
		}, []string{"outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "warren_webhook_delivery_duration_seconds",
			Help:    "How long webhook delivery attempts took, from sending the event to the receiver's answer or the failure, by outcome.",
			Buckets: webhookBuckets,
		}, []string{"outcome"}),
	}
	reg.MustRegister(w.attempts, w.duration)
	return w
}

// ObserveWebhook records one webhook delivery attempt; it is the events
// service's Options.Observe.
func (r *Registry) ObserveWebhook(outcome string, took time.Duration) {
	r.webhooks.attempts.WithLabelValues(outcome).Inc()
	r.webhooks.duration.WithLabelValues(outcome).Observe(took.Seconds())
}

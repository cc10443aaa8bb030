package telemetry

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestWebhookSeries: each attempt counts once under its outcome and
// lands in the duration histogram's bucket for how long it took.
func TestWebhookSeries(t *testing.T) {
	r := New()
	r.ObserveWebhook("delivered", 20*time.Millisecond)
	r.ObserveWebhook("delivered", 3*time.Second)
	r.ObserveWebhook("retry", 10*time.Second)
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, line := range []string{
		`warren_webhook_deliveries_total{outcome="delivered"} 2`,
		`warren_webhook_deliveries_total{outcome="retry"} 1`,
		`warren_webhook_delivery_duration_seconds_bucket{outcome="delivered",le="0.025"} 1`,
		`warren_webhook_delivery_duration_seconds_bucket{outcome="delivered",le="2.5"} 1`,
		`warren_webhook_delivery_duration_seconds_bucket{outcome="delivered",le="5"} 2`,
		`warren_webhook_delivery_duration_seconds_count{outcome="retry"} 1`,
	} {
		if !strings.Contains(string(body), "\n"+line+"\n") {
			t.Errorf("no %q in the metrics", line)
		}
	}
	if strings.Contains(string(body), `outcome="failed"`) {
		t.Error("a series for an outcome that never happened")
	}
}

package apiserver

import (
	"fmt"
	"net/http"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/store"
)

// The window of a webhook's deliveryStats (?window=).
const (
	defaultStatsWindow = 24 * time.Hour
	minStatsWindow     = time.Minute
	maxStatsWindow     = 30 * 24 * time.Hour
)

// statsWindow reads ?window=, a Go duration.
func statsWindow(r *http.Request) (time.Duration, error) {
	v := r.URL.Query().Get("window")
	if v == "" {
		return defaultStatsWindow, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < minStatsWindow || d > maxStatsWindow {
		return 0, invalid(fmt.Sprintf("window must be a duration between %s and %s (like 1h or 90m), not %q",
			minStatsWindow, "720h", v))
	}
	return d, nil
}

// withStats is hook's JSON with its delivery statistics over the window
// that ends now.
func (s *Server) withStats(r *http.Request, hook *store.Webhook, window time.Duration, now time.Time) (rest.Webhook, error) {
	out := toWebhookJSON(hook)
	since := now.Add(-window).UTC()
	st, err := s.opts.Store.DeliveryStats(r.Context(), hook.ID, since)
	if err != nil {
		return out, fmt.Errorf("reading the delivery statistics of webhook %q: %w", hook.ID, err)
	}
	out.DeliveryStats = toStatsJSON(st, window, since)
	return out, nil
}

func toStatsJSON(st *store.DeliveryStats, window time.Duration, since time.Time) *rest.WebhookDeliveryStats {
	out := &rest.WebhookDeliveryStats{WindowSeconds: int(window / time.Second), Since: since, Pending: st.Pending,
		Delivered: st.Delivered, Failed: st.Failed, Attempts: st.Attempts, FailedAttempts: st.FailedAttempts}
	if settled := st.Delivered + st.Failed; settled > 0 {
		rate := float64(st.Delivered) / float64(settled)
		out.SuccessRate = &rate
	}
	if st.Attempts > 0 {
		out.DurationMs = &rest.WebhookAttemptDurations{Mean: int(st.MeanDuration.Milliseconds()),
			P50: int(st.P50Duration.Milliseconds()), P95: int(st.P95Duration.Milliseconds()), Max: int(st.MaxDuration.Milliseconds())}
	}
	if !st.LastSuccess.IsZero() {
		out.LastSuccessAt = &st.LastSuccess
	}
	if !st.LastFailure.IsZero() {
		out.LastFailureAt, out.LastError = &st.LastFailure, &st.LastError
		if st.LastFailureStatus != 0 {
			out.LastFailureStatusCode = &st.LastFailureStatus
		}
	}
	return out
}

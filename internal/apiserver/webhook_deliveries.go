package apiserver

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/warren-sandbox/warren/api/rest"
)

// Paging of a webhook's deliveries.
const (
	defaultDeliveryLimit = 20
	maxDeliveryLimit     = 100
)

// webhookDeliveries serves GET /events/webhooks/{webhookID}/deliveries:
// the newest deliveries with their state (pending, delivered, failed),
// attempts, the receiver's last status and error, and the next attempt.
func (s *Server) webhookDeliveries(w http.ResponseWriter, r *http.Request) {
	hook, err := s.ownWebhook(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	limit := defaultDeliveryLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > maxDeliveryLimit {
			fail(w, r, invalid(fmt.Sprintf("limit must be between 1 and %d, not %q", maxDeliveryLimit, v)))
			return
		}
	}
	s.syncEvents(r)
	ds, err := s.opts.Store.ListDeliveries(r.Context(), hook.ID, limit)
	if err != nil {
		fail(w, r, err)
		return
	}
	out := make([]rest.WebhookDelivery, 0, len(ds))
	for _, d := range ds {
		out = append(out, toDeliveryJSON(d))
	}
	writeJSON(w, http.StatusOK, out)
}

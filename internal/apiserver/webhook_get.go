package apiserver

import (
	"net/http"

	"github.com/warren-sandbox/warren/api/rest"
)

// listWebhooks serves GET /events/webhooks: the caller's team's webhooks
// (every team's for the admin key), without their secrets.
func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request) {
	all, err := s.opts.Store.ListWebhooks(r.Context())
	if err != nil {
		fail(w, r, err)
		return
	}
	out := []rest.Webhook{}
	for _, h := range all {
		if owns(r, h.TeamID) {
			out = append(out, toWebhookJSON(h))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// getWebhook serves GET /events/webhooks/{webhookID}.
func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request) {
	hook, err := s.ownWebhook(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toWebhookJSON(hook))
}

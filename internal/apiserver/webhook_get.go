package apiserver

import (
	"net/http"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
)

// listWebhooks serves GET /events/webhooks: the caller's team's webhooks
// (every team's for the admin key), without their secrets, each with its
// delivery statistics over ?window=.
func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request) {
	window, err := statsWindow(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	s.syncEvents(r)
	all, err := s.opts.Store.ListWebhooks(r.Context())
	if err != nil {
		fail(w, r, err)
		return
	}
	out, now := []rest.Webhook{}, time.Now()
	for _, h := range all {
		if !owns(r, h.TeamID) {
			continue
		}
		hook, err := s.withStats(r, h, window, now)
		if err != nil {
			fail(w, r, err)
			return
		}
		out = append(out, hook)
	}
	writeJSON(w, http.StatusOK, out)
}

// getWebhook serves GET /events/webhooks/{webhookID}, with the webhook's
// delivery statistics over ?window=.
func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request) {
	hook, err := s.ownWebhook(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	window, err := statsWindow(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	s.syncEvents(r)
	out, err := s.withStats(r, hook, window, time.Now())
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

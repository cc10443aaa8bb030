package apiserver

import "net/http"

// deleteWebhook serves DELETE /events/webhooks/{webhookID}: the webhook
// goes with its deliveries, pending ones included. 200, as E2B answers.
func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	hook, err := s.ownWebhook(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	if err := s.opts.Store.DeleteWebhook(r.Context(), hook.ID); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

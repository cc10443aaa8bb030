package apiserver

import (
	"net/http"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
)

// updateWebhook serves PATCH /events/webhooks/{webhookID}: the fields
// given replace the webhook's, the others stay. Deliveries already
// pending go to the new URL, signed with the new secret.
func (s *Server) updateWebhook(w http.ResponseWriter, r *http.Request) {
	hook, err := s.ownWebhook(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	var body rest.WebhookUpdate
	if err := decode(r, &body, false); err != nil {
		fail(w, r, err)
		return
	}
	if body.Name != nil {
		hook.Name, err = *body.Name, checkWebhookName(*body.Name)
	}
	if err == nil && body.URL != nil {
		hook.URL, err = *body.URL, s.checkWebhookURL(*body.URL)
	}
	if err == nil && body.Events != nil {
		hook.Events, err = webhookTypes(*body.Events)
	}
	if err == nil && body.SignatureSecret != nil {
		hook.Secret, err = *body.SignatureSecret, checkWebhookSecret(*body.SignatureSecret)
	}
	if err != nil {
		fail(w, r, err)
		return
	}
	if body.Enabled != nil {
		hook.Enabled = *body.Enabled
	}
	hook.UpdatedAt = time.Now().UTC()
	if err := s.opts.Store.UpdateWebhook(r.Context(), hook); err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toWebhookJSON(hook))
}

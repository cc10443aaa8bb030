package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/events"
	"github.com/warren-sandbox/warren/internal/store"
)

// createWebhook serves POST /events/webhooks: a webhook of the caller's
// team, enabled unless asked otherwise.
func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request) {
	var body rest.NewWebhook
	if err := decode(r, &body, false); err != nil {
		fail(w, r, err)
		return
	}
	hook := &store.Webhook{ID: events.NewID(), TeamID: teamOf(r), Name: deref(body.Name), URL: body.URL,
		Enabled: body.Enabled == nil || *body.Enabled, Secret: body.SignatureSecret}
	types, err := webhookTypes(body.Events)
	if err == nil {
		err = checkWebhookName(hook.Name)
	}
	if err == nil {
		err = checkWebhookSecret(hook.Secret)
	}
	if err == nil {
		err = s.checkWebhookURL(hook.URL)
	}
	if err == nil {
		err = s.checkWebhookCount(r.Context(), hook.TeamID)
	}
	if err != nil {
		fail(w, r, err)
		return
	}
	hook.Events = types
	hook.CreatedAt = time.Now().UTC()
	hook.UpdatedAt = hook.CreatedAt
	if err := s.opts.Store.CreateWebhook(r.Context(), hook); err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, toWebhookJSON(hook))
}

// maxWebhooks bounds a team's webhooks: every event is delivered, and
// recorded, once per webhook.
const maxWebhooks = 100

// checkWebhookCount refuses a team's webhook past maxWebhooks. Creates
// racing each other may each pass; they are a team's own, few at once.
func (s *Server) checkWebhookCount(ctx context.Context, team string) error {
	all, err := s.opts.Store.ListWebhooks(ctx)
	if err != nil {
		return err
	}
	n := 0
	for _, w := range all {
		if store.TeamOf(w.TeamID) == store.TeamOf(team) {
			n++
		}
	}
	if n >= maxWebhooks {
		return errdefs.New(errdefs.ErrFailedPrecondition, fmt.Sprintf("this team has %d webhooks, the most allowed: delete one first", n))
	}
	return nil
}

package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/events"
	"github.com/warren-sandbox/warren/internal/store"
)

// Events is what the events and webhook endpoints ask of the event
// service (*events.Service): whether the server will call a URL, and to
// wait until the events recorded so far are stored, so that a list right
// after an operation shows its event.
type Events interface {
	CheckURL(raw string) error
	Sync(ctx context.Context)
	// Record records an event the API makes itself (a forgotten node's
	// sandboxes).
	Record(ctx context.Context, e *store.Event)
}

// Paging of the events endpoints, as E2B's.
const (
	defaultEventLimit = 10
	maxEventLimit     = 100
)

// eventQuery reads offset, limit, orderAsc and types (repeated or
// comma-separated) and scopes the query to the caller's team.
func eventQuery(r *http.Request) (store.EventQuery, error) {
	q := store.EventQuery{Limit: defaultEventLimit}
	v := r.URL.Query()
	var err error
	if s := v.Get("offset"); s != "" {
		if q.Offset, err = strconv.Atoi(s); err != nil || q.Offset < 0 {
			return q, invalid(fmt.Sprintf("offset must be a whole number of at least 0, not %q", s))
		}
	}
	if s := v.Get("limit"); s != "" {
		if q.Limit, err = strconv.Atoi(s); err != nil || q.Limit < 1 || q.Limit > maxEventLimit {
			return q, invalid(fmt.Sprintf("limit must be between 1 and %d, not %q", maxEventLimit, s))
		}
	}
	if s := v.Get("orderAsc"); s != "" {
		if q.Asc, err = strconv.ParseBool(s); err != nil {
			return q, invalid(fmt.Sprintf("orderAsc must be true or false, not %q", s))
		}
	}
	for _, t := range v["types"] {
		for _, one := range strings.Split(t, ",") {
			if one = strings.TrimSpace(one); one != "" {
				q.Types = append(q.Types, one)
			}
		}
	}
	if err := events.CheckTypes(q.Types); err != nil {
		return q, err
	}
	if !isAdmin(r) {
		q.TeamID = teamOf(r)
	}
	return q, nil
}

// toEventJSON renders an event as the API and webhooks show it.
func toEventJSON(e *store.Event) (rest.SandboxEvent, error) {
	p := events.PayloadOf(e)
	out := rest.SandboxEvent{Version: p.Version, ID: p.ID, Type: rest.SandboxEventType(p.Type), EventCategory: p.EventCategory,
		SandboxID: p.SandboxID, SandboxTemplateID: p.SandboxTemplateID, SandboxTeamID: p.SandboxTeamID, Timestamp: p.Timestamp}
	if e.Data != nil {
		var data map[string]any
		if err := json.Unmarshal(e.Data, &data); err != nil {
			return out, fmt.Errorf("event %s: eventData: %w", e.ID, err)
		}
		out.EventData = &data
	}
	if p.SandboxExecutionID != "" {
		out.SandboxExecutionID = &p.SandboxExecutionID
	}
	if p.SandboxBuildID != "" {
		out.SandboxBuildID = &p.SandboxBuildID
	}
	return out, nil
}

func toWebhookJSON(w *store.Webhook) rest.Webhook {
	types := make([]rest.SandboxEventType, len(w.Events))
	for i, t := range w.Events {
		types[i] = rest.SandboxEventType(t)
	}
	return rest.Webhook{ID: w.ID, TeamID: store.TeamOf(w.TeamID), Name: w.Name, URL: w.URL, Enabled: w.Enabled,
		Events: types, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
}

func toDeliveryJSON(d *store.Delivery) rest.WebhookDelivery {
	out := rest.WebhookDelivery{ID: d.ID, WebhookID: d.WebhookID, EventID: d.EventID, EventType: rest.SandboxEventType(d.EventType),
		Status: rest.WebhookDeliveryStatus(d.Status), Attempts: d.Attempts, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
	if !d.NextAttempt.IsZero() {
		out.NextAttemptAt = &d.NextAttempt
	}
	if d.LastStatus != 0 {
		out.LastStatusCode = &d.LastStatus
	}
	if d.LastError != "" {
		out.LastError = &d.LastError
	}
	if d.Attempts > 0 {
		ms := int(d.LastDuration.Milliseconds())
		out.LastDurationMs = &ms
	}
	return out
}

// ownWebhook returns the webhook of the path's webhookID if the caller's
// team owns it; another team's is not found, as one that does not exist.
func (s *Server) ownWebhook(r *http.Request) (*store.Webhook, error) {
	id := r.PathValue("webhookID")
	w, err := s.opts.Store.GetWebhook(r.Context(), id)
	if err == nil && !owns(r, w.TeamID) {
		err = errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("webhook %q not found", id))
	}
	if errdefs.IsNotFound(err) {
		return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("webhook %q not found", id))
	}
	return w, err
}

// webhookTypes converts and checks a webhook's event types: at least one,
// each known.
func webhookTypes(in []rest.SandboxEventType) ([]string, error) {
	if len(in) == 0 {
		return nil, invalid("events must name at least one event type")
	}
	out := make([]string, len(in))
	for i, t := range in {
		out[i] = string(t)
	}
	return out, events.CheckTypes(out)
}

// Bounds of a webhook's fields.
const (
	maxWebhookName   = 256
	maxWebhookSecret = 1024
)

func checkWebhookName(name string) error {
	if len(name) > maxWebhookName {
		return invalid(fmt.Sprintf("name must be at most %d bytes", maxWebhookName))
	}
	return nil
}

func checkWebhookSecret(secret string) error {
	if secret == "" || len(secret) > maxWebhookSecret {
		return invalid(fmt.Sprintf("signatureSecret must be 1 to %d bytes", maxWebhookSecret))
	}
	return nil
}

// checkWebhookURL asks the event service whether the server will call raw.
func (s *Server) checkWebhookURL(raw string) error {
	if s.opts.Events == nil {
		return errdefs.New(errdefs.ErrNotImplemented, "this server delivers no webhooks")
	}
	return s.opts.Events.CheckURL(raw)
}

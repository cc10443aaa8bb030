package warren

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
)

// Sandbox lifecycle event types, as E2B names them.
const (
	EventCreated     = "sandbox.lifecycle.created"
	EventPaused      = "sandbox.lifecycle.paused"
	EventResumed     = "sandbox.lifecycle.resumed"
	EventUpdated     = "sandbox.lifecycle.updated"
	EventSnapshotted = "sandbox.lifecycle.snapshotted"
	EventKilled      = "sandbox.lifecycle.killed"
)

// Event is one thing that happened to a sandbox (GET /events/sandboxes),
// the same document a webhook receives.
type Event struct {
	ID   string
	Type string // Event*
	// Data is the event's eventData: sandbox_metadata when created,
	// set_timeout or set_network when updated, execution when paused,
	// reason (request, timeout, died, retention, interrupted) and
	// execution when killed, snapshot_id when snapshotted; nil for none.
	Data        map[string]any
	SandboxID   string
	ExecutionID string // one run: new at the create and at each resume
	TemplateID  string
	BuildID     string
	TeamID      string
	Time        time.Time
}

// EventOptions select and page events. Zero values take the server's
// defaults: newest first, 10 at a time, every type.
type EventOptions struct {
	Offset int
	Limit  int // at most 100
	// Oldest lists the oldest first.
	Oldest bool
	Types  []string
}

// ListEvents returns the lifecycle events of the key's team's sandboxes
// (every team's for the admin key).
func (c *Client) ListEvents(ctx context.Context, o EventOptions) ([]Event, error) {
	p := rest.ListSandboxEventsParams(o.params())
	resp, err := c.api.ListSandboxEventsWithResponse(ctx, &p)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	return toEvents(*resp.JSON200), nil
}

// ListSandboxEvents returns one sandbox's lifecycle events; a killed
// sandbox's stay for the server's retention (default 7 days).
func (c *Client) ListSandboxEvents(ctx context.Context, sandboxID string, o EventOptions) ([]Event, error) {
	p := o.params()
	resp, err := c.api.ListEventsOfSandboxWithResponse(ctx, sandboxID, &p)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	return toEvents(*resp.JSON200), nil
}

func (o EventOptions) params() rest.ListEventsOfSandboxParams {
	var p rest.ListEventsOfSandboxParams
	if o.Offset > 0 {
		p.Offset = &o.Offset
	}
	if o.Limit > 0 {
		p.Limit = &o.Limit
	}
	if o.Oldest {
		p.OrderAsc = &o.Oldest
	}
	if len(o.Types) > 0 {
		p.Types = &o.Types
	}
	return p
}

func toEvents(in []rest.SandboxEvent) []Event {
	out := make([]Event, 0, len(in))
	for _, e := range in {
		ev := Event{ID: e.ID, Type: string(e.Type), SandboxID: e.SandboxID, TemplateID: e.SandboxTemplateID,
			TeamID: e.SandboxTeamID, Time: e.Timestamp, ExecutionID: deref(e.SandboxExecutionID), BuildID: deref(e.SandboxBuildID)}
		if e.EventData != nil {
			ev.Data = *e.EventData
		}
		out = append(out, ev)
	}
	return out
}

// Headers of a webhook delivery, as E2B names them.
const (
	WebhookIDHeader        = "e2b-webhook-id"
	WebhookDeliveryHeader  = "e2b-delivery-id" // the same for every attempt of one delivery
	WebhookSignatureHeader = "e2b-signature"
)

// VerifyWebhook reports whether signature (a delivery's e2b-signature
// header) is the one the webhook's secret gives its raw body: E2B's
// scheme, base64 of SHA-256 over the secret followed by the body, without
// '=' padding. Pass the body exactly as received, not re-encoded JSON.
func VerifyWebhook(secret string, body []byte, signature string) bool {
	h := sha256.New()
	h.Write([]byte(secret))
	h.Write(body)
	want := strings.TrimRight(base64.StdEncoding.EncodeToString(h.Sum(nil)), "=")
	return subtle.ConstantTimeCompare([]byte(want), []byte(signature)) == 1
}

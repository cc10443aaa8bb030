package warren

import (
	"context"
	"net/http"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
)

// Webhook is an endpoint registered for the team's sandbox events. Its
// secret is never returned.
type Webhook struct {
	ID        string
	TeamID    string
	Name      string
	URL       string
	Enabled   bool
	Events    []string // Event* types it receives
	CreatedAt time.Time
	UpdatedAt time.Time
	// Stats is how its deliveries are going over the last day, as
	// ListWebhooks and GetWebhook return it; nil elsewhere.
	Stats *WebhookStats
}

// WebhookStats is how a webhook's deliveries are going: Pending counts
// every delivery still to be made; Delivered and Failed the deliveries
// that settled since Since; Attempts the attempts made since then, with
// their durations. The last success and failure are of all kept.
type WebhookStats struct {
	Since                                               time.Time
	Pending, Delivered, Failed                          int
	Attempts, FailedAttempts                            int
	SuccessRate                                         float64 // Delivered/(Delivered+Failed); -1 when none settled
	MeanDuration, P50Duration, P95Duration, MaxDuration time.Duration
	LastSuccess, LastFailure                            time.Time
	LastFailureStatusCode                               int // 0 when the receiver did not answer
	LastError                                           string
}

// WebhookSpec registers a webhook.
type WebhookSpec struct {
	Name string
	// URL is http:// or https://. The server refuses internal addresses
	// (loopback, private, its own) unless its operator allows the range.
	URL    string
	Events []string
	// Secret signs each delivery (see VerifyWebhook).
	Secret string
	// Disabled registers it without deliveries until enabled.
	Disabled bool
}

// WebhookUpdate changes the fields that are set; the others stay.
type WebhookUpdate struct {
	Name, URL, Secret *string
	Enabled           *bool
	Events            []string // nil: unchanged
}

// WebhookDelivery is one event sent, or to be sent, to a webhook.
type WebhookDelivery struct {
	ID        string // the e2b-delivery-id header of its attempts
	EventID   string
	EventType string
	// Status is pending (NextAttempt is when), delivered or failed (every
	// attempt failed).
	Status      string
	Attempts    int
	NextAttempt time.Time
	// LastStatusCode is the receiver's HTTP status at the last attempt (0
	// when it did not answer); LastError why that attempt failed.
	LastStatusCode int
	LastError      string
	LastDuration   time.Duration // how long the last attempt took
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// CreateWebhook registers a webhook for the key's team.
func (c *Client) CreateWebhook(ctx context.Context, s WebhookSpec) (Webhook, error) {
	enabled := !s.Disabled
	body := rest.NewWebhook{Name: optional(s.Name), URL: s.URL, Events: lifecycleTypes(s.Events),
		SignatureSecret: s.Secret, Enabled: &enabled}
	resp, err := c.api.CreateWebhookWithResponse(ctx, body)
	if err := answer(resp, err, http.StatusCreated); err != nil {
		return Webhook{}, err
	}
	return toWebhook(resp.JSON201), nil
}

// ListWebhooks lists the key's team's webhooks (every team's for the admin key).
func (c *Client) ListWebhooks(ctx context.Context) ([]Webhook, error) {
	resp, err := c.api.ListWebhooksWithResponse(ctx, nil)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	out := make([]Webhook, 0, len(*resp.JSON200))
	for i := range *resp.JSON200 {
		out = append(out, toWebhook(&(*resp.JSON200)[i]))
	}
	return out, nil
}

// GetWebhook returns one webhook.
func (c *Client) GetWebhook(ctx context.Context, id string) (Webhook, error) {
	resp, err := c.api.GetWebhookWithResponse(ctx, id, nil)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return Webhook{}, err
	}
	return toWebhook(resp.JSON200), nil
}

// UpdateWebhook changes the fields u sets and returns the webhook as it
// now is.
func (c *Client) UpdateWebhook(ctx context.Context, id string, u WebhookUpdate) (Webhook, error) {
	body := rest.WebhookUpdate{Name: u.Name, URL: u.URL, SignatureSecret: u.Secret, Enabled: u.Enabled}
	if u.Events != nil {
		types := lifecycleTypes(u.Events)
		body.Events = &types
	}
	resp, err := c.api.UpdateWebhookWithResponse(ctx, id, body)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return Webhook{}, err
	}
	return toWebhook(resp.JSON200), nil
}

// DeleteWebhook unregisters a webhook; its pending deliveries are dropped.
func (c *Client) DeleteWebhook(ctx context.Context, id string) error {
	resp, err := c.api.DeleteWebhookWithResponse(ctx, id)
	return answer(resp, err, http.StatusOK)
}

// ListWebhookDeliveries returns a webhook's newest deliveries, at most limit
// (0: the server's default, 20; at most 100).
func (c *Client) ListWebhookDeliveries(ctx context.Context, id string, limit int) ([]WebhookDelivery, error) {
	var p rest.ListWebhookDeliveriesParams
	if limit > 0 {
		p.Limit = &limit
	}
	resp, err := c.api.ListWebhookDeliveriesWithResponse(ctx, id, &p)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	out := make([]WebhookDelivery, 0, len(*resp.JSON200))
	for _, d := range *resp.JSON200 {
		wd := WebhookDelivery{ID: d.ID, EventID: d.EventID, EventType: string(d.EventType), Status: string(d.Status),
			Attempts: d.Attempts, LastError: deref(d.LastError), CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
		if d.NextAttemptAt != nil {
			wd.NextAttempt = *d.NextAttemptAt
		}
		if d.LastStatusCode != nil {
			wd.LastStatusCode = *d.LastStatusCode
		}
		if d.LastDurationMs != nil {
			wd.LastDuration = time.Duration(*d.LastDurationMs) * time.Millisecond
		}
		out = append(out, wd)
	}
	return out, nil
}

func lifecycleTypes(in []string) []rest.SandboxEventType {
	out := make([]rest.SandboxEventType, len(in))
	for i, t := range in {
		out[i] = rest.SandboxEventType(t)
	}
	return out
}

func toWebhook(w *rest.Webhook) Webhook {
	types := make([]string, len(w.Events))
	for i, t := range w.Events {
		types[i] = string(t)
	}
	return Webhook{ID: w.ID, TeamID: w.TeamID, Name: w.Name, URL: w.URL, Enabled: w.Enabled, Events: types,
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt, Stats: toWebhookStats(w.DeliveryStats)}
}

func toWebhookStats(s *rest.WebhookDeliveryStats) *WebhookStats {
	if s == nil {
		return nil
	}
	out := &WebhookStats{Since: s.Since, Pending: s.Pending, Delivered: s.Delivered, Failed: s.Failed,
		Attempts: s.Attempts, FailedAttempts: s.FailedAttempts, SuccessRate: -1, LastError: deref(s.LastError)}
	if s.SuccessRate != nil {
		out.SuccessRate = *s.SuccessRate
	}
	if d := s.DurationMs; d != nil {
		ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
		out.MeanDuration, out.P50Duration, out.P95Duration, out.MaxDuration = ms(d.Mean), ms(d.P50), ms(d.P95), ms(d.Max)
	}
	if s.LastSuccessAt != nil {
		out.LastSuccess = *s.LastSuccessAt
	}
	if s.LastFailureAt != nil {
		out.LastFailure = *s.LastFailureAt
	}
	if s.LastFailureStatusCode != nil {
		out.LastFailureStatusCode = *s.LastFailureStatusCode
	}
	return out
}

package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

const selectWebhook = `SELECT id, team_id, name, url, enabled, events, secret, created_at, updated_at FROM webhooks`

// CreateWebhook implements store.Store.
func (s *Store) CreateWebhook(ctx context.Context, w *store.Webhook) error {
	if w.ID == "" {
		return fmt.Errorf("webhook without id: %w", errdefs.ErrInvalidArgument)
	}
	e := s.enc()
	args := []any{w.TeamID, w.Name, w.URL, w.Enabled, strings.Join(w.Events, " "),
		w.Secret, e.time(w.CreatedAt), e.time(w.UpdatedAt), w.ID}
	if e.err != nil {
		return fmt.Errorf("creating webhook %q: %w", w.ID, e.err)
	}
	_, err := s.db.Exec(ctx, `INSERT INTO webhooks (team_id, name, url, enabled, events, secret,
		created_at, updated_at, id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	if s.d.IsUniqueViolation(err) {
		return fmt.Errorf("webhook %q: %w", w.ID, errdefs.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("creating webhook %q: %w", w.ID, err)
	}
	return nil
}

// GetWebhook implements store.Store.
func (s *Store) GetWebhook(ctx context.Context, id string) (*store.Webhook, error) {
	return getOne(s.db.QueryRow(ctx, selectWebhook+` WHERE id = ?`, id), fmt.Sprintf("webhook %q", id), scanWebhook)
}

// ListWebhooks implements store.Store: oldest first.
func (s *Store) ListWebhooks(ctx context.Context) ([]*store.Webhook, error) {
	rows, err := s.db.Query(ctx, selectWebhook+` ORDER BY created_at NULLS FIRST, id`)
	return collect(rows, err, "listing webhooks", scanWebhook)
}

// UpdateWebhook implements store.Store.
func (s *Store) UpdateWebhook(ctx context.Context, w *store.Webhook) error {
	e := s.enc()
	args := []any{w.TeamID, w.Name, w.URL, w.Enabled, strings.Join(w.Events, " "),
		w.Secret, e.time(w.CreatedAt), e.time(w.UpdatedAt), w.ID}
	if e.err != nil {
		return fmt.Errorf("updating webhook %q: %w", w.ID, e.err)
	}
	n, err := s.db.Exec(ctx, `UPDATE webhooks SET team_id = ?, name = ?, url = ?, enabled = ?, events = ?,
		secret = ?, created_at = ?, updated_at = ? WHERE id = ?`, args...)
	return affected(n, err, fmt.Sprintf("updating webhook %q", w.ID))
}

// DeleteWebhook implements store.Store; its deliveries go by ON DELETE
// CASCADE in the same statement.
func (s *Store) DeleteWebhook(ctx context.Context, id string) error {
	n, err := s.db.Exec(ctx, `DELETE FROM webhooks WHERE id = ?`, id)
	return affected(n, err, fmt.Sprintf("deleting webhook %q", id))
}

func scanWebhook(row Row) (*store.Webhook, error) {
	var (
		w                store.Webhook
		events           string
		created, updated timeCol
	)
	if err := row.Scan(&w.ID, &w.TeamID, &w.Name, &w.URL, &w.Enabled, &events, &w.Secret, &created, &updated); err != nil {
		return nil, err
	}
	w.Events = strings.Fields(events)
	w.CreatedAt, w.UpdatedAt = created.t, updated.t
	return &w, nil
}

// DeliveryColumns are what a statement returning deliveries reads, in
// order (see Dialect.ClaimHeads).
const DeliveryColumns = `id, webhook_id, event_id, event_type, status, attempts, next_attempt, last_status,
	last_error, last_duration_ms, claimed_by, lease_until, created_at, updated_at`

const selectDelivery = `SELECT ` + DeliveryColumns + ` FROM webhook_deliveries`

// UpdateDelivery implements store.Store.
func (s *Store) UpdateDelivery(ctx context.Context, d *store.Delivery) error {
	e := s.enc()
	args := []any{d.Status, d.Attempts, e.nullTime(d.NextAttempt), d.LastStatus, d.LastError, d.LastDuration.Milliseconds(),
		d.ClaimedBy, e.nullTime(d.LeaseUntil), e.time(d.UpdatedAt), d.ID}
	if e.err != nil {
		return fmt.Errorf("updating delivery %q: %w", d.ID, e.err)
	}
	n, err := s.db.Exec(ctx, `UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt = ?,
		last_status = ?, last_error = ?, last_duration_ms = ?, claimed_by = ?, lease_until = ?, updated_at = ? WHERE id = ?`, args...)
	return affected(n, err, fmt.Sprintf("updating delivery %q", d.ID))
}

// ListDeliveries implements store.Store: newest first.
func (s *Store) ListDeliveries(ctx context.Context, webhookID string, limit int) ([]*store.Delivery, error) {
	rows, err := s.db.Query(ctx, selectDelivery+` WHERE webhook_id = ?
		ORDER BY created_at DESC NULLS LAST, id DESC LIMIT ?`, webhookID, limitArg(limit))
	return collect(rows, err, "listing deliveries", scanDelivery)
}

// PendingDeliveries implements store.Store, from the partial index of
// pending deliveries.
func (s *Store) PendingDeliveries(ctx context.Context, limit int) ([]*store.Delivery, error) {
	rows, err := s.db.Query(ctx, selectDelivery+` WHERE status = ?
		ORDER BY next_attempt NULLS FIRST, created_at, id LIMIT ?`, store.DeliveryPending, limitArg(limit))
	return collect(rows, err, "listing pending deliveries", scanDelivery)
}

func scanDelivery(row Row) (*store.Delivery, error) {
	var (
		d                             store.Delivery
		next, lease, created, updated timeCol
		tookMS                        int64
	)
	if err := row.Scan(&d.ID, &d.WebhookID, &d.EventID, &d.EventType, &d.Status, &d.Attempts, &next, &d.LastStatus,
		&d.LastError, &tookMS, &d.ClaimedBy, &lease, &created, &updated); err != nil {
		return nil, err
	}
	d.LastDuration = time.Duration(tookMS) * time.Millisecond
	d.NextAttempt, d.LeaseUntil, d.CreatedAt, d.UpdatedAt = next.t, lease.t, created.t, updated.t
	return &d, nil
}

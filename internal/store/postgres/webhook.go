package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

const selectWebhook = `SELECT id, team_id, name, url, enabled, events, secret, created_at, updated_at FROM webhooks`

// CreateWebhook implements store.Store.
func (s *Store) CreateWebhook(ctx context.Context, w *store.Webhook) error {
	if w.ID == "" {
		return fmt.Errorf("webhook without id: %w", errdefs.ErrInvalidArgument)
	}
	var e encoder
	args := []any{w.ID, w.TeamID, w.Name, w.URL, w.Enabled, strings.Join(w.Events, " "),
		w.Secret, e.time(w.CreatedAt), e.time(w.UpdatedAt)}
	if e.err != nil {
		return fmt.Errorf("creating webhook %q: %w", w.ID, e.err)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO webhooks (id, team_id, name, url, enabled, events, secret,
		created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, args...)
	if isUniqueViolation(err) {
		return fmt.Errorf("webhook %q: %w", w.ID, errdefs.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("creating webhook %q: %w", w.ID, err)
	}
	return nil
}

// GetWebhook implements store.Store.
func (s *Store) GetWebhook(ctx context.Context, id string) (*store.Webhook, error) {
	return getOne(s.pool.QueryRow(ctx, selectWebhook+` WHERE id = $1`, id), fmt.Sprintf("webhook %q", id), scanWebhook)
}

// ListWebhooks implements store.Store: oldest first.
func (s *Store) ListWebhooks(ctx context.Context) ([]*store.Webhook, error) {
	rows, err := s.pool.Query(ctx, selectWebhook+` ORDER BY created_at NULLS FIRST, id`)
	return collect(rows, err, "listing webhooks", scanWebhook)
}

// UpdateWebhook implements store.Store.
func (s *Store) UpdateWebhook(ctx context.Context, w *store.Webhook) error {
	var e encoder
	args := []any{w.ID, w.TeamID, w.Name, w.URL, w.Enabled, strings.Join(w.Events, " "),
		w.Secret, e.time(w.CreatedAt), e.time(w.UpdatedAt)}
	if e.err != nil {
		return fmt.Errorf("updating webhook %q: %w", w.ID, e.err)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE webhooks SET (team_id, name, url, enabled, events, secret, created_at,
		updated_at) = ($2, $3, $4, $5, $6, $7, $8, $9) WHERE id = $1`, args...)
	return affectedOne(tag, err, fmt.Sprintf("updating webhook %q", w.ID))
}

// DeleteWebhook implements store.Store; its deliveries go by ON DELETE
// CASCADE in the same statement.
func (s *Store) DeleteWebhook(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM webhooks WHERE id = $1`, id)
	return affectedOne(tag, err, fmt.Sprintf("deleting webhook %q", id))
}

func scanWebhook(row pgx.Row) (*store.Webhook, error) {
	var (
		w                store.Webhook
		events           string
		created, updated *int64
	)
	if err := row.Scan(&w.ID, &w.TeamID, &w.Name, &w.URL, &w.Enabled, &events, &w.Secret, &created, &updated); err != nil {
		return nil, err
	}
	w.Events = strings.Fields(events)
	w.CreatedAt, w.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &w, nil
}

// deliveryColumns are what scanDelivery reads.
const deliveryColumns = `id, webhook_id, event_id, event_type, status, attempts, next_attempt, last_status,
	last_error, last_duration_ms, claimed_by, lease_until, created_at, updated_at`

const selectDelivery = `SELECT ` + deliveryColumns + ` FROM webhook_deliveries`

// UpdateDelivery implements store.Store.
func (s *Store) UpdateDelivery(ctx context.Context, d *store.Delivery) error {
	var e encoder
	args := []any{d.ID, d.Status, d.Attempts, e.time(d.NextAttempt), d.LastStatus, d.LastError, e.time(d.UpdatedAt),
		d.ClaimedBy, e.time(d.LeaseUntil), d.LastDuration.Milliseconds()}
	if e.err != nil {
		return fmt.Errorf("updating delivery %q: %w", d.ID, e.err)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE webhook_deliveries SET (status, attempts, next_attempt, last_status,
		last_error, updated_at, claimed_by, lease_until, last_duration_ms) = ($2, $3, $4, $5, $6, $7, $8, $9, $10) WHERE id = $1`, args...)
	return affectedOne(tag, err, fmt.Sprintf("updating delivery %q", d.ID))
}

// ListDeliveries implements store.Store: newest first.
func (s *Store) ListDeliveries(ctx context.Context, webhookID string, limit int) ([]*store.Delivery, error) {
	rows, err := s.pool.Query(ctx, selectDelivery+` WHERE webhook_id = $1
		ORDER BY created_at DESC NULLS LAST, id DESC LIMIT $2`, webhookID, limitArg(limit))
	return collect(rows, err, "listing deliveries", scanDelivery)
}

// PendingDeliveries implements store.Store, from the partial index of
// pending deliveries.
func (s *Store) PendingDeliveries(ctx context.Context, limit int) ([]*store.Delivery, error) {
	rows, err := s.pool.Query(ctx, selectDelivery+` WHERE status = 'pending'
		ORDER BY next_attempt NULLS FIRST, created_at, id LIMIT $1`, limitArg(limit))
	return collect(rows, err, "listing pending deliveries", scanDelivery)
}

// limitArg maps 0 to NULL, which LIMIT takes as no limit.
func limitArg(limit int) any {
	if limit <= 0 {
		return nil
	}
	return limit
}

func scanDelivery(row pgx.Row) (*store.Delivery, error) {
	var (
		d                             store.Delivery
		next, lease, created, updated *int64
		tookMS                        int64
	)
	if err := row.Scan(&d.ID, &d.WebhookID, &d.EventID, &d.EventType, &d.Status, &d.Attempts, &next, &d.LastStatus,
		&d.LastError, &tookMS, &d.ClaimedBy, &lease, &created, &updated); err != nil {
		return nil, err
	}
	d.LastDuration = time.Duration(tookMS) * time.Millisecond
	d.NextAttempt, d.CreatedAt, d.UpdatedAt = fromNanos(next), fromNanos(created), fromNanos(updated)
	d.LeaseUntil = fromNanos(lease)
	return &d, nil
}

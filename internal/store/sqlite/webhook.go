package sqlite

import (
	"context"
	"database/sql"
	"errors"
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
	_, err := s.db.ExecContext(ctx, `INSERT INTO webhooks (id, team_id, name, url, enabled, events, secret, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, w.ID, w.TeamID, w.Name, w.URL, w.Enabled, strings.Join(w.Events, " "),
		w.Secret, formatTime(w.CreatedAt), formatTime(w.UpdatedAt))
	if isUniqueViolation(err) {
		return fmt.Errorf("webhook %q: %w", w.ID, errdefs.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("creating webhook: %w", err)
	}
	return nil
}

// GetWebhook implements store.Store.
func (s *Store) GetWebhook(ctx context.Context, id string) (*store.Webhook, error) {
	w, err := scanWebhook(s.db.QueryRowContext(ctx, selectWebhook+` WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("webhook %q: %w", id, errdefs.ErrNotFound)
	}
	return w, err
}

// ListWebhooks implements store.Store.
func (s *Store) ListWebhooks(ctx context.Context) ([]*store.Webhook, error) {
	rows, err := s.db.QueryContext(ctx, selectWebhook+` ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("listing webhooks: %w", err)
	}
	defer rows.Close()
	var out []*store.Webhook
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// UpdateWebhook implements store.Store.
func (s *Store) UpdateWebhook(ctx context.Context, w *store.Webhook) error {
	res, err := s.db.ExecContext(ctx, `UPDATE webhooks SET team_id = ?, name = ?, url = ?, enabled = ?, events = ?,
		secret = ?, created_at = ?, updated_at = ? WHERE id = ?`, w.TeamID, w.Name, w.URL, w.Enabled,
		strings.Join(w.Events, " "), w.Secret, formatTime(w.CreatedAt), formatTime(w.UpdatedAt), w.ID)
	return affectedOne(res, err, "updating webhook", w.ID)
}

// DeleteWebhook implements store.Store.
func (s *Store) DeleteWebhook(ctx context.Context, id string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE webhook_id = ?`, id); err != nil {
			return fmt.Errorf("deleting webhook deliveries: %w", err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM webhooks WHERE id = ?`, id)
		return affectedOne(res, err, "deleting webhook", id)
	})
}

// affectedOne turns a write that touched no row into ErrNotFound.
func affectedOne(res sql.Result, err error, op, id string) error {
	if err != nil {
		return fmt.Errorf("%s %q: %w", op, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s %q: %w", op, id, err)
	}
	if n == 0 {
		return fmt.Errorf("%s %q: %w", op, id, errdefs.ErrNotFound)
	}
	return nil
}

func scanWebhook(sc interface{ Scan(...any) error }) (*store.Webhook, error) {
	var (
		w                  store.Webhook
		events             string
		created, updatedAt string
	)
	if err := sc.Scan(&w.ID, &w.TeamID, &w.Name, &w.URL, &w.Enabled, &events, &w.Secret, &created, &updatedAt); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, fmt.Errorf("reading webhook: %w", err)
	}
	w.Events = strings.Fields(events)
	var err error
	if w.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if w.UpdatedAt, err = parseTime(updatedAt); err != nil {
		return nil, err
	}
	return &w, nil
}

// deliveryColumns are what scanDelivery reads.
const deliveryColumns = `id, webhook_id, event_id, event_type, status, attempts, next_attempt, last_status,
	last_error, last_duration_ms, claimed_by, lease_until, created_at, updated_at`

const selectDelivery = `SELECT ` + deliveryColumns + ` FROM webhook_deliveries`

// UpdateDelivery implements store.Store.
func (s *Store) UpdateDelivery(ctx context.Context, d *store.Delivery) error {
	res, err := s.db.ExecContext(ctx, `UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt = ?,
		last_status = ?, last_error = ?, last_duration_ms = ?, claimed_by = ?, lease_until = ?, updated_at = ? WHERE id = ?`,
		d.Status, d.Attempts, optTime(d.NextAttempt), d.LastStatus, d.LastError, d.LastDuration.Milliseconds(), d.ClaimedBy,
		optTime(d.LeaseUntil), formatTime(d.UpdatedAt), d.ID)
	return affectedOne(res, err, "updating delivery", d.ID)
}

// ListDeliveries implements store.Store.
func (s *Store) ListDeliveries(ctx context.Context, webhookID string, limit int) ([]*store.Delivery, error) {
	return s.queryDeliveries(ctx, selectDelivery+` WHERE webhook_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
		webhookID, noLimit(limit))
}

// PendingDeliveries implements store.Store.
func (s *Store) PendingDeliveries(ctx context.Context, limit int) ([]*store.Delivery, error) {
	return s.queryDeliveries(ctx, selectDelivery+` WHERE status = ? ORDER BY next_attempt, created_at, id LIMIT ?`,
		store.DeliveryPending, noLimit(limit))
}

// noLimit maps 0 to SQLite's "no limit".
func noLimit(limit int) int {
	if limit <= 0 {
		return -1
	}
	return limit
}

func (s *Store) queryDeliveries(ctx context.Context, query string, args ...any) ([]*store.Delivery, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("listing deliveries: %w", err)
	}
	defer rows.Close()
	var out []*store.Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

func scanDelivery(sc interface{ Scan(...any) error }) (*store.Delivery, error) {
	var (
		d                  store.Delivery
		next, lease        sql.NullString
		created, updatedAt string
		tookMS             int64
	)
	if err := sc.Scan(&d.ID, &d.WebhookID, &d.EventID, &d.EventType, &d.Status, &d.Attempts, &next, &d.LastStatus,
		&d.LastError, &tookMS, &d.ClaimedBy, &lease, &created, &updatedAt); err != nil {
		return nil, fmt.Errorf("reading delivery: %w", err)
	}
	d.LastDuration = time.Duration(tookMS) * time.Millisecond
	var err error
	if d.NextAttempt, err = parseOptTime(next); err != nil {
		return nil, err
	}
	if d.LeaseUntil, err = parseOptTime(lease); err != nil {
		return nil, err
	}
	if d.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if d.UpdatedAt, err = parseTime(updatedAt); err != nil {
		return nil, err
	}
	return &d, nil
}

// parseOptTime is the inverse of optTime: NULL is the zero time.
func parseOptTime(ns sql.NullString) (time.Time, error) {
	t, err := parseTimePtr(ns)
	if err != nil || t == nil {
		return time.Time{}, err
	}
	return *t, nil
}

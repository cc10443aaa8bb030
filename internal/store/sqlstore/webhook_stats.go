package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// DeliveryStats implements store.Store.
func (s *Store) DeliveryStats(ctx context.Context, webhookID string, since time.Time) (*store.DeliveryStats, error) {
	if since.IsZero() {
		// Everything: the earliest time both databases can compare,
		// where Postgres would store the zero time as NULL.
		since = time.Unix(0, -1<<63)
	}
	from, err := s.d.Time(since)
	if err != nil {
		return nil, fmt.Errorf("reading the stats of webhook %q: %w", webhookID, err)
	}
	var st store.DeliveryStats
	err = s.db.QueryRow(ctx, `SELECT
			COALESCE(SUM(CASE WHEN status = ? THEN 1 ELSE 0 END), 0),
			COALESCE(SUM(CASE WHEN status = ? AND updated_at >= ? THEN 1 ELSE 0 END), 0),
			COALESCE(SUM(CASE WHEN status = ? AND updated_at >= ? THEN 1 ELSE 0 END), 0)
		FROM webhook_deliveries WHERE webhook_id = ?`, store.DeliveryPending, store.DeliveryDelivered, from,
		store.DeliveryFailed, from, webhookID).Scan(&st.Pending, &st.Delivered, &st.Failed)
	if err != nil {
		return nil, fmt.Errorf("counting deliveries of webhook %q: %w", webhookID, err)
	}
	var sumMS, maxMS int64
	err = s.db.QueryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN ok THEN 0 ELSE 1 END), 0),
			COALESCE(SUM(duration_ms), 0), COALESCE(MAX(duration_ms), 0)
		FROM webhook_attempts WHERE webhook_id = ? AND at >= ?`, webhookID, from).
		Scan(&st.Attempts, &st.FailedAttempts, &sumMS, &maxMS)
	if err != nil {
		return nil, fmt.Errorf("counting attempts of webhook %q: %w", webhookID, err)
	}
	nth := func(rank int) (time.Duration, error) { return s.attemptDuration(ctx, webhookID, from, rank) }
	if err := st.SetDurations(time.Duration(sumMS)*time.Millisecond, time.Duration(maxMS)*time.Millisecond, nth); err != nil {
		return nil, err
	}
	if err := s.lastAttempts(ctx, webhookID, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// attemptDuration is the rank-th shortest duration of the webhook's
// attempts made since from (a column value).
func (s *Store) attemptDuration(ctx context.Context, webhookID string, from any, rank int) (time.Duration, error) {
	var ms int64
	err := s.db.QueryRow(ctx, `SELECT duration_ms FROM webhook_attempts WHERE webhook_id = ? AND at >= ?
		ORDER BY duration_ms LIMIT 1 OFFSET ?`, webhookID, from, rank).Scan(&ms)
	if err != nil {
		return 0, fmt.Errorf("reading attempt durations of webhook %q: %w", webhookID, err)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// lastAttempts fills in the newest successful and failed attempts.
func (s *Store) lastAttempts(ctx context.Context, webhookID string, st *store.DeliveryStats) error {
	var ok timeCol
	err := s.db.QueryRow(ctx, `SELECT MAX(at) FROM webhook_attempts WHERE webhook_id = ? AND ok`, webhookID).Scan(&ok)
	if err != nil {
		return fmt.Errorf("reading the last success of webhook %q: %w", webhookID, err)
	}
	st.LastSuccess = ok.t
	var at timeCol
	err = s.db.QueryRow(ctx, `SELECT at, http_status, error FROM webhook_attempts
		WHERE webhook_id = ? AND NOT ok ORDER BY at DESC LIMIT 1`, webhookID).Scan(&at, &st.LastFailureStatus, &st.LastError)
	if errors.Is(err, ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the last failure of webhook %q: %w", webhookID, err)
	}
	st.LastFailure = at.t
	return nil
}

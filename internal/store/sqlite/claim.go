package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// claimQuery leases each webhook's oldest due pending delivery unless the
// webhook has a live lease. One statement is atomic in SQLite, whose
// single writer also orders it against claims from other connections.
// Times compare as text: the layout is fixed-width.
const claimQuery = `UPDATE webhook_deliveries SET claimed_by = ?1, lease_until = ?2 WHERE id IN (
	SELECT d.id FROM webhook_deliveries d
	WHERE d.status = 'pending' AND (d.next_attempt IS NULL OR d.next_attempt <= ?3)
		AND (d.lease_until IS NULL OR d.lease_until <= ?3)
		AND NOT EXISTS (SELECT 1 FROM webhook_deliveries o
			WHERE o.webhook_id = d.webhook_id AND o.status = 'pending' AND o.id <> d.id
				AND (o.lease_until > ?3 OR ((o.next_attempt IS NULL OR o.next_attempt <= ?3)
					AND (o.created_at < d.created_at OR (o.created_at = d.created_at AND o.id < d.id)))))
	ORDER BY d.next_attempt, d.created_at, d.id LIMIT ?4)
RETURNING ` + deliveryColumns

// ClaimDeliveries implements store.Store.
func (s *Store) ClaimDeliveries(ctx context.Context, claimer string, now time.Time, lease time.Duration, limit int) ([]*store.Delivery, error) {
	if err := store.CheckClaim(claimer, lease, limit); err != nil {
		return nil, err
	}
	out, err := s.queryDeliveries(ctx, claimQuery, claimer, formatTime(now.Add(lease)), formatTime(now), limit)
	if err != nil {
		return nil, fmt.Errorf("claiming deliveries: %w", err)
	}
	// RETURNING comes in no particular order.
	slices.SortFunc(out, func(a, b *store.Delivery) int {
		return cmp.Or(a.NextAttempt.Compare(b.NextAttempt), a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// CompleteDelivery implements store.Store.
func (s *Store) CompleteDelivery(ctx context.Context, claimer string, d *store.Delivery) error {
	return s.endClaim(ctx, claimer, d.ID, func(tx *sql.Tx) error {
		// The attempt's history, for DeliveryStats; a retried recording
		// of one attempt keeps the first.
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_attempts (delivery_id, attempt, webhook_id, at, duration_ms,
			http_status, ok, error) SELECT id, ?, webhook_id, ?, ?, ?, ?, ? FROM webhook_deliveries WHERE id = ?
			ON CONFLICT DO NOTHING`, d.Attempts, formatTime(d.UpdatedAt), d.LastDuration.Milliseconds(), d.LastStatus,
			d.Status == store.DeliveryDelivered, d.LastError, d.ID)
		if err != nil {
			return fmt.Errorf("recording an attempt of delivery %q: %w", d.ID, err)
		}
		return nil
	}, `UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt = ?,
		last_status = ?, last_error = ?, last_duration_ms = ?, updated_at = ?, claimed_by = '', lease_until = NULL
		WHERE id = ? AND claimed_by = ?`, d.Status, d.Attempts, optTime(d.NextAttempt), d.LastStatus, d.LastError,
		d.LastDuration.Milliseconds(), formatTime(d.UpdatedAt), d.ID, claimer)
}

// ReleaseDelivery implements store.Store.
func (s *Store) ReleaseDelivery(ctx context.Context, claimer, id string) error {
	return s.endClaim(ctx, claimer, id, nil, `UPDATE webhook_deliveries SET claimed_by = '', lease_until = NULL
		WHERE id = ? AND claimed_by = ?`, id, claimer)
}

// endClaim runs update, which ends claimer's lease of delivery id, then
// (when it did) then, in one transaction, and tells a delivery that is
// gone from one claimed by another.
func (s *Store) endClaim(ctx context.Context, claimer, id string, then func(*sql.Tx) error, update string, args ...any) error {
	if claimer == "" {
		return fmt.Errorf("delivery %q: no claimer: %w", id, errdefs.ErrInvalidArgument)
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, update, args...)
		if err != nil {
			return fmt.Errorf("ending the claim of delivery %q: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			if err == nil && then != nil {
				err = then(tx)
			}
			return err
		}
		var holder string
		err = tx.QueryRowContext(ctx, `SELECT claimed_by FROM webhook_deliveries WHERE id = ?`, id).Scan(&holder)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("delivery %q: %w", id, errdefs.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("reading delivery %q: %w", id, err)
		}
		return fmt.Errorf("delivery %q is claimed by %q, not %q: %w", id, holder, claimer, errdefs.ErrConflict)
	})
}

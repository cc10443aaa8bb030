package sqlstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// ClaimDeliveries implements store.Store. Keeping each webhook's order
// against concurrent claimers is the database's own affair (see
// Dialect.ClaimHeads); here are the checks and the order of the result.
func (s *Store) ClaimDeliveries(ctx context.Context, claimer string, now time.Time, lease time.Duration, limit int) ([]*store.Delivery, error) {
	if err := store.CheckClaim(claimer, lease, limit); err != nil {
		return nil, err
	}
	e := s.enc()
	at, until := e.time(now), e.time(now.Add(lease))
	if e.err != nil {
		return nil, fmt.Errorf("claiming deliveries: %w", e.err)
	}
	var out []*store.Delivery
	err := s.db.InTx(ctx, func(tx Conn) error {
		rows, err := s.d.ClaimHeads(ctx, tx, claimer, at, until, limit)
		if err != nil || rows == nil {
			return err
		}
		out, err = collect(rows, nil, "leasing deliveries", scanDelivery)
		return err
	})
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
	e := s.enc()
	at := e.time(d.UpdatedAt)
	args := []any{d.Status, d.Attempts, e.nullTime(d.NextAttempt), d.LastStatus, d.LastError,
		d.LastDuration.Milliseconds(), at, d.ID, claimer}
	if e.err != nil {
		return fmt.Errorf("completing delivery %q: %w", d.ID, e.err)
	}
	return s.endClaim(ctx, claimer, d.ID, func(tx Conn) error {
		// The attempt's history, for DeliveryStats; a retried recording
		// of one attempt keeps the first.
		_, err := tx.Exec(ctx, `INSERT INTO webhook_attempts (delivery_id, attempt, webhook_id, at, duration_ms,
			http_status, ok, error) SELECT id, ?, webhook_id, ?, ?, ?, ?, ? FROM webhook_deliveries WHERE id = ?
			ON CONFLICT DO NOTHING`, d.Attempts, at, d.LastDuration.Milliseconds(), d.LastStatus,
			d.Status == store.DeliveryDelivered, d.LastError, d.ID)
		if err != nil {
			return fmt.Errorf("recording an attempt of delivery %q: %w", d.ID, err)
		}
		return nil
	}, `UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt = ?,
		last_status = ?, last_error = ?, last_duration_ms = ?, updated_at = ?, claimed_by = '', lease_until = NULL
		WHERE id = ? AND claimed_by = ?`, args...)
}

// ReleaseDelivery implements store.Store.
func (s *Store) ReleaseDelivery(ctx context.Context, claimer, id string) error {
	return s.endClaim(ctx, claimer, id, nil, `UPDATE webhook_deliveries SET claimed_by = '', lease_until = NULL
		WHERE id = ? AND claimed_by = ?`, id, claimer)
}

// endClaim runs update, which ends claimer's lease of delivery id, then
// (when it did) then, in one transaction, and tells a delivery that is
// gone from one claimed by another.
func (s *Store) endClaim(ctx context.Context, claimer, id string, then func(Conn) error, update string, args ...any) error {
	if claimer == "" {
		return fmt.Errorf("delivery %q: no claimer: %w", id, errdefs.ErrInvalidArgument)
	}
	return s.db.InTx(ctx, func(tx Conn) error {
		n, err := tx.Exec(ctx, update, args...)
		if err != nil {
			return fmt.Errorf("ending the claim of delivery %q: %w", id, err)
		}
		if n == 1 {
			if then != nil {
				return then(tx)
			}
			return nil
		}
		var holder string
		err = tx.QueryRow(ctx, `SELECT claimed_by FROM webhook_deliveries WHERE id = ?`, id).Scan(&holder)
		if errors.Is(err, ErrNoRows) {
			return fmt.Errorf("delivery %q: %w", id, errdefs.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("reading delivery %q: %w", id, err)
		}
		return fmt.Errorf("delivery %q is claimed by %q, not %q: %w", id, holder, claimer, errdefs.ErrConflict)
	})
}

package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// lockClaimable locks, skipping those another claim holds, up to $2
// webhooks that have a due, unleased pending delivery and no live lease,
// the longest waiting first. NO KEY UPDATE does not conflict with the
// KEY SHARE lock a new delivery's foreign key takes, so recording events
// does not wait on claims.
const lockClaimable = `SELECT w.id FROM webhooks w
	WHERE w.id IN (SELECT d.webhook_id FROM webhook_deliveries d WHERE d.status = 'pending'
			AND (d.next_attempt IS NULL OR d.next_attempt <= $1) AND (d.lease_until IS NULL OR d.lease_until <= $1))
		AND NOT EXISTS (SELECT 1 FROM webhook_deliveries o
			WHERE o.webhook_id = w.id AND o.status = 'pending' AND o.lease_until > $1)
	ORDER BY (SELECT min(d.next_attempt) FROM webhook_deliveries d
			WHERE d.webhook_id = w.id AND d.status = 'pending') NULLS FIRST, w.id
	LIMIT $2
	FOR NO KEY UPDATE OF w SKIP LOCKED`

// claimHeads leases the oldest due pending delivery of each webhook in $3
// that has no live lease. The outer conditions repeat the subquery's
// because, when a row changed under a concurrent update, Postgres
// rechecks only these on its new version.
const claimHeads = `UPDATE webhook_deliveries u SET claimed_by = $1, lease_until = $2
	WHERE u.id IN (SELECT DISTINCT ON (d.webhook_id) d.id FROM webhook_deliveries d
			WHERE d.webhook_id = ANY($3) AND d.status = 'pending' AND (d.next_attempt IS NULL OR d.next_attempt <= $4)
			ORDER BY d.webhook_id, d.created_at NULLS FIRST, d.id)
		AND u.status = 'pending' AND (u.next_attempt IS NULL OR u.next_attempt <= $4)
		AND NOT EXISTS (SELECT 1 FROM webhook_deliveries o
			WHERE o.webhook_id = u.webhook_id AND o.status = 'pending' AND o.lease_until > $4)
	RETURNING ` + deliveryColumns

// ClaimDeliveries implements store.Store. SKIP LOCKED on the deliveries
// alone would not keep a webhook's order: two claims, each reading before
// the other commits, could lease two deliveries of one webhook (write
// skew). So a claim first locks the webhooks it will claim from, and then,
// in a second statement whose snapshot is taken once those locks are
// held (read committed), sees every lease committed by earlier claims of
// those webhooks and leases each one's head.
func (s *Store) ClaimDeliveries(ctx context.Context, claimer string, now time.Time, lease time.Duration, limit int) ([]*store.Delivery, error) {
	if err := store.CheckClaim(claimer, lease, limit); err != nil {
		return nil, err
	}
	var e encoder
	at, until := e.time(now), e.time(now.Add(lease))
	if e.err != nil {
		return nil, fmt.Errorf("claiming deliveries: %w", e.err)
	}
	var out []*store.Delivery
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, lockClaimable, at, limit)
		if err != nil {
			return fmt.Errorf("locking webhooks: %w", err)
		}
		hooks, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(hooks) == 0 {
			return err
		}
		rows, err = tx.Query(ctx, claimHeads, claimer, until, hooks, at)
		out, err = collect(rows, err, "leasing deliveries", scanDelivery)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claiming deliveries: %w", err)
	}
	slices.SortFunc(out, func(a, b *store.Delivery) int {
		return cmp.Or(a.NextAttempt.Compare(b.NextAttempt), a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// CompleteDelivery implements store.Store.
func (s *Store) CompleteDelivery(ctx context.Context, claimer string, d *store.Delivery) error {
	var e encoder
	at := e.time(d.UpdatedAt)
	args := []any{d.ID, claimer, d.Status, d.Attempts, e.time(d.NextAttempt), d.LastStatus, d.LastError, at,
		d.LastDuration.Milliseconds()}
	if e.err != nil {
		return fmt.Errorf("completing delivery %q: %w", d.ID, e.err)
	}
	return s.endClaim(ctx, claimer, d.ID, func(tx pgx.Tx) error {
		// The attempt's history, for DeliveryStats; a retried recording
		// of one attempt keeps the first.
		_, err := tx.Exec(ctx, `INSERT INTO webhook_attempts (delivery_id, attempt, webhook_id, at, duration_ms,
			http_status, ok, error) SELECT id, $2, webhook_id, $3, $4, $5, $6, $7 FROM webhook_deliveries WHERE id = $1
			ON CONFLICT DO NOTHING`, d.ID, d.Attempts, at, d.LastDuration.Milliseconds(), d.LastStatus,
			d.Status == store.DeliveryDelivered, d.LastError)
		if err != nil {
			return fmt.Errorf("recording an attempt of delivery %q: %w", d.ID, err)
		}
		return nil
	}, `UPDATE webhook_deliveries SET (status, attempts, next_attempt, last_status,
		last_error, updated_at, last_duration_ms, claimed_by, lease_until) = ($3, $4, $5, $6, $7, $8, $9, '', NULL)
		WHERE id = $1 AND claimed_by = $2`, args...)
}

// ReleaseDelivery implements store.Store.
func (s *Store) ReleaseDelivery(ctx context.Context, claimer, id string) error {
	return s.endClaim(ctx, claimer, id, nil, `UPDATE webhook_deliveries SET claimed_by = '', lease_until = NULL
		WHERE id = $1 AND claimed_by = $2`, id, claimer)
}

// endClaim runs update, which ends claimer's lease of delivery id, then
// (when it did) then, in one transaction, and tells a delivery that is
// gone from one claimed by another.
func (s *Store) endClaim(ctx context.Context, claimer, id string, then func(pgx.Tx) error, update string, args ...any) error {
	if claimer == "" {
		return fmt.Errorf("delivery %q: no claimer: %w", id, errdefs.ErrInvalidArgument)
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, update, args...)
		if err != nil {
			return fmt.Errorf("ending the claim of delivery %q: %w", id, err)
		}
		if tag.RowsAffected() == 1 {
			if then != nil {
				return then(tx)
			}
			return nil
		}
		var holder string
		err = tx.QueryRow(ctx, `SELECT claimed_by FROM webhook_deliveries WHERE id = $1`, id).Scan(&holder)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("delivery %q: %w", id, errdefs.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("reading delivery %q: %w", id, err)
		}
		return fmt.Errorf("delivery %q is claimed by %q, not %q: %w", id, holder, claimer, errdefs.ErrConflict)
	})
}

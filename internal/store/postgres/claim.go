package postgres

import (
	"context"

	"github.com/warren-sandbox/warren/internal/store/sqlstore"
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
	RETURNING ` + sqlstore.DeliveryColumns

// ClaimHeads implements sqlstore.Dialect. SKIP LOCKED on the deliveries
// alone would not keep a webhook's order: two claims, each reading before
// the other commits, could lease two deliveries of one webhook (write
// skew). So a claim first locks the webhooks it will claim from, and then,
// in a second statement whose snapshot is taken once those locks are
// held (read committed), sees every lease committed by earlier claims of
// those webhooks and leases each one's head.
func (dialect) ClaimHeads(ctx context.Context, tx sqlstore.Conn, claimer string, at, until any, limit int) (sqlstore.Rows, error) {
	rows, err := tx.Query(ctx, lockClaimable, at, limit)
	hooks, err := collectStrings(rows, err)
	if err != nil || len(hooks) == 0 {
		return nil, err
	}
	return tx.Query(ctx, claimHeads, claimer, until, hooks, at)
}

// collectStrings reads rows of one text column.
func collectStrings(rows sqlstore.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

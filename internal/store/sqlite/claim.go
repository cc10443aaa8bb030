package sqlite

import (
	"context"

	"github.com/warren-sandbox/warren/internal/store/sqlstore"
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
RETURNING ` + sqlstore.DeliveryColumns

// ClaimHeads implements sqlstore.Dialect.
func (dialect) ClaimHeads(ctx context.Context, tx sqlstore.Conn, claimer string, at, until any, limit int) (sqlstore.Rows, error) {
	return tx.Query(ctx, claimQuery, claimer, until, at, limit)
}

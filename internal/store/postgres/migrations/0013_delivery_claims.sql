-- 0013: delivery leases (issue 17). A delivery worker claims a due
-- delivery by writing its id and the lease's end, so that workers in
-- several processes never attempt one delivery at once, and a webhook has
-- at most one delivery leased, which keeps its receiver's order. A lease
-- whose holder died runs out and the delivery is claimable again.
ALTER TABLE webhook_deliveries ADD COLUMN claimed_by TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_deliveries ADD COLUMN lease_until BIGINT;

-- A claim looks at each webhook's pending deliveries, oldest first.
CREATE INDEX webhook_deliveries_webhook_pending ON webhook_deliveries (webhook_id, created_at, id)
	WHERE status = 'pending';

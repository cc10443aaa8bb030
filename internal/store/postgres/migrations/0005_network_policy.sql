-- 0005: a sandbox's network policy (netpolicy.Policy as jsonb; NULL when it
-- says nothing beyond the internet switch). Postgres never held the legacy
-- E2B network column the SQLite store still reads.
ALTER TABLE sandboxes ADD COLUMN network_policy JSONB;

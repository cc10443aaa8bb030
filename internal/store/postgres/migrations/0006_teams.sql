-- 0006: teams own keys, sandboxes, snapshots and templates. Scopes are
-- space-separated (empty: every scope); a key may expire.
ALTER TABLE api_keys ADD COLUMN team_id TEXT NOT NULL DEFAULT 'default';
ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN expires_at BIGINT;
ALTER TABLE sandboxes ADD COLUMN team_id TEXT NOT NULL DEFAULT 'default';
ALTER TABLE templates ADD COLUMN team_id TEXT NOT NULL DEFAULT 'default';

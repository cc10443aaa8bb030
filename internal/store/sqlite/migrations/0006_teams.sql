-- 0006: teams. Every key belongs to a team, and so does what its requests
-- make: sandboxes, snapshots and templates (builds and tags go with their
-- template). Everything made before teams existed belongs to `default`,
-- the admin key's team. A key may be limited to scopes (space-separated;
-- empty means every scope) and may expire.
ALTER TABLE api_keys ADD COLUMN team_id TEXT NOT NULL DEFAULT 'default';
ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
ALTER TABLE sandboxes ADD COLUMN team_id TEXT NOT NULL DEFAULT 'default';
ALTER TABLE templates ADD COLUMN team_id TEXT NOT NULL DEFAULT 'default';

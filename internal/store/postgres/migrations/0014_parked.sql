-- 0014: parked sandboxes. A paused sandbox whose state was copied to the
-- cluster's shared storage is parked: another node that shares that
-- storage (same share_id) can take it over when its own node dies.
ALTER TABLE sandboxes ADD COLUMN parked BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE nodes ADD COLUMN share_id TEXT NOT NULL DEFAULT '';

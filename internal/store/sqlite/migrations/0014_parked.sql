-- 0014: parked sandboxes. A paused sandbox whose state was copied to the
-- cluster's shared storage is parked: another node that shares that
-- storage (same share_id) can take it over when its own node dies.
-- Booleans are integers as elsewhere in this schema.
ALTER TABLE sandboxes ADD COLUMN parked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN share_id TEXT NOT NULL DEFAULT '';

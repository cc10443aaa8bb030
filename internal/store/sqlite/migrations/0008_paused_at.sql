-- 0008: when a paused sandbox was paused, for the operator's retention of
-- paused sandboxes (NULL while running).
ALTER TABLE sandboxes ADD COLUMN paused_at TEXT;

-- 0008: when a paused sandbox was paused (NULL while running).
ALTER TABLE sandboxes ADD COLUMN paused_at BIGINT;

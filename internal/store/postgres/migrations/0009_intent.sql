-- 0009: the lifecycle operation a sandbox is in the middle of ('' = none).
ALTER TABLE sandboxes ADD COLUMN intent TEXT NOT NULL DEFAULT '';

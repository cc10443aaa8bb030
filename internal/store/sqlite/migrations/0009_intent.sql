-- 0009: the lifecycle operation a sandbox is in the middle of ("pausing",
-- "resuming", "snapshotting", "killing"), written before the operation acts
-- so that a server restarted after a crash reconciles by it ('' = none).
ALTER TABLE sandboxes ADD COLUMN intent TEXT NOT NULL DEFAULT '';

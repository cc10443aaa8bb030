-- Snapshots of sandboxes. The record is one JSON document (it is read and
-- written whole); names get their own table so one name maps to one
-- snapshot and lookups by name use the primary key.
CREATE TABLE snapshots (
	id         TEXT NOT NULL PRIMARY KEY,
	created_at TEXT NOT NULL,
	data       TEXT NOT NULL -- store.Snapshot as JSON
) STRICT;

CREATE INDEX snapshots_created_at ON snapshots (created_at DESC, id);

CREATE TABLE snapshot_names (
	name        TEXT NOT NULL PRIMARY KEY,
	snapshot_id TEXT NOT NULL REFERENCES snapshots (id) ON DELETE CASCADE
) STRICT;

-- autoPauseMemory: false at create: a timeout pause keeps only the disk.
ALTER TABLE sandboxes ADD COLUMN auto_pause_no_memory INTEGER NOT NULL DEFAULT 0;

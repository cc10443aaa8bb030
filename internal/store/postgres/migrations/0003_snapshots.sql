-- 0003: snapshots. The record is one jsonb document, read and written
-- whole; names get their own table so one name maps to one snapshot.
CREATE TABLE snapshots (
	id         TEXT COLLATE "C"   NOT NULL PRIMARY KEY,
	created_at BIGINT,
	data       JSONB  NOT NULL
);

CREATE INDEX snapshots_created_at ON snapshots (created_at DESC NULLS LAST, id);

CREATE TABLE snapshot_names (
	name        TEXT COLLATE "C" NOT NULL PRIMARY KEY,
	snapshot_id TEXT NOT NULL REFERENCES snapshots (id) ON DELETE CASCADE
);

CREATE INDEX snapshot_names_snapshot ON snapshot_names (snapshot_id);

ALTER TABLE sandboxes ADD COLUMN auto_pause_no_memory BOOLEAN NOT NULL DEFAULT false;

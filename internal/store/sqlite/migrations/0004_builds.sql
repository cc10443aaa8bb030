-- 0004: template builds and tags. A template's row keeps the result of its
-- latest ready build (so sandbox creation reads one row); each build keeps
-- its own result so a tag can point at an older one.

-- The read-only layer stack (JSON list, top first), the image's ENV,
-- WORKDIR, USER, readiness check and labels (JSON objects).
ALTER TABLE templates ADD COLUMN layers    TEXT NOT NULL DEFAULT '[]';
ALTER TABLE templates ADD COLUMN env       TEXT NOT NULL DEFAULT '{}';
ALTER TABLE templates ADD COLUMN workdir   TEXT NOT NULL DEFAULT '';
ALTER TABLE templates ADD COLUMN user      TEXT NOT NULL DEFAULT '';
ALTER TABLE templates ADD COLUMN ready_cmd TEXT NOT NULL DEFAULT '';
ALTER TABLE templates ADD COLUMN labels    TEXT NOT NULL DEFAULT '{}';

-- Builds go with their template: deleting the template deletes them.
CREATE TABLE builds (
	id          TEXT    NOT NULL PRIMARY KEY,
	template_id TEXT    NOT NULL REFERENCES templates (id) ON DELETE CASCADE,
	status      TEXT    NOT NULL,
	reason      TEXT    NOT NULL,
	reason_step TEXT    NOT NULL,
	request     BLOB,             -- the build request JSON as received
	tags        TEXT    NOT NULL, -- JSON list, as requested
	created_at  TEXT    NOT NULL,
	finished_at TEXT    NOT NULL, -- the zero time while it runs
	layers      TEXT    NOT NULL, -- JSON list, top first
	env         TEXT    NOT NULL, -- JSON object
	workdir     TEXT    NOT NULL,
	user        TEXT    NOT NULL,
	start_cmd   TEXT    NOT NULL,
	ready_cmd   TEXT    NOT NULL,
	labels      TEXT    NOT NULL, -- JSON object
	cpu_count   INTEGER NOT NULL,
	memory_mb   INTEGER NOT NULL,
	size_bytes  INTEGER NOT NULL
) STRICT;

-- ListBuilds reads newest first, of one template or of all.
CREATE INDEX builds_template_created ON builds (template_id, created_at DESC, id);
CREATE INDEX builds_created ON builds (created_at DESC, id);

-- Tags are their own table, not the builds' JSON list: the primary key makes
-- "name:tag" name exactly one build, and moving a tag is one row update.
CREATE TABLE template_tags (
	template_id TEXT NOT NULL REFERENCES templates (id) ON DELETE CASCADE,
	tag         TEXT NOT NULL,
	build_id    TEXT NOT NULL REFERENCES builds (id) ON DELETE CASCADE,
	created_at  TEXT NOT NULL,
	PRIMARY KEY (template_id, tag)
) STRICT;

-- The builds foreign key is checked on every build delete; the index keeps
-- that from scanning the table.
CREATE INDEX template_tags_build ON template_tags (build_id);

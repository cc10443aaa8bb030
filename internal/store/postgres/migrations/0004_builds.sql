-- 0004: template builds and tags. A template's row keeps the result of its
-- latest ready build; each build keeps its own so a tag can name an older one.
ALTER TABLE templates ADD COLUMN layers    JSONB NOT NULL DEFAULT '[]';
ALTER TABLE templates ADD COLUMN env       JSONB NOT NULL DEFAULT '{}';
ALTER TABLE templates ADD COLUMN workdir   TEXT  NOT NULL DEFAULT '';
ALTER TABLE templates ADD COLUMN "user"    TEXT  NOT NULL DEFAULT '';
ALTER TABLE templates ADD COLUMN ready_cmd TEXT  NOT NULL DEFAULT '';
ALTER TABLE templates ADD COLUMN labels    JSONB NOT NULL DEFAULT '{}';

CREATE TABLE builds (
	id          TEXT COLLATE "C"    NOT NULL PRIMARY KEY,
	template_id TEXT    NOT NULL REFERENCES templates (id) ON DELETE CASCADE,
	status      TEXT    NOT NULL,
	reason      TEXT    NOT NULL,
	reason_step TEXT    NOT NULL,
	request     BYTEA,            -- the build request byte for byte as received
	tags        JSONB   NOT NULL,
	created_at  BIGINT,
	finished_at BIGINT,           -- NULL while it runs
	layers      JSONB   NOT NULL, -- top first
	env         JSONB   NOT NULL,
	workdir     TEXT    NOT NULL,
	"user"      TEXT    NOT NULL,
	start_cmd   TEXT    NOT NULL,
	ready_cmd   TEXT    NOT NULL,
	labels      JSONB   NOT NULL,
	cpu_count   INTEGER NOT NULL,
	memory_mb   INTEGER NOT NULL,
	size_bytes  BIGINT  NOT NULL
);

CREATE INDEX builds_template_created ON builds (template_id, created_at DESC NULLS LAST, id);
CREATE INDEX builds_created ON builds (created_at DESC NULLS LAST, id);

CREATE TABLE template_tags (
	template_id TEXT   NOT NULL REFERENCES templates (id) ON DELETE CASCADE,
	tag         TEXT COLLATE "C"   NOT NULL,
	build_id    TEXT   NOT NULL REFERENCES builds (id) ON DELETE CASCADE,
	created_at  BIGINT,
	PRIMARY KEY (template_id, tag)
);

-- Deleting a build checks the foreign key; the index keeps that off a scan.
CREATE INDEX template_tags_build ON template_tags (build_id);

-- 0001: the first schema, in Postgres' dialect. Versions follow the SQLite
-- store's one for one, so both stores reach the same version number.
--
-- Times are BIGINT nanoseconds since the Unix epoch, NULL for Go's zero
-- time: the store contract keeps nanoseconds (records round-trip exactly,
-- and lists order instants a nanosecond apart), which timestamptz, at
-- microseconds, cannot. Maps and lists are jsonb. Text keys that lists
-- order by use the "C" collation: byte order, as SQLite's, whatever the
-- database's locale.

CREATE TABLE sandboxes (
	id                   TEXT COLLATE "C"    NOT NULL PRIMARY KEY,
	template_id          TEXT    NOT NULL,
	alias                TEXT    NOT NULL,
	backend              TEXT    NOT NULL,
	state                TEXT    NOT NULL,
	envd_access_token    TEXT    NOT NULL,
	traffic_access_token TEXT    NOT NULL,
	allow_internet       BOOLEAN NOT NULL,
	metadata             JSONB   NOT NULL,
	env_vars             JSONB   NOT NULL,
	cpu_count            INTEGER NOT NULL,
	memory_mb            INTEGER NOT NULL,
	disk_mb              INTEGER NOT NULL,
	ip                   TEXT    NOT NULL,
	started_at           BIGINT,
	end_at               BIGINT,
	auto_pause           BOOLEAN NOT NULL,
	auto_resume          BOOLEAN NOT NULL,
	api_key_id           TEXT    NOT NULL
);

-- ListSandboxes reads newest first.
CREATE INDEX sandboxes_started_at ON sandboxes (started_at DESC NULLS LAST, id);

CREATE TABLE templates (
	id           TEXT COLLATE "C"    NOT NULL PRIMARY KEY,
	backend      TEXT    NOT NULL,
	rootfs_path  TEXT    NOT NULL,
	cpu_count    INTEGER NOT NULL,
	memory_mb    INTEGER NOT NULL,
	disk_mb      INTEGER NOT NULL,
	envd_version TEXT    NOT NULL,
	start_cmd    TEXT    NOT NULL,
	build_id     TEXT    NOT NULL,
	public       BOOLEAN NOT NULL,
	created_at   BIGINT,
	updated_at   BIGINT,
	size_bytes   BIGINT  NOT NULL
);

CREATE INDEX templates_created_at ON templates (created_at, id);

-- The primary key makes an alias name one template; position keeps the
-- caller's order.
CREATE TABLE template_aliases (
	alias       TEXT COLLATE "C"    NOT NULL PRIMARY KEY,
	template_id TEXT    NOT NULL REFERENCES templates (id) ON DELETE CASCADE,
	position    INTEGER NOT NULL
);

CREATE INDEX template_aliases_template ON template_aliases (template_id, position);

CREATE TABLE api_keys (
	id         TEXT COLLATE "C"    NOT NULL PRIMARY KEY,
	name       TEXT    NOT NULL,
	hash       TEXT    NOT NULL UNIQUE,
	mask       TEXT    NOT NULL,
	admin      BOOLEAN NOT NULL,
	created_at BIGINT,
	revoked_at BIGINT -- NULL while the key is active
);

CREATE INDEX api_keys_name ON api_keys (name);
CREATE INDEX api_keys_created_at ON api_keys (created_at, id);

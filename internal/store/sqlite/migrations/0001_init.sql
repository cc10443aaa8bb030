-- 0001: the first schema. Times are RFC 3339 text in UTC with a fixed
-- nine-digit fraction, so text order is time order; maps are JSON objects.

CREATE TABLE sandboxes (
	id                   TEXT    NOT NULL PRIMARY KEY,
	template_id          TEXT    NOT NULL,
	alias                TEXT    NOT NULL,
	backend              TEXT    NOT NULL,
	state                TEXT    NOT NULL,
	envd_access_token    TEXT    NOT NULL,
	traffic_access_token TEXT    NOT NULL,
	allow_internet       INTEGER NOT NULL,
	metadata             TEXT    NOT NULL, -- JSON object
	env_vars             TEXT    NOT NULL, -- JSON object
	cpu_count            INTEGER NOT NULL,
	memory_mb            INTEGER NOT NULL,
	disk_mb              INTEGER NOT NULL,
	ip                   TEXT    NOT NULL,
	started_at           TEXT    NOT NULL,
	end_at               TEXT    NOT NULL,
	auto_pause           INTEGER NOT NULL,
	auto_resume          INTEGER NOT NULL,
	network              BLOB,             -- SandboxNetworkConfig JSON as given
	api_key_id           TEXT    NOT NULL
) STRICT;

-- ListSandboxes reads newest first.
CREATE INDEX sandboxes_started_at ON sandboxes (started_at DESC, id);

CREATE TABLE templates (
	id           TEXT    NOT NULL PRIMARY KEY,
	backend      TEXT    NOT NULL,
	rootfs_path  TEXT    NOT NULL,
	cpu_count    INTEGER NOT NULL,
	memory_mb    INTEGER NOT NULL,
	disk_mb      INTEGER NOT NULL,
	envd_version TEXT    NOT NULL,
	start_cmd    TEXT    NOT NULL,
	build_id     TEXT    NOT NULL,
	public       INTEGER NOT NULL,
	created_at   TEXT    NOT NULL,
	updated_at   TEXT    NOT NULL,
	size_bytes   INTEGER NOT NULL
) STRICT;

-- Aliases get their own table rather than a JSON list so the primary key
-- enforces uniqueness across templates and lookups by alias use an index.
CREATE TABLE template_aliases (
	alias       TEXT    NOT NULL PRIMARY KEY,
	template_id TEXT    NOT NULL REFERENCES templates (id) ON DELETE CASCADE,
	position    INTEGER NOT NULL -- keeps the caller's order
) STRICT;

CREATE INDEX template_aliases_template ON template_aliases (template_id, position);

CREATE TABLE api_keys (
	id         TEXT    NOT NULL PRIMARY KEY,
	name       TEXT    NOT NULL,
	hash       TEXT    NOT NULL UNIQUE,
	mask       TEXT    NOT NULL,
	admin      INTEGER NOT NULL,
	created_at TEXT    NOT NULL,
	revoked_at TEXT                 -- NULL while the key is active
) STRICT;

CREATE INDEX api_keys_name ON api_keys (name);

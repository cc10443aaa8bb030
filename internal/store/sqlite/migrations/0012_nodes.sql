-- 0012: cluster nodes (issue 17) and the node that runs each sandbox
-- ('' in one-machine mode). A node's row is its last heartbeat: upserted
-- every interval, read by the API role to place creates and to tell
-- dead nodes. Templates are a JSON list of names; times are text in the
-- store's fixed-width layout.
ALTER TABLE sandboxes ADD COLUMN node TEXT NOT NULL DEFAULT '';
CREATE INDEX sandboxes_node ON sandboxes (node);

CREATE TABLE nodes (
	name              TEXT    NOT NULL PRIMARY KEY,
	advertise_url     TEXT    NOT NULL,
	cpus              INTEGER NOT NULL,
	memory_mb         INTEGER NOT NULL,
	disk_mb           INTEGER NOT NULL,
	sandboxes         INTEGER NOT NULL,
	reserved_cpus     INTEGER NOT NULL,
	reserved_memory_mb INTEGER NOT NULL,
	templates         TEXT    NOT NULL,
	version           TEXT    NOT NULL,
	started_at        TEXT    NOT NULL,
	heartbeat_at      TEXT    NOT NULL
);

-- Usage samples are per node too: in a cluster each node samples its own
-- sandboxes, and one node's sample of a team's minute must not replace
-- another's. SQLite cannot change a primary key in place: the table is
-- rebuilt, its samples kept with node ''.
CREATE TABLE usage_samples_by_node (
	team_id           TEXT    NOT NULL,
	node              TEXT    NOT NULL DEFAULT '',
	at                BIGINT  NOT NULL,
	running_sandboxes INTEGER NOT NULL,
	vcpus             INTEGER NOT NULL,
	memory_mb         BIGINT  NOT NULL,
	cpu_used_ms       BIGINT  NOT NULL,
	PRIMARY KEY (team_id, node, at)
);
INSERT INTO usage_samples_by_node (team_id, at, running_sandboxes, vcpus, memory_mb, cpu_used_ms)
	SELECT team_id, at, running_sandboxes, vcpus, memory_mb, cpu_used_ms FROM usage_samples;
DROP TABLE usage_samples;
ALTER TABLE usage_samples_by_node RENAME TO usage_samples;
CREATE INDEX usage_samples_at ON usage_samples (at);

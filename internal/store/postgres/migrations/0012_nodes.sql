-- 0012: cluster nodes (issue 17) and the node that runs each sandbox
-- ('' in one-machine mode). A node's row is its last heartbeat.
ALTER TABLE sandboxes ADD COLUMN node TEXT NOT NULL DEFAULT '';
CREATE INDEX sandboxes_node ON sandboxes (node);

CREATE TABLE nodes (
	name               TEXT COLLATE "C" NOT NULL PRIMARY KEY,
	advertise_url      TEXT    NOT NULL,
	cpus               INTEGER NOT NULL,
	memory_mb          BIGINT  NOT NULL,
	disk_mb            BIGINT  NOT NULL,
	sandboxes          INTEGER NOT NULL,
	reserved_cpus      INTEGER NOT NULL,
	reserved_memory_mb BIGINT  NOT NULL,
	templates          JSONB   NOT NULL,
	version            TEXT    NOT NULL,
	started_at         BIGINT,
	heartbeat_at       BIGINT
);

-- Usage samples are per node too: one node's sample of a team's minute
-- must not replace another's.
ALTER TABLE usage_samples ADD COLUMN node TEXT NOT NULL DEFAULT '';
ALTER TABLE usage_samples DROP CONSTRAINT usage_samples_pkey;
ALTER TABLE usage_samples ADD PRIMARY KEY (team_id, node, at);

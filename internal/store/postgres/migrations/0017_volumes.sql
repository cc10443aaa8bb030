-- 0017: volumes (issue 32). A volume is a team's persistent directory
-- that sandboxes mount by name; its name is unique in its team and its
-- token is the bearer of its content API. Times are Unix nanoseconds.
CREATE TABLE volumes (
	id         TEXT COLLATE "C" NOT NULL PRIMARY KEY,
	team_id    TEXT COLLATE "C" NOT NULL,
	name       TEXT COLLATE "C" NOT NULL,
	token      TEXT    NOT NULL,
	size_mb    INTEGER NOT NULL,
	created_at BIGINT  NOT NULL,
	UNIQUE (team_id, name)
);

-- The volumes a sandbox mounts: a JSON list of store.VolumeMount; NULL
-- (rows from before volumes) is none. A snapshot's are in its JSON
-- document (snapshots.data), which needs no column.
ALTER TABLE sandboxes ADD COLUMN volume_mounts JSONB;

-- 0 takes the server's default, -1 lifts the limit, as for the others.
ALTER TABLE teams ADD COLUMN max_volume_mb INTEGER NOT NULL DEFAULT 0;

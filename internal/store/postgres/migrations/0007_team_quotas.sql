-- 0007: per-team quotas; 0 takes the server's default, -1 lifts the limit.
CREATE TABLE teams (
	id            TEXT COLLATE "C"    NOT NULL PRIMARY KEY,
	max_sandboxes INTEGER NOT NULL,
	max_memory_mb INTEGER NOT NULL,
	max_cpus      INTEGER NOT NULL,
	max_builds    INTEGER NOT NULL
);

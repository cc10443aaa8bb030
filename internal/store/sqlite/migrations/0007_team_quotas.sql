-- 0007: per-team quotas. A team without a row, or a 0 in a column, has the
-- server's default; -1 lifts the limit.
CREATE TABLE teams (
	id            TEXT    NOT NULL PRIMARY KEY,
	max_sandboxes INTEGER NOT NULL,
	max_memory_mb INTEGER NOT NULL,
	max_cpus      INTEGER NOT NULL,
	max_builds    INTEGER NOT NULL
) STRICT;

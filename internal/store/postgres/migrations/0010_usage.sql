-- 0010: usage per team and minute; `at` is whole unix seconds, so a step
-- of GET /usage is integer division.
CREATE TABLE usage_samples (
	team_id           TEXT    NOT NULL,
	at                BIGINT  NOT NULL,
	running_sandboxes INTEGER NOT NULL,
	vcpus             INTEGER NOT NULL,
	memory_mb         BIGINT  NOT NULL,
	cpu_used_ms       BIGINT  NOT NULL,
	PRIMARY KEY (team_id, at) -- also serves a team's range reads
);

-- Range reads over every team and the retention sweep go by time.
CREATE INDEX usage_samples_at ON usage_samples (at);

-- 0010: usage over time. Each minute the server records every team's
-- totals of running sandboxes (count, vCPUs, reserved memory) and the CPU
-- time they used since the previous minute; GET /usage sums them by step.
-- `at` is whole unix seconds (a minute boundary) rather than text, so a
-- step is integer division in SQL; the plain types keep it portable.
CREATE TABLE usage_samples (
	team_id           TEXT    NOT NULL,
	at                BIGINT  NOT NULL,
	running_sandboxes INTEGER NOT NULL,
	vcpus             INTEGER NOT NULL,
	memory_mb         BIGINT  NOT NULL,
	cpu_used_ms       BIGINT  NOT NULL,
	PRIMARY KEY (team_id, at)
);

-- Range reads over every team and the retention sweep go by time.
CREATE INDEX usage_samples_at ON usage_samples (at);

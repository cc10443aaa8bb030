-- 0015: idempotency keys (issue 30). A create sent with an Idempotency-Key
-- header claims (team_id, key) here before it runs and records its answer
-- once the sandbox is made, so a retry gets the same sandbox even after a
-- restart. sandbox_id is '' while the create runs. Records are kept 24 h.
CREATE TABLE idempotency_keys (
	team_id     TEXT NOT NULL,
	key         TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	owner       TEXT NOT NULL DEFAULT '',
	sandbox_id  TEXT NOT NULL DEFAULT '',
	status      INTEGER NOT NULL DEFAULT 0,
	response    BLOB,
	created_at  TEXT NOT NULL,
	PRIMARY KEY (team_id, key)
);

-- Expired records are deleted by age.
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- 0011: sandbox lifecycle events, webhooks and their deliveries. eventData
-- is `json`, not jsonb: it keeps the bytes the recorder wrote.
CREATE TABLE sandbox_events (
	id           TEXT COLLATE "C"   NOT NULL PRIMARY KEY,
	type         TEXT   NOT NULL,
	sandbox_id   TEXT   NOT NULL,
	template_id  TEXT   NOT NULL,
	build_id     TEXT   NOT NULL,
	execution_id TEXT   NOT NULL,
	team_id      TEXT   NOT NULL,
	data         JSON,
	ts           BIGINT
);

CREATE INDEX sandbox_events_ts ON sandbox_events (ts NULLS FIRST, id);
CREATE INDEX sandbox_events_team ON sandbox_events (team_id, ts NULLS FIRST, id);
CREATE INDEX sandbox_events_sandbox ON sandbox_events (sandbox_id, ts NULLS FIRST, id);

CREATE TABLE webhooks (
	id         TEXT COLLATE "C"    NOT NULL PRIMARY KEY,
	team_id    TEXT    NOT NULL,
	name       TEXT    NOT NULL,
	url        TEXT    NOT NULL,
	enabled    BOOLEAN NOT NULL,
	events     TEXT    NOT NULL, -- event types, space-separated
	secret     TEXT    NOT NULL,
	created_at BIGINT,
	updated_at BIGINT
);

CREATE INDEX webhooks_created_at ON webhooks (created_at, id);

CREATE TABLE webhook_deliveries (
	id           TEXT COLLATE "C"    NOT NULL PRIMARY KEY,
	webhook_id   TEXT    NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
	event_id     TEXT    NOT NULL REFERENCES sandbox_events (id) ON DELETE CASCADE,
	event_type   TEXT    NOT NULL,
	status       TEXT    NOT NULL,
	attempts     INTEGER NOT NULL,
	next_attempt BIGINT,
	last_status  INTEGER NOT NULL,
	last_error   TEXT    NOT NULL,
	created_at   BIGINT,
	updated_at   BIGINT
);

-- The delivery worker reads what is due (only pending rows, so the index
-- stays small as delivered ones pile up); the API lists a webhook's newest.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt NULLS FIRST, created_at, id)
	WHERE status = 'pending';
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at DESC NULLS LAST, id DESC);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

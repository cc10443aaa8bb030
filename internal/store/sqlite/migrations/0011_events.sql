-- 0011: sandbox lifecycle events (GET /events/sandboxes), the webhooks
-- teams register for them and each webhook's deliveries. Times are text in
-- the store's fixed-width layout, so they sort as they compare; eventData
-- is JSON text or NULL. Plain types and no STRICT, so the schema carries
-- over to Postgres as it is.
CREATE TABLE sandbox_events (
	id           TEXT NOT NULL PRIMARY KEY,
	type         TEXT NOT NULL,
	sandbox_id   TEXT NOT NULL,
	template_id  TEXT NOT NULL,
	build_id     TEXT NOT NULL,
	execution_id TEXT NOT NULL,
	team_id      TEXT NOT NULL,
	data         TEXT,
	ts           TEXT NOT NULL
);

CREATE INDEX sandbox_events_ts ON sandbox_events (ts, id);
CREATE INDEX sandbox_events_team ON sandbox_events (team_id, ts, id);
CREATE INDEX sandbox_events_sandbox ON sandbox_events (sandbox_id, ts, id);

CREATE TABLE webhooks (
	id         TEXT    NOT NULL PRIMARY KEY,
	team_id    TEXT    NOT NULL,
	name       TEXT    NOT NULL,
	url        TEXT    NOT NULL,
	enabled    INTEGER NOT NULL,
	events     TEXT    NOT NULL, -- event types, space-separated
	secret     TEXT    NOT NULL,
	created_at TEXT    NOT NULL,
	updated_at TEXT    NOT NULL
);

CREATE TABLE webhook_deliveries (
	id           TEXT    NOT NULL PRIMARY KEY,
	webhook_id   TEXT    NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
	event_id     TEXT    NOT NULL REFERENCES sandbox_events (id) ON DELETE CASCADE,
	event_type   TEXT    NOT NULL,
	status       TEXT    NOT NULL,
	attempts     INTEGER NOT NULL,
	next_attempt TEXT,
	last_status  INTEGER NOT NULL,
	last_error   TEXT    NOT NULL,
	created_at   TEXT    NOT NULL,
	updated_at   TEXT    NOT NULL
);

-- The delivery worker reads what is due; the API lists a webhook's newest.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt, created_at, id);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

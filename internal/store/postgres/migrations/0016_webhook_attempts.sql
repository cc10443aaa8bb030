-- 0015: webhook delivery statistics (issue 30). Each attempt of a
-- delivery is kept with how long it took and how it went, so that an
-- operator can see whether a webhook is healthy (GET /events/webhooks:
-- deliveryStats). The attempts go with their delivery (events pruned,
-- webhook deleted). A delivery also keeps its last attempt's duration.
-- (Numbered after 0014; renumber freely: nothing refers to the number.)
ALTER TABLE webhook_deliveries ADD COLUMN last_duration_ms BIGINT NOT NULL DEFAULT 0;

CREATE TABLE webhook_attempts (
	delivery_id TEXT COLLATE "C" NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
	attempt     INTEGER NOT NULL,
	webhook_id  TEXT    NOT NULL,
	at          BIGINT  NOT NULL,
	duration_ms BIGINT  NOT NULL,
	http_status INTEGER NOT NULL,
	ok          BOOLEAN NOT NULL,
	error       TEXT    NOT NULL,
	PRIMARY KEY (delivery_id, attempt)
);

-- Stats read one webhook's attempts of a window, and its newest ones.
CREATE INDEX webhook_attempts_webhook ON webhook_attempts (webhook_id, at);

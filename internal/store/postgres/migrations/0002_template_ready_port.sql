-- 0002: a port the template's start command serves; create waits for it.
ALTER TABLE templates ADD COLUMN ready_port INTEGER NOT NULL DEFAULT 0;

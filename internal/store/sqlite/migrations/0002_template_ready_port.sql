-- A template whose start command serves a port (the code interpreter on
-- 49999) lets create wait until that port accepts connections.
ALTER TABLE templates ADD COLUMN ready_port INTEGER NOT NULL DEFAULT 0;

-- 0005: a sandbox's network policy in warren's own terms (JSON of
-- netpolicy.Policy). The old `network` column held E2B's
-- SandboxNetworkConfig as the client sent it; rows that still have it are
-- read through legacyNetwork and written back in the new column.
ALTER TABLE sandboxes ADD COLUMN network_policy TEXT;

-- Issue 25: who holds a lease, so that a process on the same host (same boot id, same pid
-- namespace) that finds the holder gone (no process with that pid and start time) takes the
-- lease over at once instead of waiting out its TTL. NULL where the holder did not say (an
-- older version, or a platform without /proc): then the TTL is the only way.
ALTER TABLE leases ADD COLUMN boot_id TEXT;
ALTER TABLE leases ADD COLUMN pid_ns TEXT;
ALTER TABLE leases ADD COLUMN pid BIGINT;
ALTER TABLE leases ADD COLUMN started BIGINT;

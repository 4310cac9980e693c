-- Replicas that divide the accounts (issue 34): each account is worked by one daemon at a
-- time. A daemon renews the leases of the accounts it works every few seconds; one that dies
-- lets them expire, and another daemon takes them over. Campaign leases (with their fences)
-- still guard every journal write inside an account.
CREATE TABLE account_leases (
    account TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    -- Who the holder is (as in `leases`): a daemon of this host that finds the holder's
    -- process gone (SIGKILL, OOM, a crash and a restart) takes its accounts over at once
    -- instead of after the lease's time.
    boot_id TEXT,
    pid_ns TEXT,
    pid BIGINT,
    started BIGINT
);

-- The daemons alive, by their last heartbeat: each takes its fair share of the accounts,
-- ceil(accounts / daemons alive).
CREATE TABLE daemon_heartbeats (
    holder TEXT PRIMARY KEY,
    seen_at BIGINT NOT NULL
);

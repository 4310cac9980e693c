-- Notifications sent (issue 33): one row per event a person must act on, keyed by the event's
-- identity (`halt:*:…`, `waiting_for_operator:acme`, …). A replica claims the row with
-- `INSERT … ON CONFLICT DO NOTHING` before it sends, so two replicas never both send and a
-- restart does not send again; the row is deleted when the condition clears, so a recurrence
-- notifies again. No address is ever stored here: the addresses are secrets.
CREATE TABLE notices (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    campaign TEXT,
    claimed_by TEXT NOT NULL,
    claimed_at BIGINT NOT NULL
);

-- Rounds are not lost (issue 11): a round that could not run for a transient reason (the
-- campaign's lease held elsewhere, the marketplace or the journal unavailable) is `deferred`
-- and tried again within its slot. `attempts` counts the tries; `bought` is what the slot's
-- earlier tries bought, so a retry buys only what is left of `per_run`.
ALTER TABLE rounds ADD COLUMN attempts BIGINT NOT NULL DEFAULT 1;
ALTER TABLE rounds ADD COLUMN bought BIGINT NOT NULL DEFAULT 0;

-- The id a file adopted an autobuyer by (issue 24). A changed spec replaces an adopted
-- autobuyer like any other: `autobuyer_id` then names the new one, and the file's `id` still
-- names the one it adopted (stopped by the replacement). That id stays accepted here, so the
-- file need not be edited after a replacement; any other id is refused (never re-pointed).
ALTER TABLE autobuyers ADD COLUMN adopted_id BIGINT;
UPDATE autobuyers SET adopted_id = autobuyer_id WHERE adopted_at IS NOT NULL;

-- Accounts already in use (issue 24).

-- A campaign that adopts an existing project (`project_id` in its file). `first_read_at`: the
-- first read of the link list after the adoption (links seen then were there before
-- linkrunner: they count at their own rent, never inside an adopted autobuyer's budget).
-- `confirmed_*`: the operator's `linkrunner resolve adopt`, after which changes may begin.
CREATE TABLE adoptions (
    campaign          TEXT PRIMARY KEY REFERENCES campaigns (name),
    project_id        BIGINT NOT NULL,
    recorded_at       BIGINT NOT NULL,
    first_read_at     BIGINT,
    confirmed_by      TEXT,
    confirmed_at      BIGINT,
    confirmed_reason  TEXT
);

-- An operator's word that the project's link list is complete (`linkrunner resolve
-- list-complete`): `links` is what the journal counted then; a read that shows fewer links
-- lapses it (`lapsed_at`), and buying stops again where others buy.
CREATE TABLE list_vouches (
    campaign   TEXT PRIMARY KEY REFERENCES campaigns (name),
    links      BIGINT NOT NULL,
    by_whom    TEXT NOT NULL,
    reason     TEXT NOT NULL,
    at         BIGINT NOT NULL,
    lapsed_at  BIGINT
);

-- Whether the last read of the link list carried paging fields and every page was read,
-- and how many links it showed.
ALTER TABLE projects ADD COLUMN last_read_complete BIGINT NOT NULL DEFAULT 0;
ALTER TABLE projects ADD COLUMN last_read_links BIGINT;

-- An autobuyer a file adopted by id: when, and the URL ids it covers (JSON array).
ALTER TABLE autobuyers ADD COLUMN adopted_at BIGINT;
ALTER TABLE autobuyers ADD COLUMN covers TEXT;

-- Pages held twice (issue 32): a donor page the project's link list showed holding two links
-- (or more) for one promoted URL, whoever bought them. One row per campaign, URL and page,
-- claimed with `INSERT … ON CONFLICT DO NOTHING` so that a replica and a restart record (warn,
-- count in `linkrunner_pages_held_twice_total`) each finding once; the row is deleted once a
-- read shown complete no longer shows the page held twice, so a recurrence is recorded again.
CREATE TABLE pages_held_twice (
    campaign      TEXT NOT NULL,
    url_id        BIGINT NOT NULL,
    page_id       BIGINT NOT NULL,
    -- How many links, and their ids as the list gave them (comma-separated, ascending).
    links         BIGINT NOT NULL,
    link_ids      TEXT NOT NULL,
    -- When a read first showed it, and last (ms since the epoch).
    first_seen_at BIGINT NOT NULL,
    last_seen_at  BIGINT NOT NULL,
    PRIMARY KEY (campaign, url_id, page_id)
);

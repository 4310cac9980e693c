-- The journal. Times are Unix milliseconds, money is kopecks, booleans are 0/1 BIGINT and
-- JSON is TEXT, so one set of queries reads the same types from PostgreSQL and SQLite.

CREATE TABLE campaigns (
    name        TEXT PRIMARY KEY,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);

-- `committed` is the monthly commitment: held links, reserved and uncertain intents and
-- running autobuyers' budgets. It only moves together with a `ledger` row.
CREATE TABLE budgets (
    campaign     TEXT PRIMARY KEY REFERENCES campaigns (name),
    cap          BIGINT NOT NULL,
    committed    BIGINT NOT NULL DEFAULT 0,
    links        BIGINT NOT NULL DEFAULT 0,
    total_links  BIGINT NOT NULL,
    daily_links  BIGINT NOT NULL
);

CREATE TABLE budget_days (
    campaign  TEXT NOT NULL REFERENCES campaigns (name),
    day       TEXT NOT NULL,
    links     BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (campaign, day)
);

CREATE TABLE intents (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    campaign        TEXT NOT NULL REFERENCES campaigns (name),
    kind            TEXT NOT NULL,
    natural_key     TEXT NOT NULL UNIQUE,
    state           TEXT NOT NULL,
    attempts        BIGINT NOT NULL DEFAULT 1,
    fingerprint     TEXT NOT NULL,
    request         TEXT NOT NULL,
    answer          TEXT,
    error           TEXT,
    reserved        BIGINT NOT NULL DEFAULT 0,
    reserved_links  BIGINT NOT NULL DEFAULT 0,
    reserve_day     TEXT,
    owner           TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    resolution      TEXT,
    resolved_at     BIGINT
);
CREATE INDEX intents_campaign_state ON intents (campaign, state);

-- Append-only: sum(delta) per campaign equals budgets.committed.
CREATE TABLE ledger (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    campaign   TEXT NOT NULL REFERENCES campaigns (name),
    intent_id  BIGINT REFERENCES intents (id),
    delta      BIGINT NOT NULL,
    links      BIGINT NOT NULL,
    reason     TEXT NOT NULL,
    at         BIGINT NOT NULL
);
CREATE INDEX ledger_campaign ON ledger (campaign);

CREATE TABLE projects (
    campaign    TEXT PRIMARY KEY REFERENCES campaigns (name),
    project_id  BIGINT NOT NULL,
    url_id      BIGINT NOT NULL,
    text_id     BIGINT NOT NULL
);

CREATE TABLE urls (
    campaign  TEXT NOT NULL REFERENCES campaigns (name),
    url       TEXT NOT NULL,
    url_id    BIGINT NOT NULL,
    PRIMARY KEY (campaign, url)
);

CREATE TABLE texts (
    campaign  TEXT NOT NULL REFERENCES campaigns (name),
    url       TEXT NOT NULL,
    text      TEXT NOT NULL,
    text_id   BIGINT NOT NULL,
    PRIMARY KEY (campaign, url, text)
);

CREATE TABLE filters (
    campaign   TEXT NOT NULL REFERENCES campaigns (name),
    name       TEXT NOT NULL,
    filter_id  BIGINT NOT NULL,
    PRIMARY KEY (campaign, name)
);

-- `reserved` is the part of `committed` this autobuyer holds while it runs.
CREATE TABLE autobuyers (
    campaign          TEXT NOT NULL REFERENCES campaigns (name),
    name              TEXT NOT NULL,
    autobuyer_id      BIGINT NOT NULL,
    running           BIGINT NOT NULL,
    spec_fingerprint  TEXT NOT NULL,
    monthly_budget    BIGINT NOT NULL,
    reserved          BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (campaign, name)
);

CREATE TABLE held_links (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    campaign         TEXT NOT NULL REFERENCES campaigns (name),
    intent_id        BIGINT NOT NULL UNIQUE REFERENCES intents (id),
    link_id          BIGINT,
    page_id          BIGINT NOT NULL,
    url_id           BIGINT NOT NULL,
    text_id          BIGINT NOT NULL,
    price            BIGINT NOT NULL,
    bought_at        BIGINT NOT NULL,
    seen_in_list_at  BIGINT
);
CREATE INDEX held_links_campaign ON held_links (campaign);

-- Links the project's list shows that no intent of ours bought (e.g. an autobuyer's).
CREATE TABLE foreign_links (
    campaign       TEXT NOT NULL REFERENCES campaigns (name),
    link_key       TEXT NOT NULL,
    link_id        BIGINT,
    page_id        BIGINT,
    url_id         BIGINT,
    text_id        BIGINT,
    price          BIGINT,
    status         TEXT,
    first_seen_at  BIGINT NOT NULL,
    last_seen_at   BIGINT NOT NULL,
    PRIMARY KEY (campaign, link_key)
);

CREATE TABLE searches (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    campaign       TEXT NOT NULL REFERENCES campaigns (name),
    url_id         BIGINT NOT NULL,
    job_handle_id  TEXT NOT NULL,
    meta_data      TEXT NOT NULL,
    state          TEXT NOT NULL,
    polls          BIGINT NOT NULL DEFAULT 0,
    deadline       BIGINT NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);
CREATE UNIQUE INDEX searches_one_open ON searches (campaign, url_id) WHERE state = 'open';

CREATE TABLE rounds (
    campaign     TEXT NOT NULL REFERENCES campaigns (name),
    slot         BIGINT NOT NULL,
    holder       TEXT NOT NULL,
    state        TEXT NOT NULL,
    detail       TEXT NOT NULL DEFAULT '',
    claimed_at   BIGINT NOT NULL,
    finished_at  BIGINT,
    PRIMARY KEY (campaign, slot)
);

-- Never deleted: `fence` only grows, so a released lease cannot hand out an old fence again.
CREATE TABLE leases (
    campaign    TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    fence       BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);

CREATE TABLE halts (
    scope   TEXT PRIMARY KEY,
    reason  TEXT NOT NULL,
    since   BIGINT NOT NULL
);

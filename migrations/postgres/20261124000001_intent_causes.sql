-- Why each attempt of an intent was made (issue 15): the cause (a buy round and its slot, a
-- reconciliation, a campaign file's removal, an operator's resolve), the campaign file's
-- content digest and the git commit of the campaigns directory, and the caps the pass saw.
-- Append-only; read by `linkrunner history` and `linkrunner explain`.
CREATE TABLE intent_causes (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    intent_id       BIGINT NOT NULL REFERENCES intents (id),
    attempt         BIGINT NOT NULL,
    cause           TEXT NOT NULL,
    slot            BIGINT,
    file_digest     TEXT,
    git_commit      TEXT,
    monthly_cap     BIGINT,
    max_link_price  BIGINT,
    note            TEXT NOT NULL DEFAULT '',
    at              BIGINT NOT NULL
);
CREATE INDEX intent_causes_intent ON intent_causes (intent_id);

-- Removals as decisions (issue 32): one row per recorded campaign whose file was seen gone,
-- until the file returns. Many files gone at once (a failed checkout, an empty ConfigMap
-- mount) hold their campaigns (nothing stopped) until the files return or an operator's
-- `linkrunner resolve removals` lets them proceed. Kept in the journal so a restart and
-- every replica judge the same removals the same way and honour the same word.
CREATE TABLE campaign_removals (
    campaign     TEXT PRIMARY KEY,
    -- When a process first found the file gone (ms since the epoch; the first writer wins).
    seen_at      BIGINT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('pending', 'held', 'proceeded', 'resolved')),
    -- The operator's word (`resolved`): who, when, why.
    resolved_by  TEXT,
    resolved_at  BIGINT,
    reason       TEXT
);

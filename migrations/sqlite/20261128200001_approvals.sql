-- Approval above a threshold (issue 33, the campaign file's threshold): one row per campaign whose
-- file ever set it. `approved` (kopecks) is the monthly commitment a person approved: the
-- baseline when the campaign was first seen with the key (the cap the journal already
-- recorded, else the file's), then each `linkrunner resolve approve`, which approves
-- `wanted`. `above` and `wanted` are the file's threshold and `budget.monthly` as the
-- last pass recorded them (`above` NULL once the file no longer sets it). The campaign's
-- `budgets.cap` is recorded no higher than `approved + above`, so the reservation the
-- database checks holds it.
CREATE TABLE approvals (
    campaign     TEXT PRIMARY KEY REFERENCES campaigns (name),
    approved     BIGINT NOT NULL CHECK (approved >= 0),
    above        BIGINT CHECK (above > 0),
    wanted       BIGINT NOT NULL CHECK (wanted >= 0),
    approved_by  TEXT NOT NULL,
    approved_at  BIGINT NOT NULL,
    reason       TEXT NOT NULL,
    updated_at   BIGINT NOT NULL
);

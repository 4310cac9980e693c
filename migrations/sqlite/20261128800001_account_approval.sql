-- Approval above a threshold for the account-wide cap (issue 33, the account file's
-- `approve_above`): at most one row. `approved` (kopecks) is the account cap a person
-- approved: the baseline when the threshold was first seen (the account cap the journal
-- already held, else the file's), then each `linkrunner resolve approve --account`, which
-- approves `wanted`. `above` and `wanted` are the account file's threshold and
-- `monthly_cap` as last applied (`above` NULL once the file no longer sets it). The
-- `account_cap` row is recorded no higher than `approved + above`, so the reservation the
-- database checks holds it.
CREATE TABLE account_approval (
    id           BIGINT PRIMARY KEY CHECK (id = 1),
    approved     BIGINT NOT NULL CHECK (approved >= 0),
    above        BIGINT CHECK (above > 0),
    wanted       BIGINT NOT NULL CHECK (wanted >= 0),
    approved_by  TEXT NOT NULL,
    approved_at  BIGINT NOT NULL,
    reason       TEXT NOT NULL,
    updated_at   BIGINT NOT NULL
);

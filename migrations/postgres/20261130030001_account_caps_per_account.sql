-- One account cap and one account-cap approval per marketplace account (issue 34): the one-row
-- tables of issues 24 and 33 become keyed by the account id that campaigns name
-- (`campaigns.account`); the row they held is the default account's. A reservation checks the
-- cap of its campaign's account, over the commitment of that account's campaigns only.
CREATE TABLE account_cap_by_account (
    account      TEXT PRIMARY KEY,
    monthly_cap  BIGINT NOT NULL CHECK (monthly_cap >= 0),
    -- Which setting put it there (`--account-monthly-cap` or the accounts file's path).
    source       TEXT NOT NULL,
    updated_at   BIGINT NOT NULL
);
INSERT INTO account_cap_by_account (account, monthly_cap, source, updated_at)
    SELECT 'default', monthly_cap, source, updated_at FROM account_cap;
DROP TABLE account_cap;
ALTER TABLE account_cap_by_account RENAME TO account_cap;

CREATE TABLE account_approval_by_account (
    account      TEXT PRIMARY KEY,
    approved     BIGINT NOT NULL CHECK (approved >= 0),
    above        BIGINT CHECK (above > 0),
    wanted       BIGINT NOT NULL CHECK (wanted >= 0),
    approved_by  TEXT NOT NULL,
    approved_at  BIGINT NOT NULL,
    reason       TEXT NOT NULL,
    updated_at   BIGINT NOT NULL
);
INSERT INTO account_approval_by_account
    (account, approved, above, wanted, approved_by, approved_at, reason, updated_at)
    SELECT 'default', approved, above, wanted, approved_by, approved_at, reason, updated_at
    FROM account_approval;
DROP TABLE account_approval;
ALTER TABLE account_approval_by_account RENAME TO account_approval;

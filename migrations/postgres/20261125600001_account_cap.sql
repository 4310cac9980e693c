-- The account-wide cap (issue 24): at most one row. `monthly_cap` bounds the sum of every
-- campaign's `budgets.committed`; a reservation checks it in the transaction that moves its
-- campaign's budget, after taking this row's lock (an `UPDATE` of it), so two daemons on one
-- database cannot together pass it. No row: no account cap.
CREATE TABLE account_cap (
    id           BIGINT PRIMARY KEY CHECK (id = 1),
    monthly_cap  BIGINT NOT NULL CHECK (monthly_cap >= 0),
    -- Which setting put it there (`--account-monthly-cap` or the account file's path).
    source       TEXT NOT NULL,
    updated_at   BIGINT NOT NULL
);

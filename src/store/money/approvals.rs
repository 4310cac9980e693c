//! Approval above a threshold (issue 33): the approved monthly commitment of a campaign whose
//! file sets a threshold, the threshold and the cap the file asks as the last pass recorded
//! them, and the operator's `linkrunner resolve approve`. Recording the caps records these in
//! the same transaction and keeps `budgets.cap` no higher than the approved amount plus the
//! threshold, so a raised cap is never spent past it, even by two daemons racing. Tested by
//! `tests/it` `store::approvals::*` on PostgreSQL and SQLite.

use chrono::{DateTime, Utc};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::store::StoreError;
use crate::store::handles::Campaigns;
use crate::store::rows::{col, read_row, stored};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::money::Money;
use linkrunner_domain::records::Approval;

/// The statements of one approval table: a campaign's (`approvals`, [`CAMPAIGN`]) or an
/// account's (`account_approval`, [`ACCOUNT`]). The same rules over both; each statement binds
/// the row's key (campaign or account) as `$1`.
pub(in crate::store) struct ApprovalTable {
    /// The operation [`record_ask`] fails as.
    ask_op: &'static str,
    /// Forgets the threshold: `$2` the cap asked, `$3` now.
    forget: &'static str,
    /// Records the threshold and the cap asked, the first time with the baseline approval:
    /// `$2` the cap asked, `$3` the threshold, `$4` who, `$5` now, `$6` why; returns `approved`.
    ask: &'static str,
    /// Why the baseline approval is recorded.
    baseline: &'static str,
    /// The operator's approval (see [`approve_in`]).
    approve: &'static str,
    /// The row as the journal keeps it (see [`Campaigns::approval_in`]).
    read: &'static str,
}

/// The [`ApprovalTable`] of `table`, whose rows are keyed by `key` and whose first approval
/// is the `baseline` subquery's cap (on `$1`) or else the cap asked: the statements are
/// written once for both tables.
macro_rules! approval_table {
    ($op:literal, $table:literal, $key:literal, $baseline:literal, $why:literal) => {
        ApprovalTable {
            ask_op: $op,
            forget: concat!(
                "UPDATE ",
                $table,
                " SET above = NULL, wanted = $2, updated_at = $3 \
                 WHERE ",
                $key,
                " = $1 AND above IS NOT NULL"
            ),
            ask: concat!(
                "INSERT INTO ",
                $table,
                " (",
                $key,
                ", approved, above, wanted, approved_by, \
                 approved_at, reason, updated_at) \
                 VALUES ($1, COALESCE((",
                $baseline,
                "), $2), $3, $2, $4, $5, $6, $5) \
                 ON CONFLICT (",
                $key,
                ") DO UPDATE SET above = excluded.above, \
                 wanted = excluded.wanted, updated_at = excluded.updated_at \
                 RETURNING approved"
            ),
            baseline: $why,
            approve: concat!(
                "UPDATE ",
                $table,
                " SET approved = wanted, approved_by = $2, approved_at = $3, \
                 reason = $4 WHERE ",
                $key,
                " = $1 AND above IS NOT NULL \
                 RETURNING approved, above, wanted, approved_by, approved_at, reason"
            ),
            read: concat!(
                "SELECT approved, above, wanted, approved_by, approved_at, reason FROM ",
                $table,
                " WHERE ",
                $key,
                " = $1"
            ),
        }
    };
}

/// A campaign's approval: the baseline is the cap its budget row held.
pub(in crate::store) const CAMPAIGN: ApprovalTable = approval_table!(
    "record_approval_ask",
    "approvals",
    "campaign",
    "SELECT cap FROM budgets WHERE campaign = $1",
    "baseline: the monthly cap when the threshold was first seen"
);

/// An account's approval: the baseline is the account cap recorded before.
pub(in crate::store) const ACCOUNT: ApprovalTable = approval_table!(
    "record_account_approval",
    "account_approval",
    "account",
    "SELECT monthly_cap FROM account_cap WHERE account = $1",
    "baseline: the account cap when the threshold was first seen"
);

/// Records the threshold (`above`) and the cap asked (`cap`: a campaign file's, or the
/// accounts file's for an account) for `key` in `table`, the first time with its baseline
/// (the cap the journal recorded before, else the one asked), and returns the cap to record:
/// the one asked, never above the approved amount plus the threshold. Without a threshold the
/// cap asked, and a threshold recorded earlier no longer applies. Runs inside the caller's
/// transaction, before the cap is written.
pub(in crate::store) async fn record_ask(
    conn: &mut AnyConnection,
    table: &ApprovalTable,
    key: &str,
    cap: Money,
    above: Option<Money>,
    now: DateTime<Utc>,
) -> Result<Money, StoreError> {
    let Some(above) = above else {
        run!(
            execute, &mut *conn, table.ask_op, table.forget;
            key, cap.kopecks(), to_millis(now)
        )?;
        return Ok(cap);
    };
    let row = run!(
        fetch_one, &mut *conn, table.ask_op, table.ask;
        key, cap.kopecks(), above.kopecks(),
        linkrunner_domain::records::APPROVAL_BASELINE_BY, to_millis(now), table.baseline
    )?;
    let approved = stored(&row, "approved")?;
    Ok(linkrunner_domain::records::approval_cap(
        cap,
        approved,
        Some(above),
    ))
}

impl Campaigns<'_> {
    /// The operator's `linkrunner resolve approve`: the cap the file asks (as the last pass
    /// recorded it) becomes the approved amount, recorded with who, when and why. `None`: the
    /// journal has no threshold for the campaign (its file never set one, or no pass ran).
    pub async fn approve(
        self,
        campaign: &str,
        by: &str,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<Approval>, StoreError> {
        transaction!(self, "approve", |tx| {
            let word = ApprovalWord { by, reason, now };
            approve_in(&mut tx, "approve", &CAMPAIGN, campaign, &word).await
        })
    }

    /// The campaign's approval as the journal keeps it, if its file ever set a threshold.
    pub(crate) async fn approval(self, campaign: &str) -> Result<Option<Approval>, StoreError> {
        self.approval_in("approval", &CAMPAIGN, campaign).await
    }

    /// `key`'s row of `table` as the journal keeps it, if a threshold was ever set for it.
    pub(in crate::store) async fn approval_in(
        self,
        op: &'static str,
        table: &ApprovalTable,
        key: &str,
    ) -> Result<Option<Approval>, StoreError> {
        let row = run!(fetch_optional, &self.pool, op, table.read; key);
        self.done(row)?.as_ref().map(approval_from_row).transpose()
    }
}

/// Who approves, why and when.
pub(in crate::store) struct ApprovalWord<'a> {
    pub(in crate::store) by: &'a str,
    pub(in crate::store) reason: &'a str,
    pub(in crate::store) now: DateTime<Utc>,
}

/// The cap `key`'s row of `table` asks (`wanted`) becomes its approved amount, recorded with
/// `word`, where a threshold is in force; the row as it then is.
pub(in crate::store) async fn approve_in(
    conn: &mut AnyConnection,
    op: &'static str,
    table: &ApprovalTable,
    key: &str,
    word: &ApprovalWord<'_>,
) -> Result<Option<Approval>, StoreError> {
    let row = run!(
        fetch_optional, &mut *conn, op, table.approve;
        key, word.by, to_millis(word.now), word.reason
    )?;
    row.as_ref().map(approval_from_row).transpose()
}

pub(in crate::store) fn approval_from_row(row: &AnyRow) -> Result<Approval, StoreError> {
    Ok(read_row!(
        row,
        Approval {
            approved,
            above,
            wanted,
            by: stored(row, "approved_by")?,
            at: stored(row, "approved_at")?,
            reason,
        }
    ))
}

/// The approval columns of the budget read ([`super::budget::BUDGET_SELECT`]), `ap_*`: one
/// primary-key lookup each, so the read keeps its shape for one campaign and for many.
macro_rules! approval_columns {
    () => {
        "(SELECT approved FROM approvals WHERE campaign = b.campaign) AS ap_approved, \
    (SELECT above FROM approvals WHERE campaign = b.campaign) AS ap_above, \
    (SELECT wanted FROM approvals WHERE campaign = b.campaign) AS ap_wanted, \
    (SELECT approved_by FROM approvals WHERE campaign = b.campaign) AS ap_by, \
    (SELECT approved_at FROM approvals WHERE campaign = b.campaign) AS ap_at, \
    (SELECT reason FROM approvals WHERE campaign = b.campaign) AS ap_reason"
    };
}
pub(in crate::store) use approval_columns;

/// The approval of a budget row read with [`approval_columns`].
pub(in crate::store) fn approval_of_budget_row(
    row: &AnyRow,
) -> Result<Option<Approval>, StoreError> {
    let Some(approved) = col::<Option<i64>>(row, "ap_approved")? else {
        return Ok(None);
    };
    Ok(Some(Approval {
        approved: Money::from_kopecks(approved),
        above: stored(row, "ap_above")?,
        wanted: Money::from_kopecks(col::<Option<i64>>(row, "ap_wanted")?.unwrap_or_default()),
        by: col::<Option<String>>(row, "ap_by")?.unwrap_or_default(),
        at: linkrunner_domain::clock::from_millis(
            col::<Option<i64>>(row, "ap_at")?.unwrap_or_default(),
        ),
        reason: col::<Option<String>>(row, "ap_reason")?.unwrap_or_default(),
    }))
}

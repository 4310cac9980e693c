//! The account-wide cap (issue 24): one optional row bounding the sum of every campaign's
//! commitment. [`reserve_account`] runs inside a reservation's transaction, after its
//! campaign's own caps moved: it takes the account row's lock first (an `UPDATE` of it;
//! SQLite's `BEGIN IMMEDIATE` already serializes writers), then sums `budgets.committed`, so
//! on PostgreSQL the sum is read after any racing reservation committed and two daemons
//! cannot together pass the cap (`account_cap_holds_with_two_stores_racing`).

use chrono::{DateTime, Utc};
use sqlx::AnyConnection;

use super::approvals::approval_from_row;
use crate::store::StoreError;
use crate::store::handles::Campaigns;
use crate::store::rows::{col, db};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::money::Money;
use linkrunner_domain::records::{APPROVAL_BASELINE_BY, Approval, approval_cap};

/// The account cap and the commitment it bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccountBudget {
    /// `None`: no account cap is set.
    pub cap: Option<Money>,
    /// The sum of every campaign's commitment (removed campaigns whose links are still held
    /// included: their rent is still paid).
    pub committed: Money,
}

/// What [`Campaigns::set_account_cap_approving`] recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccountCapSet {
    /// The account cap the reservations now check (`None`: removed): the asked cap, or less
    /// while part of it waits for approval.
    pub recorded: Option<Money>,
    /// The asked cap when it is more than the approved amount plus the threshold allows:
    /// `linkrunner resolve approve --account` approves it.
    pub waiting: Option<Money>,
}

impl Campaigns<'_> {
    /// Sets the account cap (`Some`) or removes it (`None`) with no approval threshold; see
    /// [`Campaigns::set_account_cap_approving`].
    pub async fn set_account_cap(
        self,
        cap: Option<Money>,
        source: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        self.set_account_cap_approving(cap, None, source, now)
            .await
            .map(|_| ())
    }

    /// Sets the account cap (`Some`) or removes it (`None`); `source` says which setting did.
    /// The commitment is never touched: a cap below it refuses new reservations, nothing more.
    /// With a threshold (`approve_above`), the cap recorded is at most the approved amount
    /// plus the threshold (the first time, the cap the journal already held is the approved
    /// baseline), in the same transaction, so a raised account cap is never spent past it
    /// until an operator approves (`approve_account`). Tested by `tests/it`
    /// `store::account::*approval*` on PostgreSQL and SQLite.
    pub async fn set_account_cap_approving(
        self,
        cap: Option<Money>,
        approve_above: Option<Money>,
        source: &str,
        now: DateTime<Utc>,
    ) -> Result<AccountCapSet, StoreError> {
        transaction!(self, "set_account_cap", |tx| {
            let asked = cap;
            let cap = match cap {
                Some(cap) => Some(record_account_ask(&mut tx, cap, approve_above, now).await?),
                None => None,
            };
            match cap {
                Some(cap) => sqlx::query(
                    "INSERT INTO account_cap (id, monthly_cap, source, updated_at) VALUES (1, $1, $2, $3) \
                     ON CONFLICT (id) DO UPDATE SET monthly_cap = excluded.monthly_cap, \
                     source = excluded.source, updated_at = excluded.updated_at",
                )
                .bind(cap.kopecks())
                .bind(source)
                .bind(to_millis(now)),
                None => sqlx::query("DELETE FROM account_cap WHERE id = 1"),
            }
            .execute(&mut *tx)
            .await
            .map_err(db("set_account_cap"))?;
            Ok(AccountCapSet {
                recorded: cap,
                waiting: asked.filter(|a| Some(*a) != cap),
            })
        })
    }

    /// The operator's `linkrunner resolve approve --account`: the account cap the file asks
    /// (as last applied) becomes the approved amount and the recorded account cap, with who,
    /// when and why. `None`: no account threshold is in force.
    pub async fn approve_account(
        self,
        by: &str,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<Approval>, StoreError> {
        transaction!(self, "approve_account", |tx| {
            let row = run!(
                fetch_optional, &mut *tx, "approve_account",
                "UPDATE account_approval SET approved = wanted, approved_by = $1, approved_at = $2, reason = $3 \
                 WHERE id = 1 AND above IS NOT NULL \
                 RETURNING approved, above, wanted, approved_by, approved_at, reason";
                by, to_millis(now), reason
            )?;
            let approval = row.as_ref().map(approval_from_row).transpose()?;
            if let Some(a) = &approval {
                run!(
                    execute, &mut *tx, "approve_account",
                    "UPDATE account_cap SET monthly_cap = $1, updated_at = $2 WHERE id = 1";
                    a.wanted.kopecks(), to_millis(now)
                )?;
            }
            Ok(approval)
        })
    }

    /// The account cap's approval as the journal keeps it, if the account file ever set a
    /// threshold.
    pub(crate) async fn account_approval(self) -> Result<Option<Approval>, StoreError> {
        let row = run!(
            fetch_optional,
            &self.pool,
            "account_approval",
            "SELECT approved, above, wanted, approved_by, approved_at, reason FROM account_approval WHERE id = 1"
        );
        self.done(row)?.as_ref().map(approval_from_row).transpose()
    }

    /// The account cap, if any, and the sum of every campaign's commitment.
    pub async fn account_budget(self) -> Result<AccountBudget, StoreError> {
        let result = async {
            let mut conn = self.pool.acquire().await.map_err(db("account_budget"))?;
            let cap = run!(
                fetch_optional,
                &mut *conn,
                "account_budget",
                "SELECT monthly_cap FROM account_cap WHERE id = 1"
            )?
            .map(|r| col::<i64>(&r, "monthly_cap").map(Money::from_kopecks))
            .transpose()?;
            let committed = account_committed(&mut conn).await?;
            Ok(AccountBudget { cap, committed })
        }
        .await;
        self.done(result)
    }
}

/// Checks `amount`, already added to its campaign's commitment in this transaction, against
/// the account cap. `Some((amount, headroom))` in kopecks when it does not fit: the caller
/// rolls the transaction back.
pub(crate) async fn reserve_account(
    conn: &mut AnyConnection,
    amount: i64,
) -> Result<Option<(i64, i64)>, StoreError> {
    if amount <= 0 {
        return Ok(None);
    }
    // The lock: every reservation under an account cap passes through this row in turn.
    let cap = run!(
        fetch_optional,
        &mut *conn,
        "reserve_account",
        "UPDATE account_cap SET monthly_cap = monthly_cap WHERE id = 1 RETURNING monthly_cap"
    )?;
    let Some(cap) = cap else {
        return Ok(None);
    };
    let cap: i64 = col(&cap, "monthly_cap")?;
    let total = account_committed(conn).await?.kopecks();
    if total > cap {
        let before = total - amount;
        return Ok(Some((amount, (cap - before).max(0))));
    }
    Ok(None)
}

async fn account_committed(conn: &mut AnyConnection) -> Result<Money, StoreError> {
    let row = run!(
        fetch_one,
        &mut *conn,
        "account_committed",
        "SELECT CAST(COALESCE(SUM(committed), 0) AS BIGINT) AS total FROM budgets"
    )?;
    col::<i64>(&row, "total").map(Money::from_kopecks)
}

/// Records the account file's threshold and cap (the first time with the baseline: the
/// account cap the journal held, else the asked one) and returns the cap to record: the asked
/// one, never above the approved amount plus the threshold. Without a threshold the asked cap,
/// and a threshold recorded earlier no longer applies. Inside the caller's transaction.
async fn record_account_ask(
    conn: &mut AnyConnection,
    cap: Money,
    above: Option<Money>,
    now: DateTime<Utc>,
) -> Result<Money, StoreError> {
    let Some(above) = above else {
        run!(
            execute, &mut *conn, "record_account_approval",
            "UPDATE account_approval SET above = NULL, wanted = $1, updated_at = $2 \
             WHERE id = 1 AND above IS NOT NULL";
            cap.kopecks(), to_millis(now)
        )?;
        return Ok(cap);
    };
    let row = run!(
        fetch_one, &mut *conn, "record_account_approval",
        "INSERT INTO account_approval (id, approved, above, wanted, approved_by, approved_at, reason, updated_at) \
         VALUES (1, COALESCE((SELECT monthly_cap FROM account_cap WHERE id = 1), $1), $2, $1, $3, $4, $5, $4) \
         ON CONFLICT (id) DO UPDATE SET above = excluded.above, wanted = excluded.wanted, \
         updated_at = excluded.updated_at \
         RETURNING approved";
        cap.kopecks(), above.kopecks(), APPROVAL_BASELINE_BY, to_millis(now),
        "baseline: the account cap when the threshold was first seen"
    )?;
    let approved = Money::from_kopecks(col(&row, "approved")?);
    Ok(approval_cap(cap, approved, Some(above)))
}

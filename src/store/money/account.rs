//! The account caps (issues 24, 34): per marketplace account one optional row bounding the sum
//! of the commitment of that account's campaigns (`campaigns.account`). [`reserve_account`]
//! runs inside a reservation's transaction, after its campaign's own caps moved: it takes the
//! lock of the row of the campaign's account first (an `UPDATE` of it; SQLite's
//! `BEGIN IMMEDIATE` already serializes writers), then sums that account's
//! `budgets.committed`, so on PostgreSQL the sum is read after any racing reservation of the
//! account committed and two daemons cannot together pass its cap
//! (`account_cap_holds_with_two_stores_racing`). Another account's campaigns neither count
//! against the cap nor wait for its lock.

use chrono::{DateTime, Utc};
use sqlx::AnyConnection;

use super::approvals::{ACCOUNT, ApprovalWord, approve_in, record_ask};
use crate::store::StoreError;
use crate::store::handles::Campaigns;
use crate::store::rows::{col, db, stored};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::money::Money;
use linkrunner_domain::records::Approval;

/// One account's cap and the commitment it bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccountBudget {
    /// `None`: no account cap is set.
    pub cap: Option<Money>,
    /// The sum of the commitment of the account's campaigns (removed campaigns whose links
    /// are still held included: their rent is still paid).
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
    /// Sets the cap of `account` (`Some`) or removes it (`None`) with no approval threshold;
    /// see [`Campaigns::set_account_cap_approving`].
    pub async fn set_account_cap(
        self,
        account: &str,
        cap: Option<Money>,
        source: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        self.set_account_cap_approving(account, cap, None, source, now)
            .await
            .map(|_| ())
    }

    /// Sets the cap of `account` (`Some`) or removes it (`None`); `source` says which setting
    /// did.
    /// The commitment is never touched: a cap below it refuses new reservations, nothing more.
    /// With a threshold (`approve_above`), the cap recorded is at most the approved amount
    /// plus the threshold (the first time, the cap the journal already held is the approved
    /// baseline), in the same transaction, so a raised account cap is never spent past it
    /// until an operator approves (`approve_account`). Tested by `tests/it`
    /// `store::account::*approval*` on PostgreSQL and SQLite.
    pub async fn set_account_cap_approving(
        self,
        account: &str,
        cap: Option<Money>,
        approve_above: Option<Money>,
        source: &str,
        now: DateTime<Utc>,
    ) -> Result<AccountCapSet, StoreError> {
        transaction!(self, "set_account_cap", |tx| {
            let asked = cap;
            let cap = match cap {
                Some(cap) => {
                    Some(record_ask(&mut tx, &ACCOUNT, account, cap, approve_above, now).await?)
                }
                None => None,
            };
            match cap {
                Some(cap) => sqlx::query(
                    "INSERT INTO account_cap (account, monthly_cap, source, updated_at) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (account) DO UPDATE SET monthly_cap = excluded.monthly_cap, \
                     source = excluded.source, updated_at = excluded.updated_at",
                )
                .bind(account)
                .bind(cap.kopecks())
                .bind(source)
                .bind(to_millis(now)),
                None => sqlx::query("DELETE FROM account_cap WHERE account = $1").bind(account),
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

    /// The operator's `linkrunner resolve approve --account [ID]`: the cap of `account` the
    /// accounts file asks (as last applied) becomes the approved amount and the recorded cap,
    /// with who, when and why. `None`: no threshold is in force for that account.
    pub async fn approve_account(
        self,
        account: &str,
        by: &str,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<Approval>, StoreError> {
        transaction!(self, "approve_account", |tx| {
            let word = ApprovalWord { by, reason, now };
            let approval = approve_in(&mut tx, "approve_account", &ACCOUNT, account, &word).await?;
            if let Some(a) = &approval {
                run!(
                    execute, &mut *tx, "approve_account",
                    "UPDATE account_cap SET monthly_cap = $1, updated_at = $2 WHERE account = $3";
                    a.wanted.kopecks(), to_millis(now), account
                )?;
            }
            Ok(approval)
        })
    }

    /// The approval of the cap of `account` as the journal keeps it, if the accounts file
    /// ever set a threshold for it.
    pub(crate) async fn account_approval(
        self,
        account: &str,
    ) -> Result<Option<Approval>, StoreError> {
        self.approval_in("account_approval", &ACCOUNT, account)
            .await
    }

    /// The cap of `account`, if any, and the sum of its campaigns' commitment.
    pub async fn account_budget(self, account: &str) -> Result<AccountBudget, StoreError> {
        let result = async {
            let mut conn = self.pool.acquire().await.map_err(db("account_budget"))?;
            let cap = run!(
                fetch_optional,
                &mut *conn,
                "account_budget",
                "SELECT monthly_cap FROM account_cap WHERE account = $1";
                account
            )?
            .map(|r| stored::<Money>(&r, "monthly_cap"))
            .transpose()?;
            let committed = account_committed(&mut conn, account).await?;
            Ok(AccountBudget { cap, committed })
        }
        .await;
        self.done(result)
    }
}

/// Checks `amount`, already added to the commitment of `campaign` in this transaction, against
/// the cap of the campaign's account. `Some((amount, headroom))` in kopecks when it does not
/// fit: the caller rolls the transaction back.
pub(crate) async fn reserve_account(
    conn: &mut AnyConnection,
    campaign: &str,
    amount: i64,
) -> Result<Option<(i64, i64)>, StoreError> {
    if amount <= 0 {
        return Ok(None);
    }
    // The lock: every reservation under this account's cap passes through its row in turn.
    let cap = run!(
        fetch_optional, &mut *conn, "reserve_account",
        "UPDATE account_cap SET monthly_cap = monthly_cap \
         WHERE account = (SELECT account FROM campaigns WHERE name = $1) \
         RETURNING account, monthly_cap";
        campaign
    )?;
    let Some(cap) = cap else {
        return Ok(None);
    };
    let account: String = col(&cap, "account")?;
    let cap: i64 = col(&cap, "monthly_cap")?;
    let total = account_committed(conn, &account).await?.kopecks();
    if total > cap {
        let before = total - amount;
        return Ok(Some((amount, (cap - before).max(0))));
    }
    Ok(None)
}

/// The commitment of the campaigns of `account` together.
async fn account_committed(conn: &mut AnyConnection, account: &str) -> Result<Money, StoreError> {
    let row = run!(
        fetch_one, &mut *conn, "account_committed",
        "SELECT CAST(COALESCE(SUM(b.committed), 0) AS BIGINT) AS total \
         FROM budgets b JOIN campaigns c ON c.name = b.campaign WHERE c.account = $1";
        account
    )?;
    stored(&row, "total")
}

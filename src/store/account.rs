//! The account-wide cap (issue 24): one optional row bounding the sum of every campaign's
//! commitment. [`reserve_account`] runs inside a reservation's transaction, after its
//! campaign's own caps moved: it takes the account row's lock first (an `UPDATE` of it;
//! SQLite's `BEGIN IMMEDIATE` already serializes writers), then sums `budgets.committed`, so
//! on PostgreSQL the sum is read after any racing reservation committed and two daemons
//! cannot together pass the cap (`account_cap_holds_with_two_stores_racing`).

use chrono::{DateTime, Utc};
use sqlx::AnyConnection;

use super::StoreError;
use super::handles::Campaigns;
use super::rows::{col, db};
use crate::clock::to_millis;
use crate::money::Money;

/// The account cap and the commitment it bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccountBudget {
    /// `None`: no account cap is set.
    pub cap: Option<Money>,
    /// The sum of every campaign's commitment (removed campaigns whose links are still held
    /// included: their rent is still paid).
    pub committed: Money,
}

impl Campaigns<'_> {
    /// Sets the account cap (`Some`) or removes it (`None`); `source` says which setting did.
    /// The commitment is never touched: a cap below it refuses new reservations, nothing more.
    pub async fn set_account_cap(
        self,
        cap: Option<Money>,
        source: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let result = async {
            let mut tx = self.write_tx("set_account_cap").await?;
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
            tx.commit().await.map_err(db("set_account_cap"))
        }
        .await;
        self.write_done(result).await
    }

    /// The account cap, if any, and the sum of every campaign's commitment.
    pub async fn account_budget(self) -> Result<AccountBudget, StoreError> {
        let result = async {
            let mut conn = self.pool.acquire().await.map_err(db("account_budget"))?;
            let cap = sqlx::query("SELECT monthly_cap FROM account_cap WHERE id = 1")
                .fetch_optional(&mut *conn)
                .await
                .map_err(db("account_budget"))?
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
    let cap = sqlx::query(
        "UPDATE account_cap SET monthly_cap = monthly_cap WHERE id = 1 RETURNING monthly_cap",
    )
    .fetch_optional(&mut *conn)
    .await
    .map_err(db("reserve_account"))?;
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
    let row =
        sqlx::query("SELECT CAST(COALESCE(SUM(committed), 0) AS BIGINT) AS total FROM budgets")
            .fetch_one(&mut *conn)
            .await
            .map_err(db("account_committed"))?;
    col::<i64>(&row, "total").map(Money::from_kopecks)
}

//! Buy rounds: one row per campaign and schedule slot, so the database, not the timer,
//! decides whether a slot already ran — restarts and replicas neither skip nor double one.
//! A round that could not run for a transient reason is `deferred` and claimed again, by one
//! caller only, while its slot lasts ([`Store::reclaim_round`]).

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;

use crate::store::handles::Rounds;
use crate::store::rows::{col, read_row};
use crate::store::{AnyQuery, StoreError};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::records::{RoundOutcome, RoundRetry, RoundRow};

/// The columns [`round_from_row`] reads, as a literal for `concat!` (queries stay `&'static str`).
macro_rules! round_columns {
    () => {
        "campaign, slot, holder, state, detail, claimed_at, finished_at, attempts, bought"
    };
}
pub(in crate::store) const ROUND_COLUMNS: &str = round_columns!();
const LAST_ROUND: &str = concat!(
    "SELECT ",
    round_columns!(),
    " FROM rounds WHERE campaign = $1 ORDER BY slot DESC LIMIT 1"
);
const LAST_SUCCESS: &str = concat!(
    "SELECT ",
    round_columns!(),
    " FROM rounds WHERE campaign = $1 AND state = 'succeeded' ORDER BY slot DESC LIMIT 1"
);

impl Rounds<'_> {
    /// True for exactly one caller per campaign and slot, ever.
    pub async fn claim_round(
        self,
        campaign: &str,
        slot: DateTime<Utc>,
        holder: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let change = sqlx::query(
            "INSERT INTO rounds (campaign, slot, holder, state, detail, claimed_at) \
             VALUES ($1, $2, $3, 'running', '', $4) ON CONFLICT DO NOTHING",
        )
        .bind(campaign)
        .bind(to_millis(slot))
        .bind(holder)
        .bind(to_millis(now));
        Ok(self.write_one("claim_round", change).await?.rows_affected() == 1)
    }

    pub async fn finish_round(
        self,
        campaign: &str,
        slot: DateTime<Utc>,
        outcome: RoundOutcome,
        detail: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let sql = "UPDATE rounds SET state = $3, detail = $4, finished_at = $5 \
             WHERE campaign = $1 AND slot = $2";
        self.end_try("finish_round", sql, campaign, slot, |q| {
            q.bind(outcome.as_str()).bind(detail).bind(to_millis(now))
        })
        .await
    }

    /// Ends a try that could not run for a transient reason: the slot stays open for another
    /// try, and what this try bought is added to the slot's count.
    pub async fn defer_round(
        self,
        campaign: &str,
        slot: DateTime<Utc>,
        detail: &str,
        bought: u32,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let sql = "UPDATE rounds SET state = 'deferred', detail = $3, finished_at = $4, bought = bought + $5 \
             WHERE campaign = $1 AND slot = $2";
        self.end_try("defer_round", sql, campaign, slot, |q| {
            q.bind(detail).bind(to_millis(now)).bind(i64::from(bought))
        })
        .await
    }

    /// `sql`, which records how a try of the round of `campaign` at `slot` (`$1`, `$2`) ended,
    /// `rest` binding its other values; the round must exist.
    async fn end_try<'q>(
        self,
        op: &'static str,
        sql: &'static str,
        campaign: &'q str,
        slot: DateTime<Utc>,
        rest: impl FnOnce(AnyQuery<'q>) -> AnyQuery<'q>,
    ) -> Result<(), StoreError> {
        let change = rest(sqlx::query(sql).bind(campaign).bind(to_millis(slot)));
        self.write_some(op, change, || StoreError::NotFound {
            what: format!("round of `{campaign}` at {slot}"),
        })
        .await
    }

    /// Claims a deferred slot for another try: `Some` for exactly one caller per deferral
    /// (the conditional UPDATE), `None` when the slot is not deferred (it ran, or another
    /// process took the retry).
    pub async fn reclaim_round(
        self,
        campaign: &str,
        slot: DateTime<Utc>,
        holder: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<RoundRetry>, StoreError> {
        let row = run!(
            fetch_optional, &self.writer, "reclaim_round",
            "UPDATE rounds SET state = 'running', holder = $3, claimed_at = $4, finished_at = NULL, \
             attempts = attempts + 1 WHERE campaign = $1 AND slot = $2 AND state = 'deferred' \
             RETURNING attempts, bought";
            campaign, to_millis(slot), holder, to_millis(now)
        );
        let Some(row) = self.write_done(row).await? else {
            return Ok(None);
        };
        Ok(Some(RoundRetry {
            attempt: clamped_count(&row, "attempts")?,
            bought: clamped_count(&row, "bought")?,
        }))
    }

    /// The latest claimed slot, finished or not.
    pub async fn last_round(self, campaign: &str) -> Result<Option<RoundRow>, StoreError> {
        self.one_round(LAST_ROUND, campaign).await
    }

    pub async fn last_successful_round(
        self,
        campaign: &str,
    ) -> Result<Option<RoundRow>, StoreError> {
        self.one_round(LAST_SUCCESS, campaign).await
    }

    async fn one_round(
        self,
        sql: &'static str,
        campaign: &str,
    ) -> Result<Option<RoundRow>, StoreError> {
        let query = sqlx::query(sql).bind(campaign);
        self.read_optional("rounds", query, round_from_row).await
    }
}

pub(in crate::store) fn round_from_row(r: &AnyRow) -> Result<RoundRow, StoreError> {
    Ok(read_row!(
        r,
        RoundRow {
            campaign,
            slot,
            holder,
            state,
            detail,
            claimed_at,
            finished_at,
            attempts: clamped_count(r, "attempts")?,
            bought: clamped_count(r, "bought")?,
        }
    ))
}

/// A round's count, clamped into `u32` where [`crate::store::rows::count`] would refuse it.
fn clamped_count(r: &AnyRow, name: &'static str) -> Result<u32, StoreError> {
    let v: i64 = col(r, name)?;
    Ok(u32::try_from(v.max(0)).unwrap_or(u32::MAX))
}

//! The judgment of each campaign's last buy pass: converged, or stalled with a closed reason
//! ([`StallReason`]). One row per campaign, replaced by every pass that reaches the buy-round
//! decision; `since` is kept while the reason stays the same, so `status` says how long a
//! campaign has been stuck.

use chrono::{DateTime, Utc};

use crate::store::StoreError;
use crate::store::handles::Campaigns;
use crate::store::rows::read_row;
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::records::{StallReason, StallRow};

/// The columns [`stall_from_row`] reads, as a literal for `concat!` (queries stay `&'static str`).
macro_rules! stall_columns {
    () => {
        "reason, detail, rounds_without_purchase, since, updated_at"
    };
}
pub(in crate::store) const STALL_COLUMNS: &str = stall_columns!();

impl Campaigns<'_> {
    /// Records the judgment of `campaign`'s buy pass.
    pub async fn record_stall(
        self,
        campaign: &str,
        reason: Option<StallReason>,
        detail: &str,
        rounds_without_purchase: u32,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let change = sqlx::query(
            "INSERT INTO campaign_stalls (campaign, reason, detail, rounds_without_purchase, since, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (campaign) DO UPDATE SET \
             since = CASE WHEN COALESCE(campaign_stalls.reason, '') = COALESCE(excluded.reason, '') \
                          THEN campaign_stalls.since ELSE excluded.since END, \
             reason = excluded.reason, detail = excluded.detail, \
             rounds_without_purchase = excluded.rounds_without_purchase, updated_at = excluded.updated_at",
        )
        .bind(campaign)
        .bind(reason.map(|r| r.as_str().to_string()))
        .bind(detail)
        .bind(i64::from(rounds_without_purchase))
        .bind(to_millis(now));
        self.write_one("record_stall", change).await.map(|_| ())
    }

    /// The judgment of `campaign`'s last buy pass, if one was recorded.
    pub(crate) async fn stall(self, campaign: &str) -> Result<Option<StallRow>, StoreError> {
        let query = sqlx::query(concat!(
            "SELECT ",
            stall_columns!(),
            " FROM campaign_stalls WHERE campaign = $1"
        ))
        .bind(campaign);
        self.read_optional("stall", query, stall_from_row).await
    }
}

pub(in crate::store) fn stall_from_row(r: &sqlx::any::AnyRow) -> Result<StallRow, StoreError> {
    Ok(read_row!(
        r,
        StallRow {
            reason,
            detail,
            rounds_without_purchase,
            since,
            updated_at,
        }
    ))
}

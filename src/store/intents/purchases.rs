//! Purchases the list settles after the fact: a page whose purchase was settled as "not
//! bought" (absent from a complete list) and then shows up after all is adopted — the intent
//! succeeds and its rent counts, even past a cap (the truth is recorded); an operator's word
//! lets a page whose purchase was ever uncertain be bought again; a cut link list is noted.

use chrono::{DateTime, Utc};
use sqlx::AnyConnection;

use super::rows::{intent_columns, intent_from_row, reserve_day};
use crate::store::StoreError;
use crate::store::handles::Intents;
use crate::store::money::budget::{self, Movement};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::intents::{AttemptRef, IntentRow};
use linkrunner_domain::market::LinkRecord;
use linkrunner_domain::money::Money;

/// The campaign's blocked purchases (`$1`), served by the index `intents_campaign_kind`.
pub(in crate::store) const BLOCKED_SQL: &str = concat!(
    "SELECT ",
    intent_columns!(),
    " FROM intents WHERE campaign = $1 AND kind = 'purchase' AND state = 'failed' \
     AND rebuy_blocked = 1 ORDER BY id"
);

impl Intents<'_> {
    /// Adopts a listed link as the purchase a failed, rebuy-blocked intent made after all.
    /// Returns false (and changes nothing) when the intent is not such a purchase at `at`.
    pub async fn adopt_purchase(
        self,
        at: AttemptRef,
        link: &LinkRecord,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        transaction!(self, "adopt_purchase", |tx| {
            adopt_in(&mut tx, at, link, now).await
        })
    }

    /// An operator's word that a page whose purchase was once uncertain may be bought again.
    pub async fn allow_rebuy(
        self,
        at: AttemptRef,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<IntentRow, StoreError> {
        let sql = concat!(
            "UPDATE intents SET rebuy_blocked = 0, resolution = $3, resolved_at = $4 WHERE id = $1 \
             AND attempts = $2 AND kind = 'purchase' AND state = 'failed' AND rebuy_blocked = 1 RETURNING ",
            intent_columns!()
        );
        let row = run!(
            fetch_optional, &self.writer, "allow_rebuy",
            sql;
            at.intent.0, i64::from(at.attempt), reason, to_millis(now)
        );
        match self.write_done(row).await? {
            Some(r) => intent_from_row(&r),
            None => Err(StoreError::invalid(format!(
                "intent {} is not a failed purchase whose page is blocked from being bought again",
                at.intent
            ))),
        }
    }

    /// The campaign's failed purchases whose page is blocked from being bought again (they
    /// were uncertain once): few, and every link-list read looks for them.
    pub(crate) async fn blocked_purchases(
        self,
        campaign: &str,
    ) -> Result<Vec<IntentRow>, StoreError> {
        let query = sqlx::query(BLOCKED_SQL).bind(campaign);
        self.read_all("blocked_purchases", query, intent_from_row)
            .await
    }

    /// Says on an uncertain intent why it is still uncertain (what `status` shows).
    pub(crate) async fn note_uncertain(self, at: AttemptRef, why: &str) -> Result<(), StoreError> {
        let change = sqlx::query(
            "UPDATE intents SET error = $3 WHERE id = $1 AND attempts = $2 AND state = 'uncertain'",
        )
        .bind(at.intent.0)
        .bind(i64::from(at.attempt))
        .bind(why);
        self.write_one("note_uncertain", change).await.map(|_| ())
    }

    /// Notes that the project's list was seen cut at `len` links: no read that long or longer
    /// proves an absence from now on.
    pub async fn note_list_cut(self, campaign: &str, len: u32) -> Result<(), StoreError> {
        let change = sqlx::query(
            "UPDATE projects SET list_cut_at = $2 WHERE campaign = $1 \
             AND (list_cut_at IS NULL OR list_cut_at > $2)",
        )
        .bind(campaign)
        .bind(i64::from(len));
        self.write_one("note_list_cut", change).await.map(|_| ())
    }
}

/// What a purchase found in the list after it was settled as not bought counts: the price
/// the list shows, else the one the purchase was sent at, else its reservation.
fn adopted_price(link: &LinkRecord, intent: &IntentRow) -> Money {
    link.price
        .or_else(|| {
            intent
                .request
                .get("price")
                .and_then(|p| serde_json::from_value::<Money>(p.clone()).ok())
        })
        .unwrap_or(intent.reserved)
}

async fn adopt_in(
    conn: &mut AnyConnection,
    at: AttemptRef,
    link: &LinkRecord,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let sql = concat!(
        "UPDATE intents SET state = 'succeeded', updated_at = $3, \
         answer = 'found in the project''s link list after it was settled as not bought' \
         WHERE id = $1 AND attempts = $2 AND kind = 'purchase' AND state = 'failed' \
         AND rebuy_blocked = 1 RETURNING ",
        intent_columns!()
    );
    let row = run!(
        fetch_optional, &mut *conn, "adopt_purchase",
        sql;
        at.intent.0, i64::from(at.attempt), to_millis(now)
    )?;
    let Some(row) = row else {
        return Ok(false);
    };
    let day = reserve_day(&row)?;
    let intent = intent_from_row(&row)?;
    let price = adopted_price(link, &intent);
    let get = |k: &str| intent.request.get(k).and_then(serde_json::Value::as_i64);
    run!(
        execute, &mut *conn, "adopt_purchase",
        "INSERT INTO held_links (campaign, intent_id, link_id, page_id, url_id, text_id, price, bought_at, \
         seen_in_list_at, status) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9)";
        &intent.campaign, intent.id.0, link.link_id, get("page_id").unwrap_or_default(),
        get("url_id").unwrap_or_default(), get("text_id").unwrap_or_default(), price.kopecks(),
        to_millis(now), link.status.clone()
    )?;
    let m = Movement {
        campaign: &intent.campaign,
        intent: Some(intent.id),
        amount: price.kopecks(),
        links: 1,
        day: day.as_deref(),
        reason: "adopted_from_list",
    };
    budget::apply(conn, &m, now).await?;
    Ok(true)
}

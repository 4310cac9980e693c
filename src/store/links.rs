//! Links our purchase intents bought, and syncing them with the project's link list
//! (operation 6). Absence from the list never releases money: a list may be partial or late.

use chrono::{DateTime, Utc};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use super::budget::{self, Movement};
use super::records::{HeldLink, SyncReport};
use super::rows::{col, db, opt_time, time};
use super::types::{IntentId, IntentRow};
use super::{Store, StoreError};
use crate::clock::to_millis;
use crate::market::LinkRecord;
use crate::money::Money;

pub(crate) struct NewHeld {
    pub link: Option<i64>,
    pub page_id: i64,
    pub url_id: i64,
    pub text_id: i64,
    pub price: Money,
}

/// The purchase's reservation becomes a held link. A price that differs from the reservation
/// moves the commitment by the difference: the truth is recorded even past the cap.
pub(crate) async fn hold(
    conn: &mut AnyConnection,
    intent: &IntentRow,
    h: &NewHeld,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO held_links (campaign, intent_id, link_id, page_id, url_id, text_id, price, bought_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&intent.campaign)
    .bind(intent.id.0)
    .bind(h.link)
    .bind(h.page_id)
    .bind(h.url_id)
    .bind(h.text_id)
    .bind(h.price.kopecks())
    .bind(to_millis(now))
    .execute(&mut *conn)
    .await
    .map_err(db("hold_link"))?;
    let m = Movement {
        campaign: &intent.campaign,
        intent: Some(intent.id),
        amount: h.price.kopecks() - intent.reserved.kopecks(),
        links: 0,
        day: None,
        reason: "price_adjust",
    };
    budget::apply(conn, &m, now).await
}

const HELD_SQL: &str = "SELECT intent_id, link_id, page_id, url_id, text_id, price, bought_at, seen_in_list_at \
     FROM held_links WHERE campaign = $1 ORDER BY id";

impl Store {
    pub async fn held_links(&self, campaign: &str) -> Result<Vec<HeldLink>, StoreError> {
        let rows = sqlx::query(HELD_SQL)
            .bind(campaign)
            .fetch_all(&self.pool)
            .await
            .map_err(db("held_links"));
        self.done(rows.and_then(|rows| rows.iter().map(held_from_row).collect()))
    }

    /// Matches the project's listed links to held links (by link id, else page + url, and
    /// text when both sides know it), marks them seen and learns missing link ids. Listed
    /// links no intent of ours bought are kept apart in `foreign_links`.
    pub async fn record_link_list(
        &self,
        campaign: &str,
        listed: &[LinkRecord],
        now: DateTime<Utc>,
    ) -> Result<SyncReport, StoreError> {
        let result = async {
            let mut tx = self.write_tx("record_link_list").await?;
            let rows = sqlx::query(HELD_SQL)
                .bind(campaign)
                .fetch_all(&mut *tx)
                .await
                .map_err(db("record_link_list"))?;
            let mut held: Vec<(HeldLink, bool)> = rows
                .iter()
                .map(held_from_row)
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .map(|h| (h, false))
                .collect();
            let mut report = SyncReport::default();
            for link in listed {
                match find_match(&held, link) {
                    Some(i) => {
                        held[i].1 = true;
                        mark_seen(&mut tx, &held[i].0, link, now).await?;
                        report.matched += 1;
                    }
                    None => {
                        store_foreign(&mut tx, campaign, link, now).await?;
                        report.foreign += 1;
                    }
                }
            }
            report.missing = held.iter().filter(|(_, seen)| !seen).count() as u32;
            tx.commit().await.map_err(db("record_link_list"))?;
            Ok(report)
        }
        .await;
        self.done(result)
    }
}

fn find_match(held: &[(HeldLink, bool)], link: &LinkRecord) -> Option<usize> {
    if let Some(id) = link.link_id
        && let Some(i) = held.iter().position(|(h, _)| h.link_id == Some(id))
    {
        return Some(i);
    }
    let (page, url) = (link.page_id?, link.url_id?);
    held.iter().position(|(h, seen)| {
        !seen
            && h.page_id == page
            && h.url_id == url
            && link.text_id.is_none_or(|t| t == h.text_id)
            && (h.link_id.is_none() || link.link_id.is_none() || h.link_id == link.link_id)
    })
}

async fn mark_seen(
    conn: &mut AnyConnection,
    h: &HeldLink,
    link: &LinkRecord,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE held_links SET seen_in_list_at = $2, link_id = COALESCE(link_id, $3) WHERE intent_id = $1")
        .bind(h.intent_id.0)
        .bind(to_millis(now))
        .bind(link.link_id)
        .execute(&mut *conn)
        .await
        .map_err(db("record_link_list"))?;
    Ok(())
}

async fn store_foreign(
    conn: &mut AnyConnection,
    campaign: &str,
    l: &LinkRecord,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let key = match l.link_id {
        Some(id) => format!("id:{id}"),
        None => format!(
            "page:{:?}:url:{:?}:text:{:?}",
            l.page_id, l.url_id, l.text_id
        ),
    };
    sqlx::query(
        "INSERT INTO foreign_links (campaign, link_key, link_id, page_id, url_id, text_id, price, status, first_seen_at, last_seen_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) ON CONFLICT (campaign, link_key) DO UPDATE SET \
         price = excluded.price, status = excluded.status, last_seen_at = excluded.last_seen_at",
    )
    .bind(campaign)
    .bind(key)
    .bind(l.link_id)
    .bind(l.page_id)
    .bind(l.url_id)
    .bind(l.text_id)
    .bind(l.price.map(Money::kopecks))
    .bind(l.status.clone())
    .bind(to_millis(now))
    .execute(&mut *conn)
    .await
    .map_err(db("record_link_list"))?;
    Ok(())
}

fn held_from_row(r: &AnyRow) -> Result<HeldLink, StoreError> {
    Ok(HeldLink {
        intent_id: IntentId(col(r, "intent_id")?),
        link_id: col(r, "link_id")?,
        page_id: col(r, "page_id")?,
        url_id: col(r, "url_id")?,
        text_id: col(r, "text_id")?,
        price: Money::from_kopecks(col(r, "price")?),
        bought_at: time(r, "bought_at")?,
        seen_in_list_at: opt_time(r, "seen_in_list_at")?,
    })
}

//! Reservations: a batch's money and links are set aside in the transaction that records its
//! intents. Each cap is one conditional `UPDATE ... WHERE committed + amount <= cap RETURNING`,
//! so the database, not a leader, refuses to pass a cap when two daemons race
//! (`monthly_cap_holds_with_two_stores_racing`, `link_caps_hold_with_two_stores_racing`);
//! then the account cap, over every campaign, in the same transaction (`account.rs`).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use sqlx::AnyConnection;

use super::account;
use super::budget::{self, Movement};
use crate::store::StoreError;
use crate::store::rows::col;
use crate::store::rows::day_text;
use linkrunner_domain::intents::{AttemptRef, BeginOutcome, CapKind, NewIntent};

/// Reserves what the batch (one campaign) asks and writes one ledger row per intent; or
/// says which cap refused, and the caller rolls everything back.
pub(crate) async fn reserve_batch(
    conn: &mut AnyConnection,
    batch: &[NewIntent],
    ids: &[AttemptRef],
    now: DateTime<Utc>,
) -> Result<Option<BeginOutcome>, StoreError> {
    let Some(campaign) = batch.first().map(|i| i.campaign.as_str()) else {
        return Ok(None);
    };
    if batch.iter().all(|i| i.reserve.is_none()) {
        return Ok(None);
    }
    let mut demand = Demand::default();
    for r in batch.iter().filter_map(|i| i.reserve.as_ref()) {
        demand.amount += r.amount.kopecks();
        demand.links += i64::from(r.links);
        *demand.days.entry(day_text(r.day)).or_default() += i64::from(r.links);
    }
    if let Some(refused) = reserve(conn, campaign, &demand).await? {
        return Ok(Some(refused));
    }
    for (intent, id) in batch.iter().zip(ids) {
        if let Some(r) = &intent.reserve {
            let day = day_text(r.day);
            let m = Movement {
                campaign,
                intent: Some(id.intent),
                amount: r.amount.kopecks(),
                links: i64::from(r.links),
                day: Some(&day),
                reason: "reserve",
            };
            budget::append_ledger(conn, &m, now).await?;
        }
    }
    Ok(None)
}

/// What a batch asks of one campaign's budget.
#[derive(Debug, Default)]
struct Demand {
    amount: i64,
    links: i64,
    days: BTreeMap<String, i64>,
}

/// Reserves a batch's demand on one campaign, or says which cap refused it.
async fn reserve(
    conn: &mut AnyConnection,
    campaign: &str,
    demand: &Demand,
) -> Result<Option<BeginOutcome>, StoreError> {
    let reserved = run!(
        fetch_optional, &mut *conn, "reserve",
        "UPDATE budgets SET committed = committed + $1, links = links + $2 \
         WHERE campaign = $3 AND committed + $1 <= cap AND links + $2 <= total_links \
         RETURNING committed";
        demand.amount, demand.links, campaign
    )?;
    if reserved.is_none() {
        return refusal(conn, campaign, demand).await.map(Some);
    }
    if let Some((needed, headroom)) =
        account::reserve_account(conn, campaign, demand.amount).await?
    {
        return Ok(Some(BeginOutcome::CapExceeded {
            campaign: campaign.to_string(),
            cap: CapKind::Account,
            needed,
            headroom,
        }));
    }
    for (day, links) in demand.days.iter().filter(|(_, l)| **l > 0) {
        if !reserve_day(conn, campaign, day, *links).await? {
            let (used, cap) = day_usage(conn, campaign, day).await?;
            return Ok(Some(BeginOutcome::CapExceeded {
                campaign: campaign.to_string(),
                cap: CapKind::Daily,
                needed: *links,
                headroom: (cap - used).max(0),
            }));
        }
    }
    Ok(None)
}

async fn reserve_day(
    conn: &mut AnyConnection,
    campaign: &str,
    day: &str,
    links: i64,
) -> Result<bool, StoreError> {
    run!(
        execute, &mut *conn, "reserve",
        "INSERT INTO budget_days (campaign, day, links) VALUES ($1, $2, 0) ON CONFLICT DO NOTHING";
        campaign, day
    )?;
    let row = run!(
        fetch_optional, &mut *conn, "reserve",
        "UPDATE budget_days SET links = links + $1 WHERE campaign = $2 AND day = $3 \
         AND links + $1 <= (SELECT daily_links FROM budgets WHERE campaign = $2) RETURNING links";
        links, campaign, day
    )?;
    Ok(row.is_some())
}

async fn day_usage(
    conn: &mut AnyConnection,
    campaign: &str,
    day: &str,
) -> Result<(i64, i64), StoreError> {
    let row = run!(
        fetch_one, &mut *conn, "reserve",
        "SELECT d.links AS used, b.daily_links AS cap FROM budget_days d \
         JOIN budgets b ON b.campaign = d.campaign WHERE d.campaign = $1 AND d.day = $2";
        campaign, day
    )?;
    Ok((col(&row, "used")?, col(&row, "cap")?))
}

/// Why the budget row refused: the monthly money cap first, else the total link cap.
async fn refusal(
    conn: &mut AnyConnection,
    campaign: &str,
    demand: &Demand,
) -> Result<BeginOutcome, StoreError> {
    let row = run!(
        fetch_optional, &mut *conn, "reserve",
        "SELECT cap, committed, links, total_links FROM budgets WHERE campaign = $1";
        campaign
    )?
    .ok_or_else(|| StoreError::NotFound {
        what: format!("campaign `{campaign}` (upsert_campaign first)"),
    })?;
    let (cap, committed): (i64, i64) = (col(&row, "cap")?, col(&row, "committed")?);
    let (total, links): (i64, i64) = (col(&row, "total_links")?, col(&row, "links")?);
    let (kind, needed, headroom) = if committed + demand.amount > cap {
        (CapKind::Monthly, demand.amount, cap - committed)
    } else {
        (CapKind::Total, demand.links, total - links)
    };
    Ok(BeginOutcome::CapExceeded {
        campaign: campaign.to_string(),
        cap: kind,
        needed,
        headroom: headroom.max(0),
    })
}

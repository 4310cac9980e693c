//! Links our purchase intents bought, and syncing them with the project's link list
//! (operation 6). Absence from a list never releases money by itself: only a link leaving
//! (a leaving status, or absent from reads proven complete) for longer than the settle grace,
//! or an operator's `resolve`, releases its rent.

use chrono::{DateTime, Utc};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use super::foreign;
use crate::store::StoreError;
use crate::store::handles::Links;
use crate::store::money::budget::{self, Movement};
use crate::store::rows::{col, opt_time, read_row};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::intents::{IntentId, IntentRow};
use linkrunner_domain::market::LinkRecord;
use linkrunner_domain::market::is_leaving;
use linkrunner_domain::money::Money;
use linkrunner_domain::records::{HeldLink, ListRead, ListedLink, SyncReport};

pub(crate) struct NewHeld {
    pub(crate) link: Option<i64>,
    pub(crate) page_id: i64,
    pub(crate) url_id: i64,
    pub(crate) text_id: i64,
    pub(crate) price: Money,
}

/// The purchase's reservation becomes a held link. A price that differs from the reservation
/// moves the commitment by the difference: the truth is recorded even past the cap.
pub(crate) async fn hold(
    conn: &mut AnyConnection,
    intent: &IntentRow,
    h: &NewHeld,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    run!(
        execute, &mut *conn, "hold_link",
        "INSERT INTO held_links (campaign, intent_id, link_id, page_id, url_id, text_id, price, bought_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
        &intent.campaign, intent.id.0, h.link, h.page_id, h.url_id, h.text_id, h.price.kopecks(),
        to_millis(now)
    )?;
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

/// The columns [`held_from_row`] reads, as a literal for `concat!` (queries stay `&'static str`).
macro_rules! held_columns {
    () => {
        "intent_id, link_id, page_id, url_id, text_id, price, bought_at, \
         seen_in_list_at, listed_after_ms, status, leaving_since, released_at, released_why"
    };
}
pub(in crate::store) const HELD_COLUMNS: &str = held_columns!();

const HELD_SQL: &str = concat!(
    "SELECT ",
    held_columns!(),
    " FROM held_links WHERE campaign = $1 ORDER BY id"
);

impl Links<'_> {
    /// Every link our purchase intents bought, released ones included.
    pub async fn held_links(self, campaign: &str) -> Result<Vec<HeldLink>, StoreError> {
        let query = sqlx::query(HELD_SQL).bind(campaign);
        self.read_all("held_links", query, held_from_row).await
    }

    /// Records one read of the project's link list, in one transaction: listed links are
    /// matched to held links (by link id, else page + URL, and text when both sides know it),
    /// which are marked seen, learn missing link ids and whether they are leaving; the others
    /// are foreign links, counted once (`foreign.rs`). With a read proven complete, counted
    /// links it does not show start leaving. Nothing is released here: see `release_left_links`.
    pub async fn record_link_list(
        self,
        campaign: &str,
        read: ListRead<'_>,
        now: DateTime<Utc>,
    ) -> Result<SyncReport, StoreError> {
        transaction!(self, "record_link_list", |tx| {
            record_in(&mut tx, campaign, read, now).await
        })
    }

    /// Releases the rent of every held or foreign link that has been leaving for at least
    /// `grace`, with the evidence on its row and in the ledger. Returns how many. A link
    /// leaving because a complete read did not show it is released only on a read that is
    /// itself `proven_complete`: a list may show a purchase late, and a later read that may be
    /// cut neither shows nor refutes it (released on such a read, a link the project still
    /// holds would stop counting). A link listed with a leaving status is released on any read.
    pub async fn release_left_links(
        self,
        campaign: &str,
        grace: chrono::Duration,
        now: DateTime<Utc>,
        proven_complete: bool,
    ) -> Result<u32, StoreError> {
        transaction!(self, "release_left_links", |tx| {
            let before = now - grace;
            let n = release_left_in(&mut tx, campaign, (before, proven_complete), now).await?;
            Ok(n)
        })
    }

    /// An operator releases a held link (by its intent) or a foreign link (by its key, e.g.
    /// `id:123`): it no longer counts against the cap. False when there was nothing to release.
    pub async fn release_link(
        self,
        campaign: &str,
        link: &LinkRef,
        why: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        transaction!(self, "release_link", |tx| {
            let done = match link {
                LinkRef::Held(intent) => release_held(&mut tx, campaign, *intent, why, now).await?,
                LinkRef::Foreign(key) => foreign::release(&mut tx, campaign, key, why, now).await?,
            };
            Ok(done)
        })
    }
}

/// A link an operator names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkRef {
    /// A link bought by one of our purchase intents.
    Held(IntentId),
    /// A link no intent of ours bought, by its key (`id:LINK_ID`, or page, URL and text).
    Foreign(String),
}

async fn record_in(
    conn: &mut AnyConnection,
    campaign: &str,
    read: ListRead<'_>,
    now: DateTime<Utc>,
) -> Result<SyncReport, StoreError> {
    let rows = run!(fetch_all, &mut *conn, "record_link_list", HELD_SQL; campaign)?;
    let mut held: Vec<(HeldLink, bool)> = rows
        .iter()
        .map(|r| held_from_row(r).map(|h| (h, false)))
        .collect::<Result<_, _>>()?;
    let mut report = SyncReport::default();
    let mut foreign_seen = Vec::new();
    for l in read.links {
        if let Some(i) = find_match(&held, &l.record) {
            held[i].1 = true;
            mark_seen(conn, &held[i].0, l, now).await?;
            report.matched += 1;
            continue;
        }
        let u = foreign::Unmatched {
            record: &l.record,
            autobuyer: l.autobuyer.as_deref(),
            leaving: l.leaving,
            fallback_price: read.fallback_price,
        };
        report.adopted += u32::from(foreign::upsert(conn, campaign, &u, now).await?);
        foreign_seen.push(foreign::key_of(&l.record));
        report.foreign += 1;
    }
    let absent: Vec<&HeldLink> = held
        .iter()
        .filter(|(h, seen)| !seen && h.released.is_none())
        .map(|(h, _)| h)
        .collect();
    report.missing = absent.len() as u32;
    if read.proven_complete {
        for h in absent.iter().filter(|h| h.leaving_since.is_none()) {
            set_leaving(conn, h.intent_id, Some(now)).await?;
        }
        report.missing += foreign::mark_absent(conn, campaign, &foreign_seen, now).await?;
    }
    Ok(report)
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

/// A held link the list shows: seen now, its link id learned, leaving or not. One that was
/// released and is listed again (not leaving) counts again: the truth is recorded.
async fn mark_seen(
    conn: &mut AnyConnection,
    h: &HeldLink,
    l: &ListedLink,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let leaving_since = foreign::leaving_since(l.leaving, h.leaving_since, now);
    // The first read that shows a link bought by a purchase of ours measures the list's lag
    // (a link adopted from the list was inserted as seen, so it measures nothing).
    run!(
        execute, &mut *conn, "record_link_list",
        "UPDATE held_links SET seen_in_list_at = $2, link_id = COALESCE(link_id, $3), status = $4, \
         leaving_since = $5, listed_after_ms = CASE WHEN seen_in_list_at IS NULL \
         THEN $2 - bought_at ELSE listed_after_ms END WHERE intent_id = $1";
        h.intent_id.0, to_millis(now), l.record.link_id, l.record.status.clone(),
        leaving_since.map(to_millis)
    )?;
    if h.released.is_some() && !l.leaving {
        recount_held(conn, h, now).await?;
    }
    Ok(())
}

async fn set_leaving(
    conn: &mut AnyConnection,
    intent: IntentId,
    since: Option<DateTime<Utc>>,
) -> Result<(), StoreError> {
    run!(
        execute, &mut *conn, "record_link_list",
        "UPDATE held_links SET leaving_since = $2 WHERE intent_id = $1";
        intent.0, since.map(to_millis)
    )?;
    Ok(())
}

async fn recount_held(
    conn: &mut AnyConnection,
    h: &HeldLink,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    run!(
        execute, &mut *conn, "record_link_list",
        "UPDATE held_links SET released_at = NULL, released_why = NULL WHERE intent_id = $1";
        h.intent_id.0
    )?;
    let campaign = campaign_of(conn, h.intent_id).await?;
    let m = Movement {
        campaign: &campaign,
        intent: Some(h.intent_id),
        amount: h.price.kopecks(),
        links: 0,
        day: None,
        reason: "link_back_in_list",
    };
    budget::apply(conn, &m, now).await
}

async fn release_left_in(
    conn: &mut AnyConnection,
    campaign: &str,
    (before, complete): (DateTime<Utc>, bool),
    now: DateTime<Utc>,
) -> Result<u32, StoreError> {
    // Absent from a complete read, and this read may be cut: not proven gone.
    let proven = |status: &Option<String>| complete || is_leaving(status.as_deref());
    let held = run!(
        fetch_all, &mut *conn, "release_left_links",
        "SELECT intent_id, status FROM held_links WHERE campaign = $1 AND released_at IS NULL \
         AND leaving_since IS NOT NULL AND leaving_since <= $2";
        campaign, to_millis(before)
    )?;
    let mut n = 0;
    for r in held {
        let status: Option<String> = col(&r, "status")?;
        if !proven(&status) {
            continue;
        }
        let why = left_why(status);
        n += u32::from(
            release_held(conn, campaign, IntentId(col(&r, "intent_id")?), &why, now).await?,
        );
    }
    let foreign = run!(
        fetch_all, &mut *conn, "release_left_links",
        "SELECT link_key, status FROM foreign_links WHERE campaign = $1 AND adopted = 1 \
         AND released_at IS NULL AND leaving_since IS NOT NULL AND leaving_since <= $2";
        campaign, to_millis(before)
    )?;
    for r in foreign {
        let status: Option<String> = col(&r, "status")?;
        if !proven(&status) {
            continue;
        }
        let why = left_why(status);
        let key: String = col(&r, "link_key")?;
        n += u32::from(foreign::release(conn, campaign, &key, &why, now).await?);
    }
    Ok(n)
}

fn left_why(status: Option<String>) -> String {
    match status {
        Some(s) => {
            format!("left the project's link list (status `{s}`) for longer than the settle grace")
        }
        None => {
            "absent from complete reads of the project's link list for longer than the settle grace"
                .into()
        }
    }
}

async fn release_held(
    conn: &mut AnyConnection,
    campaign: &str,
    intent: IntentId,
    why: &str,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let row = run!(
        fetch_optional, &mut *conn, "release_link",
        "UPDATE held_links SET released_at = $3, released_why = $4 WHERE campaign = $1 \
         AND intent_id = $2 AND released_at IS NULL RETURNING price";
        campaign, intent.0, to_millis(now), why
    )?;
    let Some(row) = row else {
        return Ok(false);
    };
    let m = Movement {
        campaign,
        intent: Some(intent),
        amount: -col::<i64>(&row, "price")?,
        links: 0,
        day: None,
        reason: "link_left_list",
    };
    budget::apply(conn, &m, now).await?;
    Ok(true)
}

async fn campaign_of(conn: &mut AnyConnection, intent: IntentId) -> Result<String, StoreError> {
    let row = run!(
        fetch_one, &mut *conn, "record_link_list",
        "SELECT campaign FROM held_links WHERE intent_id = $1";
        intent.0
    )?;
    col(&row, "campaign")
}

pub(in crate::store) fn held_from_row(r: &AnyRow) -> Result<HeldLink, StoreError> {
    let released_at = opt_time(r, "released_at")?;
    let why: Option<String> = col(r, "released_why")?;
    Ok(read_row!(
        r,
        HeldLink {
            intent_id,
            link_id,
            page_id,
            url_id,
            text_id,
            price,
            bought_at,
            seen_in_list_at,
            listed_after_ms,
            status,
            leaving_since,
            released: released_at.map(|t| (t, why.unwrap_or_default())),
        }
    ))
}

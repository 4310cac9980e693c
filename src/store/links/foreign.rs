//! Links the project's list shows that no purchase intent of ours bought — an autobuyer's,
//! or one bought outside linkrunner. Every link the project holds counts against the cap
//! exactly once, whoever bought it:
//!
//! - attributed to an autobuyer that counts as running: inside that autobuyer's part
//!   (`autobuyers.reserved` = its budget, or the rent of its links if that is higher);
//! - attributed to an autobuyer whose stop is settled: at its own rent, in that autobuyer's part;
//! - attributed to none: at its own rent, in the link's `counted`.
//!
//! Every change of a part moves `budgets.committed` with a ledger row, in the transaction that
//! changes it. Tested by `tests/it/store` `foreign_links_count_once_whoever_bought_them`.

use chrono::{DateTime, Utc};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::store::StoreError;
use crate::store::handles::Links;
use crate::store::money::budget::{self, Movement};
use crate::store::rows::{col, opt_time, read_row, stored};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::market::LinkRecord;
use linkrunner_domain::money::Money;
use linkrunner_domain::records::ForeignLink;

/// A listed link that matched no held link, as the engine judged it.
pub(crate) struct Unmatched<'a> {
    pub(crate) record: &'a LinkRecord,
    pub(crate) autobuyer: Option<&'a str>,
    pub(crate) leaving: bool,
    /// Counted when the list gives no price (the campaign's `max_link_price`).
    pub(crate) fallback_price: Money,
}

/// The key a foreign link is kept under: its link id, else page, URL and text.
pub(crate) fn key_of(l: &LinkRecord) -> String {
    match l.link_id {
        Some(id) => format!("id:{id}"),
        None => format!(
            "page:{:?}:url:{:?}:text:{:?}",
            l.page_id, l.url_id, l.text_id
        ),
    }
}

/// The columns `foreign_from_row` reads, as a literal for `concat!` (queries stay `&'static str`).
macro_rules! foreign_columns {
    () => {
        "link_key, link_id, page_id, url_id, text_id, price, status, autobuyer, counted, adopted, \
         price_estimated, first_seen_at, last_seen_at, leaving_since, released_at, released_why"
    };
}
pub(in crate::store) use foreign_columns;

impl Links<'_> {
    /// Every foreign link of the campaign, released ones included, oldest first.
    pub async fn foreign_links(self, campaign: &str) -> Result<Vec<ForeignLink>, StoreError> {
        let sql = concat!(
            "SELECT ",
            foreign_columns!(),
            " FROM foreign_links WHERE campaign = $1 ORDER BY first_seen_at, link_key"
        );
        let query = sqlx::query(sql).bind(campaign);
        self.read_all("foreign_links", query, foreign_from_row)
            .await
    }
}

/// Records a listed foreign link: counts it the first time (or when it comes back after it
/// was released), keeps price, status and whether it is leaving current. True if newly counted.
pub(crate) async fn upsert(
    conn: &mut AnyConnection,
    campaign: &str,
    u: &Unmatched<'_>,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let key = key_of(u.record);
    let existing = by_key(conn, campaign, &key).await?;
    let (price, estimated) = match u.record.price {
        Some(p) => (p, false),
        None => (u.fallback_price, true),
    };
    let counted_now = existing
        .as_ref()
        .is_some_and(|(f, adopted)| *adopted && f.released.is_none());
    let released = existing
        .as_ref()
        .is_some_and(|(f, adopted)| *adopted && f.released.is_some());
    if released && u.leaving {
        // Released because it left, and the list still shows it leaving: nothing to count.
        return Ok(false);
    }
    if !counted_now {
        adopt(conn, campaign, &key, u, (price, estimated), now).await?;
        return Ok(true);
    }
    let Some((f, _)) = existing else {
        return Ok(false);
    };
    refresh(conn, campaign, &f, u, (price, estimated), now).await?;
    Ok(false)
}

/// First sight (or return) of a foreign link: attributed and counted.
async fn adopt(
    conn: &mut AnyConnection,
    campaign: &str,
    key: &str,
    u: &Unmatched<'_>,
    (price, estimated): (Money, bool),
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let owner = match u.autobuyer {
        Some(name) if autobuyer_exists(conn, campaign, name).await? => Some(name),
        _ => None,
    };
    let counted = if owner.is_some() { 0 } else { price.kopecks() };
    let l = u.record;
    run!(
        execute, &mut *conn, "record_link_list",
        "INSERT INTO foreign_links (campaign, link_key, link_id, page_id, url_id, text_id, price, status, \
         first_seen_at, last_seen_at, autobuyer, counted, adopted, price_estimated, leaving_since) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10, $11, 1, $12, $13) \
         ON CONFLICT (campaign, link_key) DO UPDATE SET link_id = excluded.link_id, \
         price = excluded.price, status = excluded.status, last_seen_at = excluded.last_seen_at, \
         autobuyer = excluded.autobuyer, counted = excluded.counted, adopted = 1, \
         price_estimated = excluded.price_estimated, leaving_since = excluded.leaving_since, \
         released_at = NULL, released_why = NULL";
        campaign, key, l.link_id, l.page_id, l.url_id, l.text_id, price.kopecks(), l.status.clone(),
        to_millis(now), owner, counted, i64::from(estimated), u.leaving.then(|| to_millis(now))
    )?;
    let reason = "foreign_link";
    match owner {
        Some(name) => rebalance_autobuyer(conn, campaign, name, now).await,
        None => move_by(conn, campaign, counted, reason, now).await,
    }
}

/// A counted foreign link seen again: price, status and leaving kept current.
async fn refresh(
    conn: &mut AnyConnection,
    campaign: &str,
    f: &ForeignLink,
    u: &Unmatched<'_>,
    (price, estimated): (Money, bool),
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let counted = if f.autobuyer.is_some() {
        Money::ZERO
    } else {
        price
    };
    let leaving_since = leaving_since(u.leaving, f.leaving_since, now);
    run!(
        execute, &mut *conn, "record_link_list",
        "UPDATE foreign_links SET price = $3, status = $4, last_seen_at = $5, counted = $6, \
         price_estimated = $7, leaving_since = $8 WHERE campaign = $1 AND link_key = $2";
        campaign, &f.key, price.kopecks(), u.record.status.clone(), to_millis(now),
        counted.kopecks(), i64::from(estimated), leaving_since.map(to_millis)
    )?;
    match &f.autobuyer {
        Some(name) => rebalance_autobuyer(conn, campaign, name, now).await,
        None => {
            let delta = counted.kopecks() - f.counted.kopecks();
            move_by(conn, campaign, delta, "price_adjust", now).await
        }
    }
}

/// Counted foreign links absent from a list proven complete start leaving now.
pub(crate) async fn mark_absent(
    conn: &mut AnyConnection,
    campaign: &str,
    seen: &[String],
    now: DateTime<Utc>,
) -> Result<u32, StoreError> {
    let rows = run!(
        fetch_all, &mut *conn, "record_link_list",
        "SELECT link_key FROM foreign_links WHERE campaign = $1 AND adopted = 1 \
         AND released_at IS NULL AND leaving_since IS NULL";
        campaign
    )?;
    let mut missing = 0;
    for r in rows {
        let key: String = col(&r, "link_key")?;
        if seen.contains(&key) {
            continue;
        }
        missing += 1;
        run!(
            execute, &mut *conn, "record_link_list",
            "UPDATE foreign_links SET leaving_since = $3 WHERE campaign = $1 AND link_key = $2";
            campaign, &key, to_millis(now)
        )?;
    }
    Ok(missing)
}

/// Releases a counted foreign link: it no longer counts, with `why` kept on its row.
pub(crate) async fn release(
    conn: &mut AnyConnection,
    campaign: &str,
    key: &str,
    why: &str,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let Some((f, true)) = by_key(conn, campaign, key).await? else {
        return Ok(false);
    };
    if f.released.is_some() {
        return Ok(false);
    }
    run!(
        execute, &mut *conn, "release_link",
        "UPDATE foreign_links SET released_at = $3, released_why = $4, counted = 0 \
         WHERE campaign = $1 AND link_key = $2";
        campaign, key, to_millis(now), why
    )?;
    match &f.autobuyer {
        Some(name) => rebalance_autobuyer(conn, campaign, name, now).await?,
        None => move_by(conn, campaign, -f.counted.kopecks(), "link_left_list", now).await?,
    }
    Ok(true)
}

/// The rent of the links attributed to an autobuyer that have not been released.
pub(crate) async fn attributed_rent(
    conn: &mut AnyConnection,
    campaign: &str,
    name: &str,
) -> Result<i64, StoreError> {
    let row = run!(
        fetch_one, &mut *conn, "attributed_rent",
        "SELECT CAST(COALESCE(SUM(price), 0) AS BIGINT) AS rent FROM foreign_links \
         WHERE campaign = $1 AND autobuyer = $2 AND adopted = 1 AND released_at IS NULL";
        campaign, name
    )?;
    col(&row, "rent")
}

/// Brings an autobuyer's part of the commitment in line with its links: while it counts as
/// running, its budget or the rent of its links if higher (never lowered while it runs: its
/// budget may still be spent); once its stop is settled, the rent of its links.
pub(crate) async fn rebalance_autobuyer(
    conn: &mut AnyConnection,
    campaign: &str,
    name: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let row = run!(
        fetch_optional, &mut *conn, "rebalance_autobuyer",
        "SELECT running, reserved FROM autobuyers WHERE campaign = $1 AND name = $2";
        campaign, name
    )?;
    let Some(row) = row else {
        return Ok(());
    };
    let (running, reserved): (i64, i64) = (col(&row, "running")?, col(&row, "reserved")?);
    let rent = attributed_rent(conn, campaign, name).await?;
    let target = if running != 0 {
        reserved.max(rent)
    } else {
        rent
    };
    if target == reserved {
        return Ok(());
    }
    run!(
        execute, &mut *conn, "rebalance_autobuyer",
        "UPDATE autobuyers SET reserved = $3 WHERE campaign = $1 AND name = $2";
        campaign, name, target
    )?;
    move_by(conn, campaign, target - reserved, "autobuyer_links", now).await
}

async fn move_by(
    conn: &mut AnyConnection,
    campaign: &str,
    amount: i64,
    reason: &'static str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let m = Movement {
        campaign,
        intent: None,
        amount,
        links: 0,
        day: None,
        reason,
    };
    budget::apply(conn, &m, now).await
}

/// Since when a link seen again is leaving: when first seen leaving (`now` if it is only
/// now), none once the list shows it staying. Held and foreign links alike.
pub(super) fn leaving_since(
    leaving: bool,
    since: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    leaving.then(|| since.unwrap_or(now))
}

async fn autobuyer_exists(
    conn: &mut AnyConnection,
    campaign: &str,
    name: &str,
) -> Result<bool, StoreError> {
    let row = run!(
        fetch_optional, &mut *conn, "record_link_list",
        "SELECT 1 AS one FROM autobuyers WHERE campaign = $1 AND name = $2";
        campaign, name
    )?;
    Ok(row.is_some())
}

/// The row under `key` and whether it was ever counted (`adopted`).
pub(crate) async fn by_key(
    conn: &mut AnyConnection,
    campaign: &str,
    key: &str,
) -> Result<Option<(ForeignLink, bool)>, StoreError> {
    let sql = concat!(
        "SELECT ",
        foreign_columns!(),
        " FROM foreign_links WHERE campaign = $1 AND link_key = $2"
    );
    let row = run!(fetch_optional, &mut *conn, "record_link_list", sql; campaign, key)?;
    row.map(|r| Ok((foreign_from_row(&r)?, col::<i64>(&r, "adopted")? != 0)))
        .transpose()
}

pub(in crate::store) fn foreign_from_row(r: &AnyRow) -> Result<ForeignLink, StoreError> {
    let released_at = opt_time(r, "released_at")?;
    let why: Option<String> = col(r, "released_why")?;
    Ok(read_row!(
        r,
        ForeignLink {
            key: stored(r, "link_key")?,
            link_id,
            page_id,
            url_id,
            text_id,
            price,
            status,
            autobuyer,
            counted,
            price_estimated,
            first_seen_at,
            last_seen_at,
            leaving_since,
            released: released_at.map(|t| (t, why.unwrap_or_default())),
        }
    ))
}

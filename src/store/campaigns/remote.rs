//! Ids the marketplace gave us, by the campaign's own names: the project, URLs and texts,
//! filters and autobuyers (with the budget a running autobuyer holds).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::store::StoreError;
use crate::store::handles::Campaigns;
use crate::store::money::budget::{self, Movement};
use crate::store::rows::{col, db, read_row, stored};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::market::{CreatedUrl, ProjectIds};
use linkrunner_domain::money::Money;
use linkrunner_domain::records::{AccountTruth, AutobuyerRecord, RemoteIds};

pub(crate) struct NewAutobuyer<'a> {
    pub(crate) name: &'a str,
    pub(crate) id: i64,
    pub(crate) running: bool,
    pub(crate) spec_fingerprint: &'a str,
    pub(crate) monthly_budget: Money,
}

impl Campaigns<'_> {
    /// Everything the marketplace created for the campaign that the journal knows of.
    pub async fn remote_ids(self, campaign: &str) -> Result<RemoteIds, StoreError> {
        let result = async {
            let mut conn = self.pool.acquire().await.map_err(db("remote_ids"))?;
            let (project, list_cut_at, account) = project(&mut conn, campaign).await?;
            let mut ids = RemoteIds {
                project,
                list_cut_at,
                account,
                ..RemoteIds::default()
            };
            // URLs, texts and filters in one round trip: this is read after every step.
            let sql = IDS_SQL;
            for r in select(&mut conn, sql, campaign).await? {
                let (a, id): (String, i64) = (col(&r, "a")?, col(&r, "id")?);
                match col::<String>(&r, "what")?.as_str() {
                    "url" => {
                        ids.urls.insert(a, id);
                    }
                    "text" => {
                        ids.texts.insert((a, col(&r, "b")?), id);
                    }
                    "market_url" => {
                        ids.market_urls.insert(a, col(&r, "b")?);
                    }
                    _ => {
                        ids.filters.insert(a, id);
                    }
                }
            }
            ids.autobuyers = autobuyers(&mut conn, campaign).await?;
            Ok(ids)
        }
        .await;
        self.done(result)
    }
}

/// A campaign's URL, text and filter ids, and the marketplace's spelling of its respelt URLs,
/// in one query.
pub(in crate::store) const IDS_SQL: &str = "SELECT 'url' AS what, url AS a, '' AS b, url_id AS id FROM urls WHERE campaign = $1 \
     UNION ALL SELECT 'market_url' AS what, url AS a, market_url AS b, url_id AS id FROM urls WHERE campaign = $1 AND market_url IS NOT NULL \
     UNION ALL SELECT 'text' AS what, url AS a, text AS b, text_id AS id FROM texts WHERE campaign = $1 \
     UNION ALL SELECT 'filter' AS what, name AS a, '' AS b, filter_id AS id FROM filters WHERE campaign = $1";

async fn select(
    conn: &mut AnyConnection,
    sql: &'static str,
    campaign: &str,
) -> Result<Vec<AnyRow>, StoreError> {
    run!(fetch_all, &mut *conn, "remote_ids", sql; campaign)
}

/// The project's row with its adoption and the operator's word on its list (issue 24), in
/// one round trip: both exist only beside a `projects` row.
async fn project(
    conn: &mut AnyConnection,
    campaign: &str,
) -> Result<(Option<ProjectIds>, Option<u32>, AccountTruth), StoreError> {
    match select(conn, super::adoption::PROJECT_SQL, campaign)
        .await?
        .first()
    {
        Some(r) => {
            let (ids, cut) = project_from_row(r)?;
            Ok((ids, cut, super::adoption::account_from_joined_row(r)?))
        }
        None => Ok((None, None, AccountTruth::default())),
    }
}

/// A `projects` row: the project's ids and where its list was seen cut.
pub(in crate::store) fn project_from_row(
    r: &AnyRow,
) -> Result<(Option<ProjectIds>, Option<u32>), StoreError> {
    Ok((
        Some(read_row!(
            r,
            ProjectIds {
                project_id,
                url_id,
                text_id,
            }
        )),
        col::<Option<i64>>(r, "list_cut_at")?.map(|n| n.clamp(0, i64::from(u32::MAX)) as u32),
    ))
}

async fn autobuyers(
    conn: &mut AnyConnection,
    campaign: &str,
) -> Result<BTreeMap<String, AutobuyerRecord>, StoreError> {
    let sql = "SELECT name, autobuyer_id, running, spec_fingerprint, monthly_budget, reserved, \
               switch_state, stopped_at, adopted_at, covers, adopted_id FROM autobuyers WHERE campaign = $1";
    let mut out = BTreeMap::new();
    for r in select(conn, sql, campaign).await? {
        out.insert(col(&r, "name")?, autobuyer_from_row(&r)?);
    }
    Ok(out)
}

/// An `autobuyers` row, but its name.
pub(in crate::store) fn autobuyer_from_row(r: &AnyRow) -> Result<AutobuyerRecord, StoreError> {
    Ok(read_row!(
        r,
        AutobuyerRecord {
            id: stored(r, "autobuyer_id")?,
            running,
            spec_fingerprint,
            monthly_budget,
            reserved,
            switch_state,
            stopped_at,
            adopted_at,
            covers: col::<Option<String>>(r, "covers")?
                .and_then(|c| serde_json::from_str(&c).ok())
                .unwrap_or_default(),
            adopted_id,
        }
    ))
}

pub(crate) async fn save_project(
    conn: &mut AnyConnection,
    campaign: &str,
    p: &ProjectIds,
) -> Result<(), StoreError> {
    run!(
        execute, &mut *conn, "save_project",
        "INSERT INTO projects (campaign, project_id, url_id, text_id) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (campaign) DO UPDATE SET project_id = excluded.project_id, \
         url_id = excluded.url_id, text_id = excluded.text_id";
        campaign, p.project_id, p.url_id, p.text_id
    )?;
    Ok(())
}

pub(crate) async fn save_texts(
    conn: &mut AnyConnection,
    campaign: &str,
    urls: &[CreatedUrl],
) -> Result<(), StoreError> {
    for u in urls {
        run!(
            execute, &mut *conn, "save_texts",
            "INSERT INTO urls (campaign, url, url_id) VALUES ($1, $2, $3) \
             ON CONFLICT (campaign, url) DO UPDATE SET url_id = excluded.url_id";
            campaign, &u.url, u.url_id
        )?;
        for t in &u.texts {
            run!(
                execute, &mut *conn, "save_texts",
                "INSERT INTO texts (campaign, url, text, text_id) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (campaign, url, text) DO UPDATE SET text_id = excluded.text_id";
                campaign, &u.url, &t.text, t.text_id
            )?;
        }
    }
    Ok(())
}

pub(crate) async fn save_filter(
    conn: &mut AnyConnection,
    campaign: &str,
    name: &str,
    id: i64,
) -> Result<(), StoreError> {
    run!(
        execute, &mut *conn, "save_filter",
        "INSERT INTO filters (campaign, name, filter_id) VALUES ($1, $2, $3) \
         ON CONFLICT (campaign, name) DO UPDATE SET filter_id = excluded.filter_id";
        campaign, name, id
    )?;
    Ok(())
}

/// Records a created autobuyer. A replaced record (a changed spec, issue 24) keeps what its
/// predecessor still held: the rent of the predecessor's links moves out of the autobuyer's
/// part into each link's own `counted` (so a link that leaves is released at its rent, and the
/// new autobuyer's budget is not taken for it), and anything else the part held stays, added
/// to the new budget, never dropped, until a stop releases it. `committed` does not move.
pub(crate) async fn save_autobuyer(
    conn: &mut AnyConnection,
    campaign: &str,
    a: &NewAutobuyer<'_>,
    reserved: Money,
) -> Result<(), StoreError> {
    let moved = detach_predecessors_links(conn, campaign, a.name).await?;
    run!(
        execute, &mut *conn, "save_autobuyer",
        "INSERT INTO autobuyers (campaign, name, autobuyer_id, running, spec_fingerprint, monthly_budget, \
         reserved, switch_state) VALUES ($1, $2, $3, $4, $5, $6, $7, 'unknown') \
         ON CONFLICT (campaign, name) DO UPDATE SET \
         autobuyer_id = excluded.autobuyer_id, running = excluded.running, \
         spec_fingerprint = excluded.spec_fingerprint, monthly_budget = excluded.monthly_budget, \
         reserved = autobuyers.reserved - $8 + excluded.reserved, switch_state = 'unknown', stopped_at = NULL";
        campaign, a.name, a.id, i64::from(a.running), a.spec_fingerprint,
        a.monthly_budget.kopecks(), reserved.kopecks(), moved
    )?;
    Ok(())
}

/// The links counted in autobuyer `name`'s part (its predecessor's, when a new autobuyer of
/// that name is recorded) are counted on their own from now on: attributed to none, at their
/// rent. Returns the rent moved (kopecks); 0 for a name seen for the first time.
async fn detach_predecessors_links(
    conn: &mut AnyConnection,
    campaign: &str,
    name: &str,
) -> Result<i64, StoreError> {
    let rent = crate::store::links::foreign::attributed_rent(conn, campaign, name).await?;
    if rent == 0 {
        return Ok(0);
    }
    run!(
        execute, &mut *conn, "save_autobuyer",
        "UPDATE foreign_links SET autobuyer = NULL, counted = price WHERE campaign = $1 \
         AND autobuyer = $2 AND adopted = 1 AND released_at IS NULL";
        campaign, name
    )?;
    Ok(rent)
}

/// A started autobuyer holds the budget its start intent reserved; the marketplace
/// confirmed it runs.
pub(crate) async fn autobuyer_started(
    conn: &mut AnyConnection,
    campaign: &str,
    name: &str,
    reserved: Money,
) -> Result<(), StoreError> {
    switch(conn, campaign, name, "running", reserved).await
}

/// A start or stop whose outcome nobody knows: the autobuyer counts as running (its
/// intent's reservation joins its budget) until a stop is confirmed and settled.
pub(crate) async fn autobuyer_switch_unknown(
    conn: &mut AnyConnection,
    campaign: &str,
    name: &str,
    reserved: Money,
) -> Result<(), StoreError> {
    switch(conn, campaign, name, "unknown", reserved).await
}

async fn switch(
    conn: &mut AnyConnection,
    campaign: &str,
    name: &str,
    state: &str,
    reserved: Money,
) -> Result<(), StoreError> {
    let done = run!(
        execute, &mut *conn, "autobuyer_switch",
        "UPDATE autobuyers SET running = 1, reserved = reserved + $3, switch_state = $4, \
         stopped_at = NULL WHERE campaign = $1 AND name = $2";
        campaign, name, reserved.kopecks(), state
    )?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound {
            what: format!("autobuyer `{name}` of `{campaign}`"),
        });
    }
    Ok(())
}

/// The marketplace confirmed a stop. The autobuyer keeps counting as running: links it
/// bought just before may not be in the list yet. `settle_stopped_autobuyer` replaces its
/// budget with the rent of its links once the list had the settle grace to show them.
pub(crate) async fn autobuyer_stop_confirmed(
    conn: &mut AnyConnection,
    campaign: &str,
    name: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let done = run!(
        execute, &mut *conn, "autobuyer_stopped",
        "UPDATE autobuyers SET switch_state = 'stopped', stopped_at = $3 \
         WHERE campaign = $1 AND name = $2";
        campaign, name, to_millis(now)
    )?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound {
            what: format!("autobuyer `{name}` of `{campaign}`"),
        });
    }
    Ok(())
}

/// What settling a stopped autobuyer did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSettlement {
    /// Its budget left the commitment; the rent of its links (`kept`) stays.
    Settled { released: Money, kept: Money },
    /// It is not a confirmed stop waiting to be settled (running, unknown, already settled).
    NotStopped,
}

impl Campaigns<'_> {
    /// Settles a confirmed stop: the autobuyer's part of the commitment becomes the rent of
    /// the links attributed to it that have not left the list; the rest of its budget is
    /// released. The caller decides when (after the settle grace, on a complete list).
    pub async fn settle_stopped_autobuyer(
        self,
        campaign: &str,
        name: &str,
        now: DateTime<Utc>,
    ) -> Result<StopSettlement, StoreError> {
        transaction!(self, "settle_stopped_autobuyer", |tx| {
            settle_stop_in(&mut tx, campaign, name, now).await
        })
    }
}

async fn settle_stop_in(
    conn: &mut AnyConnection,
    campaign: &str,
    name: &str,
    now: DateTime<Utc>,
) -> Result<StopSettlement, StoreError> {
    let row = run!(
        fetch_optional, &mut *conn, "settle_stopped_autobuyer",
        "SELECT reserved FROM autobuyers WHERE campaign = $1 AND name = $2 AND running = 1 \
         AND switch_state = 'stopped'";
        campaign, name
    )?;
    let Some(row) = row else {
        return Ok(StopSettlement::NotStopped);
    };
    let reserved: i64 = col(&row, "reserved")?;
    let rent = crate::store::links::foreign::attributed_rent(conn, campaign, name).await?;
    run!(
        execute, &mut *conn, "settle_stopped_autobuyer",
        "UPDATE autobuyers SET running = 0, reserved = $3 WHERE campaign = $1 AND name = $2";
        campaign, name, rent
    )?;
    let m = Movement {
        campaign,
        intent: None,
        amount: rent - reserved,
        links: 0,
        day: None,
        reason: "autobuyer_stop",
    };
    budget::apply(conn, &m, now).await?;
    Ok(StopSettlement::Settled {
        released: Money::from_kopecks(reserved - rent),
        kept: Money::from_kopecks(rent),
    })
}

//! Accounts already in use (issue 24): the adoption of an existing project and of existing
//! autobuyers, the operator's words (`resolve adopt`, `resolve list-complete`) and what the
//! last read of the link list showed.
//!
//! An adopted autobuyer counts as running from the moment it is recorded (its budget moves
//! the commitment with a ledger row, in the transaction that records it): the API cannot say
//! whether it runs, so it counts until linkrunner's own stop of it is settled. Tested by
//! `tests/it` `store::adoption::*` on PostgreSQL and SQLite.
//!
//! The rule that a campaign's project, a URL's id and an autobuyer's id are never re-pointed
//! is decided in `decide::adoption`, with its words, before anything is written. The writes
//! here keep it once more in the transaction, as the last line of defence against two
//! daemons racing: they change nothing and answer what they found ([`AdoptOutcome`], the
//! URLs whose recorded id differs, the autobuyer's recorded id), and the engine says it with
//! the decision's words.

use chrono::{DateTime, Utc};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::store::StoreError;
use crate::store::handles::Campaigns;
use crate::store::money::budget::{self, Movement};
use crate::store::rows::{col, db, opt_time, read_row, stored};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::money::Money;
use linkrunner_domain::records::{AccountTruth, Adoption, OperatorWord};

/// An autobuyer a file adopts by id.
#[derive(Debug, Clone)]
pub struct AdoptedAutobuyer<'a> {
    pub name: &'a str,
    pub id: i64,
    pub spec_fingerprint: &'a str,
    pub monthly_budget: Money,
    pub covers: Vec<i64>,
}

/// What recording an adoption found in the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdoptOutcome {
    /// Recorded now, or already recorded for this project.
    Recorded,
    /// The campaign already has another project (created by linkrunner, or adopted under
    /// another id): nothing was changed.
    OtherProject { recorded: i64 },
}

impl Campaigns<'_> {
    /// Records that `campaign` adopts project `project_id`: its `projects` row (the project's
    /// own main-page ids are not known: 0) and its `adoptions` row. A campaign that already
    /// has another project is left as it is ([`AdoptOutcome::OtherProject`]).
    pub async fn adopt_project(
        self,
        campaign: &str,
        project_id: i64,
        now: DateTime<Utc>,
    ) -> Result<AdoptOutcome, StoreError> {
        transaction!(self, "adopt_project", |tx| {
            let row = run!(
                fetch_optional, &mut *tx, "adopt_project",
                "SELECT project_id FROM projects WHERE campaign = $1";
                campaign
            )?;
            if let Some(r) = row {
                let recorded: i64 = col(&r, "project_id")?;
                if recorded != project_id {
                    return Ok(AdoptOutcome::OtherProject { recorded });
                }
            } else {
                run!(
                    execute, &mut *tx, "adopt_project",
                    "INSERT INTO projects (campaign, project_id, url_id, text_id) VALUES ($1, $2, 0, 0)";
                    campaign, project_id
                )?;
            }
            run!(
                execute, &mut *tx, "adopt_project",
                "INSERT INTO adoptions (campaign, project_id, recorded_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (campaign) DO NOTHING";
                campaign, project_id, to_millis(now)
            )?;
            Ok(AdoptOutcome::Recorded)
        })
    }

    /// Records URL and text ids the file names in the adopted project; ids already recorded
    /// for a URL or text are kept (returns the URLs whose recorded id differs).
    pub(crate) async fn adopt_ids(
        self,
        campaign: &str,
        urls: &[(String, i64)],
        texts: &[((String, String), i64)],
    ) -> Result<Vec<String>, StoreError> {
        transaction!(self, "adopt_ids", |tx| {
            let mut differ = Vec::new();
            for (url, id) in urls {
                run!(
                    execute, &mut *tx, "adopt_ids",
                    "INSERT INTO urls (campaign, url, url_id) VALUES ($1, $2, $3) \
                     ON CONFLICT (campaign, url) DO NOTHING";
                    campaign, url, id
                )?;
                let r = run!(
                    fetch_one, &mut *tx, "adopt_ids",
                    "SELECT url_id FROM urls WHERE campaign = $1 AND url = $2";
                    campaign, url
                )?;
                if col::<i64>(&r, "url_id")? != *id {
                    differ.push(url.clone());
                }
            }
            for ((url, text), id) in texts {
                run!(
                    execute, &mut *tx, "adopt_ids",
                    "INSERT INTO texts (campaign, url, text, text_id) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (campaign, url, text) DO NOTHING";
                    campaign, url, text, id
                )?;
            }
            Ok(differ)
        })
    }

    /// Records an adopted autobuyer, counted as running at its declared budget (a ledger
    /// row `adopted_autobuyer`). Returns the id already recorded under that name when it
    /// differs (nothing changed then), else `None`. After a replacement (a changed spec) the
    /// recorded id is the new autobuyer's and the file's still the adopted one's: both match.
    pub async fn adopt_autobuyer(
        self,
        campaign: &str,
        a: &AdoptedAutobuyer<'_>,
        now: DateTime<Utc>,
    ) -> Result<Option<i64>, StoreError> {
        transaction!(self, "adopt_autobuyer", |tx| {
            let known = run!(
                fetch_optional, &mut *tx, "adopt_autobuyer",
                "SELECT autobuyer_id, adopted_id FROM autobuyers WHERE campaign = $1 AND name = $2";
                campaign, a.name
            )?;
            if let Some(r) = known {
                let id: i64 = col(&r, "autobuyer_id")?;
                let adopted: Option<i64> = col(&r, "adopted_id")?;
                return Ok((id != a.id && adopted != Some(a.id)).then_some(id));
            }
            insert_adopted(&mut tx, campaign, a, now).await?;
            Ok(None)
        })
    }

    /// The operator's `resolve adopt`: changes on the adopted project may begin.
    pub async fn confirm_adoption(
        self,
        campaign: &str,
        by: &str,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let change = sqlx::query(
            "UPDATE adoptions SET confirmed_by = $2, confirmed_reason = $3, confirmed_at = $4 \
             WHERE campaign = $1 AND confirmed_at IS NULL",
        )
        .bind(campaign)
        .bind(by)
        .bind(reason)
        .bind(to_millis(now));
        self.write_one("confirm_adoption", change)
            .await
            .map(|r| r.rows_affected() > 0)
    }

    /// The operator's `resolve list-complete --links N`: the list shows every link, as long
    /// as no read shows fewer than the `links` they saw (plus what linkrunner bought since
    /// that the list could show: `decide::adoption::word_lapses`).
    pub async fn vouch_list_complete(
        self,
        campaign: &str,
        links: u32,
        (by, reason): (&str, &str),
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let change = sqlx::query(
            "INSERT INTO list_vouches (campaign, links, by_whom, reason, at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (campaign) DO UPDATE SET links = excluded.links, by_whom = excluded.by_whom, \
             reason = excluded.reason, at = excluded.at, lapsed_at = NULL",
        )
        .bind(campaign)
        .bind(i64::from(links))
        .bind(by)
        .bind(reason)
        .bind(to_millis(now));
        self.write_one("vouch_list_complete", change)
            .await
            .map(|_| ())
    }

    /// Notes what a read of the link list showed: complete or not, and its length; the first
    /// read after an adoption. `lapse`: the operator's word given at that time lapses
    /// (`decide::adoption::word_lapses` judged this read against it); a word given again
    /// meanwhile (another time) is kept. True when a word lapsed now.
    pub async fn note_list_read(
        self,
        campaign: &str,
        (complete, links): (bool, u32),
        lapse: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        transaction!(self, "note_list_read", |tx| {
            let q = |sql: &'static str| sqlx::query(sql).bind(campaign);
            q("UPDATE projects SET last_read_complete = $2, last_read_links = $3 WHERE campaign = $1")
                .bind(i64::from(complete))
                .bind(i64::from(links))
                .execute(&mut *tx)
                .await
                .map_err(db("note_list_read"))?;
            q("UPDATE adoptions SET first_read_at = $2 WHERE campaign = $1 AND first_read_at IS NULL")
                .bind(to_millis(now))
                .execute(&mut *tx)
                .await
                .map_err(db("note_list_read"))?;
            let mut lapsed = false;
            if let Some(word_at) = lapse {
                let done = q(
                    "UPDATE list_vouches SET lapsed_at = $2 WHERE campaign = $1 \
                              AND lapsed_at IS NULL AND at = $3",
                )
                .bind(to_millis(now))
                .bind(to_millis(word_at))
                .execute(&mut *tx)
                .await
                .map_err(db("note_list_read"))?;
                lapsed = done.rows_affected() > 0;
            }
            Ok(lapsed)
        })
    }

    /// The account truth of one campaign (see [`AccountTruth`]).
    pub(crate) async fn account_truth(self, campaign: &str) -> Result<AccountTruth, StoreError> {
        let result = async {
            let mut conn = self.pool.acquire().await.map_err(db("account_truth"))?;
            account_in(&mut conn, campaign).await
        }
        .await;
        self.done(result)
    }
}

async fn insert_adopted(
    conn: &mut AnyConnection,
    campaign: &str,
    a: &AdoptedAutobuyer<'_>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let covers = serde_json::to_string(&a.covers).unwrap_or_else(|_| "[]".into());
    run!(
        execute, &mut *conn, "adopt_autobuyer",
        "INSERT INTO autobuyers (campaign, name, autobuyer_id, running, spec_fingerprint, monthly_budget, \
         reserved, switch_state, adopted_at, covers, adopted_id) VALUES ($1, $2, $3, 1, $4, $5, $5, 'unknown', $6, $7, $3)";
        campaign, a.name, a.id, a.spec_fingerprint, a.monthly_budget.kopecks(), to_millis(now),
        covers
    )?;
    let m = Movement {
        campaign,
        intent: None,
        amount: a.monthly_budget.kopecks(),
        links: 0,
        day: None,
        reason: "adopted_autobuyer",
    };
    budget::apply(conn, &m, now).await
}

pub(in crate::store) async fn account_in(
    conn: &mut AnyConnection,
    campaign: &str,
) -> Result<AccountTruth, StoreError> {
    let q = |sql: &'static str| sqlx::query(sql).bind(campaign);
    let project = q("SELECT last_read_complete, last_read_links FROM projects WHERE campaign = $1")
        .fetch_optional(&mut *conn)
        .await
        .map_err(db("account_truth"))?;
    let adoption = q(ADOPTION_SQL)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db("account_truth"))?;
    let vouch = q(VOUCH_SQL)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db("account_truth"))?;
    let mut truth = AccountTruth::default();
    if let Some(r) = project {
        read_project(&mut truth, &r)?;
    }
    truth.adoption = adoption.as_ref().map(adoption_from_row).transpose()?;
    truth.vouch = vouch.as_ref().map(vouch_from_row).transpose()?;
    Ok(truth)
}

/// `remote_ids`' read of the project: its ids, where its list was seen cut, what its last
/// read showed, its adoption and the operator's current word on its list.
pub(in crate::store) const PROJECT_SQL: &str = "SELECT p.project_id, p.url_id, p.text_id, p.list_cut_at, \
     p.last_read_complete, p.last_read_links, a.project_id AS adopted_project, a.recorded_at, \
     a.first_read_at, a.confirmed_by, a.confirmed_at, a.confirmed_reason, v.links AS vouched_links, \
     v.by_whom, v.reason AS vouch_reason, v.at AS vouched_at FROM projects p \
     LEFT JOIN adoptions a ON a.campaign = p.campaign \
     LEFT JOIN list_vouches v ON v.campaign = p.campaign AND v.lapsed_at IS NULL \
     WHERE p.campaign = $1";

/// The account truth from a row of [`PROJECT_SQL`].
pub(in crate::store) fn account_from_joined_row(r: &AnyRow) -> Result<AccountTruth, StoreError> {
    let mut truth = AccountTruth::default();
    read_project(&mut truth, r)?;
    if let Some(project_id) = col::<Option<i64>>(r, "adopted_project")? {
        truth.adoption = Some(adoption_of(r, project_id)?);
    }
    if let Some(links) = col::<Option<i64>>(r, "vouched_links")? {
        truth.vouch = Some(read_row!(
            r,
            OperatorWord {
                by: col::<Option<String>>(r, "by_whom")?.unwrap_or_default(),
                at: stored(r, "vouched_at")?,
                reason: col::<Option<String>>(r, "vouch_reason")?.unwrap_or_default(),
                links: Some(links.clamp(0, i64::from(u32::MAX)) as u32),
            }
        ));
    }
    Ok(truth)
}

pub(in crate::store) const ADOPTION_SQL: &str = "SELECT campaign, project_id, recorded_at, first_read_at, confirmed_by, \
     confirmed_at, confirmed_reason FROM adoptions WHERE campaign = $1";
pub(in crate::store) const VOUCH_SQL: &str = "SELECT campaign, links, by_whom, reason, at FROM list_vouches \
     WHERE campaign = $1 AND lapsed_at IS NULL";

pub(in crate::store) fn read_project(
    truth: &mut AccountTruth,
    r: &AnyRow,
) -> Result<(), StoreError> {
    truth.last_read_complete = stored(r, "last_read_complete")?;
    truth.last_read_links =
        col::<Option<i64>>(r, "last_read_links")?.map(|n| n.clamp(0, i64::from(u32::MAX)) as u32);
    Ok(())
}

pub(in crate::store) fn adoption_from_row(r: &AnyRow) -> Result<Adoption, StoreError> {
    adoption_of(r, col(r, "project_id")?)
}

/// The adoption of `project_id` from a row with its record's and its confirmation's columns.
fn adoption_of(r: &AnyRow, project: i64) -> Result<Adoption, StoreError> {
    let confirmation = match opt_time(r, "confirmed_at")? {
        Some(at) => Some(OperatorWord {
            by: col::<Option<String>>(r, "confirmed_by")?.unwrap_or_default(),
            at,
            reason: col::<Option<String>>(r, "confirmed_reason")?.unwrap_or_default(),
            links: None,
        }),
        None => None,
    };
    Ok(read_row!(
        r,
        Adoption {
            project_id: project,
            recorded_at,
            first_read_at,
            confirmed: confirmation,
        }
    ))
}

pub(in crate::store) fn vouch_from_row(r: &AnyRow) -> Result<OperatorWord, StoreError> {
    let links: i64 = col(r, "links")?;
    Ok(read_row!(
        r,
        OperatorWord {
            by: stored(r, "by_whom")?,
            at,
            reason,
            links: Some(links.clamp(0, i64::from(u32::MAX)) as u32),
        }
    ))
}

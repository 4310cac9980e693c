//! Pages held twice (issue 32): a donor page the link list showed holding two links or more for
//! one URL (`decide::contested::held_twice` finds them in a read). Each finding is recorded
//! once per campaign, URL and page (`INSERT … ON CONFLICT DO NOTHING`: of two replicas, or a
//! restarted daemon, exactly one learns it is new and warns and counts it), kept current while
//! reads show it, and deleted once a read shown complete no longer does, so a recurrence is
//! recorded again. Tested by `tests/it/store` `a_page_held_twice_is_recorded_once_until_a_complete_read_clears_it`.

use chrono::{DateTime, Utc};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::store::StoreError;
use crate::store::handles::Links;
use crate::store::rows::{col, db, read_row, stored};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::records::HeldTwice;

const OP: &str = "note_held_twice";

impl Links<'_> {
    /// Records what one read showed held twice for `campaign` and returns the findings that
    /// are new (never recorded, or recorded again after they cleared). With `complete` (the read
    /// shows every link), findings it no longer shows are deleted.
    pub async fn note_held_twice(
        self,
        campaign: &str,
        found: &[HeldTwice],
        complete: bool,
        now: DateTime<Utc>,
    ) -> Result<Vec<HeldTwice>, StoreError> {
        let result = async {
            let mut tx = self.write_tx(OP).await?;
            let mut new = Vec::new();
            for f in found {
                if record_one(&mut tx, campaign, f, now).await? {
                    new.push(f.clone());
                }
            }
            if complete {
                clear_gone(&mut tx, campaign, found).await?;
            }
            tx.commit().await.map_err(db(OP))?;
            Ok(new)
        }
        .await;
        self.write_done(result).await
    }

    /// The pages recorded held twice for `campaign` and not cleared, by URL and page.
    pub async fn held_twice(self, campaign: &str) -> Result<Vec<HeldTwice>, StoreError> {
        let rows = run!(
            fetch_all, &self.pool, "held_twice",
            "SELECT url_id, page_id, links, link_ids FROM pages_held_twice \
             WHERE campaign = $1 ORDER BY url_id, page_id";
            campaign
        );
        self.done(rows.and_then(|rows| rows.iter().map(finding).collect()))
    }

    /// Every page recorded held twice and not cleared, in every campaign, with the URL's text
    /// and the project as the journal knows them (the notifier tells each once).
    pub async fn held_twice_everywhere(self) -> Result<Vec<HeldTwiceFinding>, StoreError> {
        let rows = run!(
            fetch_all,
            &self.pool,
            "held_twice_everywhere",
            "SELECT t.campaign, t.url_id, t.page_id, t.links, t.link_ids, t.first_seen_at,                (SELECT MIN(u.url) FROM urls u WHERE u.campaign = t.campaign AND u.url_id = t.url_id) AS url,                (SELECT p.project_id FROM projects p WHERE p.campaign = t.campaign) AS project_id              FROM pages_held_twice t ORDER BY t.campaign, t.url_id, t.page_id"
        );
        self.done(rows.and_then(|rows| {
            rows.iter()
                .map(|r| {
                    Ok(read_row!(
                        r,
                        HeldTwiceFinding {
                            campaign,
                            url,
                            project_id,
                            first_seen: stored(r, "first_seen_at")?,
                            held: finding(r)?,
                        }
                    ))
                })
                .collect()
        }))
    }
}

/// A page recorded held twice, where and since when: what the notifier tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldTwiceFinding {
    pub campaign: String,
    /// The URL's text, when the journal knows the URL id (it may be one no file names).
    pub url: Option<String>,
    pub project_id: Option<i64>,
    /// When a read first showed it: a recurrence after it cleared is a new finding.
    pub first_seen: DateTime<Utc>,
    pub held: HeldTwice,
}

/// One `pages_held_twice` row's URL, page and links.
fn finding(r: &AnyRow) -> Result<HeldTwice, StoreError> {
    let ids: String = col(r, "link_ids")?;
    Ok(read_row!(
        r,
        HeldTwice {
            url_id,
            page_id,
            links: u32::try_from(col::<i64>(r, "links")?).unwrap_or(u32::MAX),
            link_ids: ids.split(',').filter_map(|s| s.parse().ok()).collect(),
        }
    ))
}

/// Updates a finding already recorded, else records it: `true` when it is new.
async fn record_one(
    conn: &mut AnyConnection,
    campaign: &str,
    f: &HeldTwice,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let ids: Vec<String> = f.link_ids.iter().map(i64::to_string).collect();
    let ids = ids.join(",");
    // Both statements take the finding as $1..$6, in this order.
    let run = async |sql: &'static str, conn: &mut AnyConnection| {
        run!(
            execute, &mut *conn, OP,
            sql;
            campaign, f.url_id, f.page_id, i64::from(f.links), &ids, to_millis(now)
        )
    };
    let updated = run(
        "UPDATE pages_held_twice SET links = $4, link_ids = $5, last_seen_at = $6 \
         WHERE campaign = $1 AND url_id = $2 AND page_id = $3",
        conn,
    )
    .await?;
    if updated.rows_affected() > 0 {
        return Ok(false);
    }
    let inserted = run(
        "INSERT INTO pages_held_twice \
         (campaign, url_id, page_id, links, link_ids, first_seen_at, last_seen_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (campaign, url_id, page_id) DO NOTHING",
        conn,
    )
    .await?;
    Ok(inserted.rows_affected() == 1)
}

/// Deletes the campaign's findings a complete read no longer shows.
async fn clear_gone(
    conn: &mut AnyConnection,
    campaign: &str,
    found: &[HeldTwice],
) -> Result<(), StoreError> {
    let rows = run!(
        fetch_all, &mut *conn, OP,
        "SELECT url_id, page_id FROM pages_held_twice WHERE campaign = $1";
        campaign
    )?;
    for r in &rows {
        let (url_id, page_id): (i64, i64) = (col(r, "url_id")?, col(r, "page_id")?);
        if found
            .iter()
            .any(|f| f.url_id == url_id && f.page_id == page_id)
        {
            continue;
        }
        run!(
            execute, &mut *conn, OP,
            "DELETE FROM pages_held_twice WHERE campaign = $1 AND url_id = $2 AND page_id = $3";
            campaign, url_id, page_id
        )?;
    }
    Ok(())
}

//! Donor searches in progress, so a restart keeps polling the same job (handle and
//! `metaData` byte-for-byte) instead of queueing a new search. At most one open search per
//! campaign and URL (a partial unique index).

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;

use crate::store::StoreError;
use crate::store::handles::Rounds;
use crate::store::rows::{read_row, time};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::market::SearchJob;
use linkrunner_domain::records::{SearchRow, SearchState};

impl Rounds<'_> {
    /// The open search for this campaign and URL, if any (its deadline may have passed).
    pub async fn open_search(
        self,
        campaign: &str,
        url_id: i64,
    ) -> Result<Option<SearchRow>, StoreError> {
        let query = sqlx::query(
            "SELECT id, campaign, url_id, job_handle_id, meta_data, state, polls, deadline, created_at, updated_at \
             FROM searches WHERE campaign = $1 AND url_id = $2 AND state = 'open'",
        )
        .bind(campaign)
        .bind(url_id);
        self.read_optional("open_search", query, search_from_row)
            .await
    }

    /// Records a queued search. If another process recorded one for the same URL first,
    /// that one is returned and is the one to poll.
    pub async fn record_search(
        self,
        campaign: &str,
        url_id: i64,
        job: &SearchJob,
        deadline: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<SearchRow, StoreError> {
        let change = sqlx::query(
            "INSERT INTO searches (campaign, url_id, job_handle_id, meta_data, state, polls, deadline, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, 'open', 0, $5, $6, $6) ON CONFLICT DO NOTHING",
        )
        .bind(campaign)
        .bind(url_id)
        .bind(&job.job_handle_id)
        .bind(&job.meta_data)
        .bind(to_millis(deadline))
        .bind(to_millis(now));
        self.write_one("record_search", change).await?;
        self.open_search(campaign, url_id)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                what: format!("open search of `{campaign}` for url {url_id} (finished meanwhile)"),
            })
    }

    /// Closes a search; only an open one can be closed.
    pub async fn finish_search(
        self,
        id: i64,
        state: SearchState,
        polls: u32,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        if state == SearchState::Open {
            return Err(StoreError::invalid(
                "finish_search needs ready, failed or expired",
            ));
        }
        let change = sqlx::query("UPDATE searches SET state = $2, polls = $3, updated_at = $4 WHERE id = $1 AND state = 'open'")
            .bind(id)
            .bind(state.as_str())
            .bind(i64::from(polls))
            .bind(to_millis(now));
        self.write_some("finish_search", change, || {
            StoreError::invalid(format!("search {id} is not open"))
        })
        .await
    }

    /// How long the latest searches took to answer ready, oldest first, at most `limit` of
    /// them: the marketplace's pace as the journal remembers it, so a process that starts
    /// polls at the pace the last one learned (issue 27). Newest by id, so the primary key
    /// serves it however many searches the journal holds.
    pub async fn recent_ready_ages(self, limit: u32) -> Result<Vec<Duration>, StoreError> {
        let rows = run!(
            fetch_all, &self.pool, "recent_ready_ages",
            "SELECT created_at, updated_at FROM searches WHERE state = 'ready' ORDER BY id DESC LIMIT $1";
            i64::from(limit)
        );
        let ages = rows.and_then(|rows| {
            rows.iter()
                .rev()
                .map(|r| {
                    let took = time(r, "updated_at")? - time(r, "created_at")?;
                    Ok(took.to_std().unwrap_or_default())
                })
                .collect()
        });
        self.done(ages)
    }

    /// Counts a poll of an open search.
    pub async fn note_poll(
        self,
        id: i64,
        polls: u32,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let change = sqlx::query(
            "UPDATE searches SET polls = $2, updated_at = $3 WHERE id = $1 AND state = 'open'",
        )
        .bind(id)
        .bind(i64::from(polls))
        .bind(to_millis(now));
        self.write_some("note_poll", change, || {
            StoreError::invalid(format!("search {id} is not open"))
        })
        .await
    }
}

fn search_from_row(r: &AnyRow) -> Result<SearchRow, StoreError> {
    Ok(read_row!(
        r,
        SearchRow {
            id,
            campaign,
            url_id,
            job: read_row!(
                r,
                SearchJob {
                    job_handle_id,
                    meta_data
                }
            ),
            state,
            polls,
            deadline,
            created_at,
            updated_at,
        }
    ))
}

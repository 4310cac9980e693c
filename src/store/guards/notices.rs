//! Notifications claimed (issue 33): one row per event a person was told about, keyed by the
//! event's identity. [`Store::claim_notice`] is `INSERT … ON CONFLICT DO NOTHING`: of two
//! replicas (or a restarted daemon) that see the same event, exactly one gets `true` and
//! sends. [`Store::clear_notice`] deletes the row once the condition has cleared, so a
//! recurrence is told again. The journal never holds where a notification goes.

use chrono::{DateTime, Utc};

use crate::store::rows::{read_row, stored};
use crate::store::{Store, StoreError};
use linkrunner_domain::clock::to_millis;

/// A campaign's links (its own and others') that left the project's link list lately.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostLinks {
    pub campaign: String,
    pub links: u32,
    /// When the latest of them was released.
    pub latest: DateTime<Utc>,
}

/// One event claimed for sending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoticeRow {
    /// The event's identity (`notify::Event::key`).
    pub key: String,
    /// The event kind's word (`halted`, `cap_reached`, …).
    kind: String,
    pub campaign: Option<String>,
    /// The daemon that claimed it.
    pub claimed_by: String,
    claimed_at: DateTime<Utc>,
}

impl Store {
    /// Claims the event `key` for `holder`: `true` when this call recorded it (send it),
    /// `false` when it was claimed before, by this daemon or another (do not).
    pub async fn claim_notice(
        &self,
        key: &str,
        kind: &str,
        campaign: Option<&str>,
        holder: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let change = sqlx::query(
            "INSERT INTO notices (key, kind, campaign, claimed_by, claimed_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key) DO NOTHING",
        )
        .bind(key)
        .bind(kind)
        .bind(campaign)
        .bind(holder)
        .bind(to_millis(now));
        self.write_one("claim_notice", change)
            .await
            .map(|r| r.rows_affected() == 1)
    }

    /// Every event claimed and not cleared.
    pub async fn notices(&self) -> Result<Vec<NoticeRow>, StoreError> {
        let query = sqlx::query(
            "SELECT key, kind, campaign, claimed_by, claimed_at FROM notices ORDER BY key",
        );
        self.read_all("notices", query, |r| {
            Ok(read_row!(
                r,
                NoticeRow {
                    key,
                    kind,
                    campaign,
                    claimed_by,
                    claimed_at,
                }
            ))
        })
        .await
    }

    /// Per campaign, the held and foreign links released since `since` because they left the
    /// project's link list (`links::release_left_links`; an operator's release is not a loss).
    /// The two reasons are the ones `links.rs` `left_why` writes.
    pub async fn links_lost_since(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Vec<LostLinks>, StoreError> {
        let query = sqlx::query(
            "SELECT campaign, COUNT(*) AS n, MAX(released_at) AS latest FROM ( \
               SELECT campaign, released_at, released_why FROM held_links WHERE released_at >= $1 \
               UNION ALL \
               SELECT campaign, released_at, released_why FROM foreign_links WHERE released_at >= $1 \
             ) lost WHERE released_why LIKE 'left the project''s link list%' \
               OR released_why LIKE 'absent from complete reads%' \
             GROUP BY campaign ORDER BY campaign",
        )
        .bind(to_millis(since));
        self.read_all("links_lost_since", query, |r| {
            Ok(read_row!(
                r,
                LostLinks {
                    campaign,
                    links: stored(r, "n")?,
                    latest,
                }
            ))
        })
        .await
    }

    /// Forgets the event `key` if it was claimed no later than `before`: its condition cleared, so
    /// it is told again when it recurs. A claim made after the caller read the journal (by
    /// another replica that saw the condition again) is kept.
    pub async fn clear_notice(&self, key: &str, before: DateTime<Utc>) -> Result<(), StoreError> {
        let change = sqlx::query("DELETE FROM notices WHERE key = $1 AND claimed_at <= $2")
            .bind(key)
            .bind(to_millis(before));
        self.write_one("clear_notice", change).await.map(|_| ())
    }
}

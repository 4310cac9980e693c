//! Campaign leases with fencing: one campaign runs in one place at a time, and a process
//! that lost its lease cannot journal new intents (`begin_intents` checks the fence in its
//! own transaction). The fence grows whenever the holder changes and rows are never deleted,
//! so an old fence is never valid again.

use chrono::{DateTime, Duration, Utc};

use super::StoreError;
use super::handles::Leases;
use super::rows::{col, db, time};
use crate::clock::to_millis;
use crate::domain::records::LeaseToken;

impl Leases<'_> {
    /// Granted if the lease is free, expired, or already ours (then renewed, same fence).
    pub async fn try_acquire_lease(
        self,
        campaign: &str,
        holder: &str,
        ttl: Duration,
        now: DateTime<Utc>,
    ) -> Result<Option<LeaseToken>, StoreError> {
        let row = sqlx::query(
            "INSERT INTO leases (campaign, holder, fence, expires_at) VALUES ($1, $2, 1, $3) \
             ON CONFLICT (campaign) DO UPDATE SET \
             fence = CASE WHEN leases.holder = excluded.holder THEN leases.fence ELSE leases.fence + 1 END, \
             holder = excluded.holder, expires_at = excluded.expires_at \
             WHERE leases.holder = excluded.holder OR leases.expires_at <= $4 \
             RETURNING fence, expires_at",
        )
        .bind(campaign)
        .bind(holder)
        .bind(to_millis(now + ttl))
        .bind(to_millis(now))
        .fetch_optional(&self.writer)
        .await
        .map_err(db("try_acquire_lease"));
        let token = |r: sqlx::any::AnyRow| -> Result<LeaseToken, StoreError> {
            Ok(LeaseToken {
                campaign: campaign.to_string(),
                holder: holder.to_string(),
                fence: col(&r, "fence")?,
                expires_at: time(&r, "expires_at")?,
            })
        };
        self.write_done(row.and_then(|r| r.map(token).transpose()))
            .await
    }

    /// Extends a lease still held (same holder and fence, not expired); `None` if it was lost.
    pub async fn renew_lease(
        self,
        lease: &LeaseToken,
        ttl: Duration,
        now: DateTime<Utc>,
    ) -> Result<Option<LeaseToken>, StoreError> {
        let row = sqlx::query(
            "UPDATE leases SET expires_at = $4 WHERE campaign = $1 AND holder = $2 AND fence = $3 \
             AND expires_at > $5 RETURNING expires_at",
        )
        .bind(&lease.campaign)
        .bind(&lease.holder)
        .bind(lease.fence)
        .bind(to_millis(now + ttl))
        .bind(to_millis(now))
        .fetch_optional(&self.writer)
        .await
        .map_err(db("renew_lease"));
        let renewed = |r: sqlx::any::AnyRow| -> Result<LeaseToken, StoreError> {
            Ok(LeaseToken {
                expires_at: time(&r, "expires_at")?,
                ..lease.clone()
            })
        };
        self.write_done(row.and_then(|r| r.map(renewed).transpose()))
            .await
    }

    /// Lets another holder take the campaign now. The row stays (expired) to keep the fence.
    pub async fn release_lease(self, lease: &LeaseToken) -> Result<(), StoreError> {
        let done = sqlx::query(
            "UPDATE leases SET expires_at = 0 WHERE campaign = $1 AND holder = $2 AND fence = $3",
        )
        .bind(&lease.campaign)
        .bind(&lease.holder)
        .bind(lease.fence)
        .execute(&self.writer)
        .await
        .map_err(db("release_lease"));
        self.write_done(done).await.map(|_| ())
    }
}

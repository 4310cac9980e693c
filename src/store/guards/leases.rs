//! Campaign leases with fencing: one campaign runs in one place at a time, and a process
//! that lost its lease cannot journal new intents (`begin_intents` checks the fence in its
//! own transaction). The fence grows whenever the holder changes and rows are never deleted,
//! so an old fence is never valid again.
//!
//! A lease also records who holds it ([`HolderIdentity`]: boot id, pid namespace, pid and
//! process start time), so that a process of the same host and pid namespace that finds the
//! holder gone takes the lease over at once ([`Store::take_over_lease`], a compare-and-set on
//! the holder and fence it saw) instead of waiting out the TTL (issue 25, point 2). Whether
//! the holder is gone is decided by `effects::holder`, which reads `/proc`; the journal only
//! keeps what it says.

use chrono::{DateTime, Duration, Utc};

use crate::store::handles::Leases;
use crate::store::rows::{read_row, stored};
use crate::store::{AnyQuery, StoreError};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::records::LeaseToken;

/// Who holds (or asks for) a lease: the holder id, and what tells on this host whether that
/// process still exists. `None` where it could not be read (no `/proc`): then only the TTL
/// frees the lease.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HolderIdentity {
    pub holder: String,
    /// `/proc/sys/kernel/random/boot_id`: the same host, since the same boot.
    pub(crate) boot_id: Option<String>,
    /// `/proc/self/ns/pid` (e.g. `pid:[4026531836]`): pids mean the same process in it.
    pub(crate) pid_ns: Option<String>,
    pub pid: Option<i64>,
    /// The process's start time, in clock ticks since boot (`/proc/PID/stat`, field 22): a
    /// pid reused by another process has another.
    pub(crate) started: Option<i64>,
}

impl HolderIdentity {
    /// Only the holder id, nothing read of the process: the public calls that take a lease
    /// by name alone (tests, tools) record no identity.
    pub(crate) fn named(holder: &str) -> HolderIdentity {
        HolderIdentity {
            holder: holder.to_string(),
            ..HolderIdentity::default()
        }
    }

    /// `query` with what tells this process apart bound next: its boot id, pid namespace,
    /// pid and start time, in the order of a lease row's columns `boot_id`, `pid_ns`, `pid`,
    /// `started`.
    pub(super) fn bind_process<'q>(&'q self, query: AnyQuery<'q>) -> AnyQuery<'q> {
        query
            .bind(self.boot_id.as_deref())
            .bind(self.pid_ns.as_deref())
            .bind(self.pid)
            .bind(self.started)
    }

    /// The identity a lease row (campaign or account) records, in its columns `holder`,
    /// `boot_id`, `pid_ns`, `pid` and `started`.
    pub(super) fn from_row(r: &sqlx::any::AnyRow) -> Result<HolderIdentity, StoreError> {
        Ok(read_row!(
            r,
            HolderIdentity {
                holder,
                boot_id,
                pid_ns,
                pid,
                started,
            }
        ))
    }
}

/// A lease as the journal holds it: who, which fence, until when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseHolder {
    pub identity: HolderIdentity,
    fence: i64,
    pub expires_at: DateTime<Utc>,
}

impl Leases<'_> {
    /// Granted if the lease is free, expired, or already ours (then renewed, same fence).
    pub async fn try_acquire_lease(
        self,
        campaign: &str,
        holder: &str,
        ttl: Duration,
        now: DateTime<Utc>,
    ) -> Result<Option<LeaseToken>, StoreError> {
        self.try_acquire_lease_as(campaign, &HolderIdentity::named(holder), ttl, now)
            .await
    }

    /// [`Self::try_acquire_lease`], recording who `me` is for a later [`Self::take_over_lease`].
    pub(crate) async fn try_acquire_lease_as(
        self,
        campaign: &str,
        me: &HolderIdentity,
        ttl: Duration,
        now: DateTime<Utc>,
    ) -> Result<Option<LeaseToken>, StoreError> {
        let holder = me.holder.as_str();
        let query = sqlx::query(
            "INSERT INTO leases (campaign, holder, fence, expires_at, boot_id, pid_ns, pid, started) \
             VALUES ($1, $2, 1, $3, $5, $6, $7, $8) \
             ON CONFLICT (campaign) DO UPDATE SET \
             fence = CASE WHEN leases.holder = excluded.holder THEN leases.fence ELSE leases.fence + 1 END, \
             holder = excluded.holder, expires_at = excluded.expires_at, boot_id = excluded.boot_id, \
             pid_ns = excluded.pid_ns, pid = excluded.pid, started = excluded.started \
             WHERE leases.holder = excluded.holder OR leases.expires_at <= $4 \
             RETURNING fence, expires_at",
        )
        .bind(campaign)
        .bind(holder)
        .bind(to_millis(now + ttl))
        .bind(to_millis(now));
        let query = me.bind_process(query);
        self.write_optional("try_acquire_lease", query, |r| token(campaign, holder, r))
            .await
    }

    /// Who holds the campaign's lease now, as recorded (expired or not); `None` if no
    /// process ever held it.
    pub async fn lease_holder(self, campaign: &str) -> Result<Option<LeaseHolder>, StoreError> {
        let query = sqlx::query(
            "SELECT holder, fence, expires_at, boot_id, pid_ns, pid, started FROM leases \
             WHERE campaign = $1",
        )
        .bind(campaign);
        let holder = |r: &sqlx::any::AnyRow| -> Result<LeaseHolder, StoreError> {
            Ok(read_row!(
                r,
                LeaseHolder {
                    identity: HolderIdentity::from_row(r)?,
                    fence,
                    expires_at,
                }
            ))
        };
        self.read_optional("lease_holder", query, holder).await
    }

    /// Takes the lease of a holder found gone: granted only if the journal still holds
    /// exactly `gone` (same holder, same fence), so two processes that both found it gone
    /// cannot both take it; the fence grows as for any change of holder, so whatever the
    /// gone holder might still send is refused by `begin_intents`.
    pub(crate) async fn take_over_lease(
        self,
        campaign: &str,
        gone: &LeaseHolder,
        me: &HolderIdentity,
        ttl: Duration,
        now: DateTime<Utc>,
    ) -> Result<Option<LeaseToken>, StoreError> {
        let query = sqlx::query(
            "UPDATE leases SET holder = $3, fence = fence + 1, expires_at = $4, boot_id = $5, \
             pid_ns = $6, pid = $7, started = $8 \
             WHERE campaign = $1 AND holder = $2 AND fence = $9 RETURNING fence, expires_at",
        )
        .bind(campaign)
        .bind(&gone.identity.holder)
        .bind(&me.holder)
        .bind(to_millis(now + ttl));
        let query = me.bind_process(query).bind(gone.fence);
        self.write_optional("take_over_lease", query, |r| token(campaign, &me.holder, r))
            .await
    }

    /// Extends a lease still held (same holder and fence, not expired); `None` if it was lost.
    pub async fn renew_lease(
        self,
        lease: &LeaseToken,
        ttl: Duration,
        now: DateTime<Utc>,
    ) -> Result<Option<LeaseToken>, StoreError> {
        let query = sqlx::query(
            "UPDATE leases SET expires_at = $4 WHERE campaign = $1 AND holder = $2 AND fence = $3 \
             AND expires_at > $5 RETURNING expires_at",
        )
        .bind(&lease.campaign)
        .bind(&lease.holder)
        .bind(lease.fence)
        .bind(to_millis(now + ttl))
        .bind(to_millis(now));
        let renewed = |r: &sqlx::any::AnyRow| -> Result<LeaseToken, StoreError> {
            Ok(LeaseToken {
                expires_at: stored(r, "expires_at")?,
                ..lease.clone()
            })
        };
        self.write_optional("renew_lease", query, renewed).await
    }

    /// Lets go of every lease `holder` still holds; how many. For a process that is exiting
    /// with passes cut off mid-call (the daemon's shutdown grace ran out): their leases would
    /// otherwise block the campaigns for the TTL, or until a process of this host sees the
    /// holder gone. The rows stay (expired) to keep their fences.
    pub(crate) async fn release_leases_of(self, holder: &str) -> Result<u64, StoreError> {
        let change =
            sqlx::query("UPDATE leases SET expires_at = 0 WHERE holder = $1 AND expires_at > 0")
                .bind(holder);
        self.write_one("release_leases_of", change)
            .await
            .map(|r| r.rows_affected())
    }

    /// Lets another holder take the campaign now. The row stays (expired) to keep the fence.
    pub async fn release_lease(self, lease: &LeaseToken) -> Result<(), StoreError> {
        let change = sqlx::query(
            "UPDATE leases SET expires_at = 0 WHERE campaign = $1 AND holder = $2 AND fence = $3",
        )
        .bind(&lease.campaign)
        .bind(&lease.holder)
        .bind(lease.fence);
        self.write_one("release_lease", change).await.map(|_| ())
    }
}

/// The lease `holder` holds of `campaign`, from a row with its `fence` and `expires_at`.
fn token(campaign: &str, holder: &str, r: &sqlx::any::AnyRow) -> Result<LeaseToken, StoreError> {
    Ok(read_row!(
        r,
        LeaseToken {
            campaign: campaign.to_string(),
            holder: holder.to_string(),
            fence,
            expires_at,
        }
    ))
}

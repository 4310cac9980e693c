//! Account leases and the daemons' heartbeats (issue 34, item 2): one daemon works an account
//! at a time, so the account's rate limit holds across replicas. What a daemon takes, keeps
//! and gives back is decided in `decide::division` from what is read here; the writes are
//! compare-and-set on the holder, so two daemons never both hold one account.

use chrono::{DateTime, Duration, Utc};

use crate::store::StoreError;
use crate::store::handles::Leases;
use crate::store::rows::{col, read_row};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::records::AccountLease;

use super::leases::HolderIdentity;

impl Leases<'_> {
    /// Says that `holder` is alive now.
    pub async fn heartbeat(self, holder: &str, now: DateTime<Utc>) -> Result<(), StoreError> {
        let query = sqlx::query(
            "INSERT INTO daemon_heartbeats (holder, seen_at) VALUES ($1, $2) \
             ON CONFLICT (holder) DO UPDATE SET seen_at = excluded.seen_at",
        )
        .bind(holder)
        .bind(to_millis(now));
        self.write_one("heartbeat", query).await.map(|_| ())
    }

    /// How many daemons said they were alive after `since` (heartbeats older than a day are
    /// deleted on the way: a daemon that died long ago leaves no row behind for good).
    pub async fn live_daemons(self, since: DateTime<Utc>) -> Result<usize, StoreError> {
        let stale = sqlx::query("DELETE FROM daemon_heartbeats WHERE seen_at < $1")
            .bind(to_millis(since - Duration::days(1)));
        self.write_one("live_daemons", stale).await?;
        let query = sqlx::query("SELECT COUNT(*) AS n FROM daemon_heartbeats WHERE seen_at > $1")
            .bind(to_millis(since));
        let n: Option<i64> = self
            .read_optional("live_daemons", query, |r| col(r, "n"))
            .await?;
        Ok(usize::try_from(n.unwrap_or(0)).unwrap_or(0))
    }

    /// Every account lease the journal holds, expired ones included.
    pub async fn account_leases(self) -> Result<Vec<AccountLease>, StoreError> {
        let query = sqlx::query("SELECT account, holder, expires_at FROM account_leases");
        self.read_all("account_leases", query, |r| {
            Ok(read_row!(
                r,
                AccountLease {
                    account,
                    holder,
                    expires_at,
                }
            ))
        })
        .await
    }

    /// Takes `account` for `holder` until `now + ttl` if it is free, expired or already
    /// `holder`'s (then renewed); whether `holder` holds it now.
    pub async fn hold_account(
        self,
        account: &str,
        holder: &str,
        ttl: Duration,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        self.hold_account_as(account, &HolderIdentity::named(holder), ttl, now)
            .await
    }

    /// [`Self::hold_account`], recording who `me` is, so that a daemon of this host that finds
    /// this process gone takes its accounts over at once ([`Self::account_holders`]).
    pub(crate) async fn hold_account_as(
        self,
        account: &str,
        me: &HolderIdentity,
        ttl: Duration,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let query = sqlx::query(
            "INSERT INTO account_leases (account, holder, expires_at, boot_id, pid_ns, pid, started) \
             VALUES ($1, $2, $3, $5, $6, $7, $8) \
             ON CONFLICT (account) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at, \
             boot_id = excluded.boot_id, pid_ns = excluded.pid_ns, pid = excluded.pid, started = excluded.started \
             WHERE account_leases.holder = excluded.holder OR account_leases.expires_at <= $4 \
             RETURNING account",
        )
        .bind(account)
        .bind(&me.holder)
        .bind(to_millis(now + ttl))
        .bind(to_millis(now));
        let query = me.bind_process(query);
        let held = self
            .write_optional("hold_account", query, |r| col::<String>(r, "account"))
            .await?;
        Ok(held.is_some())
    }

    /// Who holds an account lease that has not expired, once per holder, with what tells on
    /// this host whether that process still runs.
    pub(crate) async fn account_holders(
        self,
        now: DateTime<Utc>,
    ) -> Result<Vec<HolderIdentity>, StoreError> {
        let query = sqlx::query(
            "SELECT DISTINCT holder, boot_id, pid_ns, pid, started FROM account_leases \
             WHERE expires_at > $1",
        )
        .bind(to_millis(now));
        self.read_all("account_holders", query, HolderIdentity::from_row)
            .await
    }

    /// Gives `account` back if `holder` holds it: another daemon may take it at once.
    pub async fn release_account(self, account: &str, holder: &str) -> Result<(), StoreError> {
        let query = sqlx::query(
            "UPDATE account_leases SET expires_at = 0 WHERE account = $1 AND holder = $2",
        )
        .bind(account)
        .bind(holder);
        self.write_one("release_account", query).await.map(|_| ())
    }

    /// A daemon that stops: its accounts are given back and its heartbeat removed, so the
    /// others take its share at their next look instead of after the lease's time.
    pub async fn leave(self, holder: &str) -> Result<(), StoreError> {
        for sql in [
            "UPDATE account_leases SET expires_at = 0 WHERE holder = $1",
            "DELETE FROM daemon_heartbeats WHERE holder = $1",
        ] {
            self.write_one("leave", sqlx::query(sql).bind(holder))
                .await?;
        }
        Ok(())
    }
}

//! Spending halts: while a halt is set (e.g. the marketplace rejected our credentials),
//! nothing is bought. A halt stops every campaign ([`HaltScope::Global`]) or one. Kept in the
//! database so every replica sees it and a restart does not forget it.

use chrono::{DateTime, Utc};

use super::rows::{col, db, time};
use super::{Store, StoreError};
use crate::clock::to_millis;

pub use crate::domain::halts::{Halt, HaltScope};

impl Store {
    /// Sets or updates the halt's reason; `since` stays the first time it was set.
    pub async fn set_halt(
        &self,
        scope: &HaltScope,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let done = sqlx::query(
            "INSERT INTO halts (scope, reason, since) VALUES ($1, $2, $3) \
             ON CONFLICT (scope) DO UPDATE SET reason = excluded.reason",
        )
        .bind(scope.key())
        .bind(reason)
        .bind(to_millis(now))
        .execute(&self.writer)
        .await
        .map_err(db("set_halt"));
        self.write_done(done).await.map(|_| ())
    }

    pub async fn clear_halt(&self, scope: &HaltScope) -> Result<(), StoreError> {
        let done = sqlx::query("DELETE FROM halts WHERE scope = $1")
            .bind(scope.key())
            .execute(&self.writer)
            .await
            .map_err(db("clear_halt"));
        self.write_done(done).await.map(|_| ())
    }

    /// Every halt in force, the global one first, then by campaign (sorted here, not by the
    /// database, whose collation may place `*` anywhere).
    pub async fn halts(&self) -> Result<Vec<Halt>, StoreError> {
        let rows = sqlx::query("SELECT scope, reason, since FROM halts")
            .fetch_all(&self.pool)
            .await
            .map_err(db("halts"));
        let mut halts: Vec<Halt> = self.done(rows.and_then(|rows| {
            rows.iter()
                .map(|r| {
                    Ok(Halt {
                        scope: HaltScope::from_key(col(r, "scope")?),
                        reason: col(r, "reason")?,
                        since: time(r, "since")?,
                    })
                })
                .collect()
        }))?;
        halts.sort_by(|a, b| a.scope.cmp(&b.scope));
        Ok(halts)
    }
}

//! Spending halts: while a halt is set (e.g. the marketplace rejected our credentials),
//! nothing is bought. Scope `global` or a campaign name. Kept in the database so every
//! replica sees it and a restart does not forget it.

use chrono::{DateTime, Utc};

use super::rows::{col, db, time};
use super::{Store, StoreError};
use crate::clock::to_millis;

impl Store {
    /// Sets or updates the halt's reason; `since` stays the first time it was set.
    pub async fn set_halt(
        &self,
        scope: &str,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let done = sqlx::query(
            "INSERT INTO halts (scope, reason, since) VALUES ($1, $2, $3) \
             ON CONFLICT (scope) DO UPDATE SET reason = excluded.reason",
        )
        .bind(scope)
        .bind(reason)
        .bind(to_millis(now))
        .execute(&self.pool)
        .await
        .map_err(db("set_halt"));
        self.done(done).map(|_| ())
    }

    pub async fn clear_halt(&self, scope: &str) -> Result<(), StoreError> {
        let done = sqlx::query("DELETE FROM halts WHERE scope = $1")
            .bind(scope)
            .execute(&self.pool)
            .await
            .map_err(db("clear_halt"));
        self.done(done).map(|_| ())
    }

    /// Every halt in force: (scope, reason, since), by scope.
    pub async fn halts(&self) -> Result<Vec<(String, String, DateTime<Utc>)>, StoreError> {
        let rows = sqlx::query("SELECT scope, reason, since FROM halts ORDER BY scope")
            .fetch_all(&self.pool)
            .await
            .map_err(db("halts"));
        self.done(rows.and_then(|rows| {
            rows.iter()
                .map(|r| Ok((col(r, "scope")?, col(r, "reason")?, time(r, "since")?)))
                .collect()
        }))
    }
}

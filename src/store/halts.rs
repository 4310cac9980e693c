//! Spending halts: while a halt is set (e.g. the marketplace rejected our credentials),
//! nothing is bought. A halt stops every campaign ([`HaltScope::Global`]) or one. Kept in the
//! database so every replica sees it and a restart does not forget it.

use chrono::{DateTime, Utc};

use super::rows::{col, db, time};
use super::{Store, StoreError};
use crate::clock::to_millis;

/// What a halt stops.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum HaltScope {
    /// Every campaign: the marketplace rejected our credentials.
    Global,
    /// One campaign: something of it waits for an operator.
    Campaign(String),
}

impl HaltScope {
    /// The global scope's key in the `halts` table: `*`, which no campaign name can be (names
    /// are `[a-z0-9][a-z0-9-]*`), so a campaign named `global` has a scope of its own.
    /// Proven by tests/store `a_campaign_named_global_does_not_share_the_credentials_halt`.
    pub const GLOBAL_KEY: &'static str = "*";

    pub fn campaign(name: &str) -> HaltScope {
        HaltScope::Campaign(name.to_string())
    }

    /// Whether a halt of this scope stops `campaign`.
    pub fn covers(&self, campaign: &str) -> bool {
        match self {
            HaltScope::Global => true,
            HaltScope::Campaign(c) => c == campaign,
        }
    }

    fn key(&self) -> &str {
        match self {
            HaltScope::Global => Self::GLOBAL_KEY,
            HaltScope::Campaign(c) => c,
        }
    }

    fn from_key(key: String) -> HaltScope {
        if key == Self::GLOBAL_KEY {
            HaltScope::Global
        } else {
            HaltScope::Campaign(key)
        }
    }
}

/// One halt in force.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Halt {
    pub scope: HaltScope,
    pub reason: String,
    /// When it was first set; updating the reason keeps it.
    pub since: DateTime<Utc>,
}

impl Halt {
    pub fn is_global(&self) -> bool {
        self.scope == HaltScope::Global
    }
}

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

//! Where the journal's schema stands against this linkrunner's migrations, for the commands
//! that only read (`plan`, `status`, `history`, `explain`, `report`): they never migrate
//! (issue 25), so a journal left behind by an older version is reported with the command
//! that upgrades it instead of being changed by a look.

use sqlx::migrate::Migrator;

use super::rows::{col, db};
use super::{Backend, Store, StoreError};

/// The journal's schema, as this version of linkrunner sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SchemaState {
    /// Every migration this version knows is applied, and no other.
    Current,
    /// No schema at all: nothing was ever recorded.
    Empty,
    /// Older: this many of this version's migrations are not applied.
    Behind { missing: usize },
    /// Newer: this many applied migrations are unknown to this version.
    Ahead { unknown: usize },
}

impl Store {
    pub(super) fn migrator(&self) -> Migrator {
        match self.backend {
            Backend::Postgres => sqlx::migrate!("migrations/postgres"),
            Backend::Sqlite => sqlx::migrate!("migrations/sqlite"),
        }
    }

    /// Compares the applied migrations with this version's; changes nothing.
    pub(crate) async fn schema_state(&self) -> Result<SchemaState, StoreError> {
        let exists = match self.backend {
            Backend::Sqlite => {
                "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'"
            }
            Backend::Postgres => {
                "SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = '_sqlx_migrations'"
            }
        };
        let row = sqlx::query(exists).fetch_one(&self.pool).await;
        let n: i64 = self.done(row.map_err(db("schema_state")).and_then(|r| col(&r, "n")))?;
        if n == 0 {
            return Ok(SchemaState::Empty);
        }
        let rows = run!(
            fetch_all,
            &self.pool,
            "schema_state",
            "SELECT version FROM _sqlx_migrations WHERE success = TRUE"
        );
        let applied: Vec<i64> =
            self.done(rows.and_then(|rows| rows.iter().map(|r| col(r, "version")).collect()))?;
        let known: Vec<i64> = self.migrator().iter().map(|m| m.version).collect();
        let unknown = applied.iter().filter(|v| !known.contains(v)).count();
        let missing = known.iter().filter(|v| !applied.contains(v)).count();
        Ok(match (unknown, missing) {
            (0, 0) => SchemaState::Current,
            (0, missing) => SchemaState::Behind { missing },
            (unknown, _) => SchemaState::Ahead { unknown },
        })
    }
}

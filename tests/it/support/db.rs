//! A fresh journal for one test: a SQLite file in a temporary directory, or a PostgreSQL
//! database of its own on the test server, created and migrated here and dropped when the
//! [`TestDb`] goes, even after a panic. The server's admin URL comes from
//! `LINKRUNNER_TEST_DATABASE_URL`, else `DATABASE_URL`, else the local server.
//! [`rounds`] and [`intent_states`] read a journal another process writes, by its URL.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use chrono::{DateTime, Utc};
use linkrunner::store::{LeaseToken, Store};
use sqlx::Connection;

/// The two journal backends every store, engine and kill scenario runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

pub struct TestDb {
    pub url: String,
    pub store: Store,
    dir: Option<tempfile::TempDir>,
    pg: Option<(String, String)>,
}

impl TestDb {
    pub async fn new(backend: Backend) -> TestDb {
        match backend {
            Backend::Sqlite => TestDb::sqlite().await,
            Backend::Postgres => TestDb::postgres().await,
        }
    }

    pub async fn sqlite() -> TestDb {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}/journal.db", dir.path().display());
        let store = open_store(&url).await;
        TestDb {
            url,
            store,
            dir: Some(dir),
            pg: None,
        }
    }

    pub async fn postgres() -> TestDb {
        let admin = admin_url();
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "lr_test_{}_{}_{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::SeqCst),
            chrono::Utc::now().timestamp_micros() % 1_000_000
        );
        let mut conn = sqlx::PgConnection::connect(&admin)
            .await
            .expect("PostgreSQL admin URL reachable");
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut conn)
            .await
            .expect("create test database");
        conn.close().await.ok();
        let mut url = url::Url::parse(&admin).expect("admin URL");
        url.set_path(&name);
        let url = url.to_string();
        let store = open_store(&url).await;
        TestDb {
            url,
            store,
            dir: None,
            pg: Some((admin, name)),
        }
    }

    /// A second, independent pool on the same database: another daemon.
    pub async fn another_store(&self) -> Store {
        Store::connect(&self.url)
            .await
            .expect("second store connects")
    }

    /// The SQLite database file (its `-wal` and `-journal` beside it); `None` on PostgreSQL.
    pub fn sqlite_file(&self) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.path().join("journal.db"))
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some((admin, name)) = self.pg.take() {
            // Runs even when the test panicked; FORCE closes the test's own pools. On a
            // thread of its own: a test's runtime may be shutting down or single-threaded.
            let drop_db = async move {
                if let Ok(mut conn) = sqlx::PgConnection::connect(&admin).await {
                    let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
                    let _ = sqlx::query(sqlx::AssertSqlSafe(sql))
                        .execute(&mut conn)
                        .await;
                }
            };
            let _ = std::thread::spawn(move || {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map(|rt| rt.block_on(drop_db))
            })
            .join();
        }
    }
}

/// The PostgreSQL server the tests create their databases on.
pub fn admin_url() -> String {
    std::env::var("LINKRUNNER_TEST_DATABASE_URL")
        .or_else(|_| std::env::var("DATABASE_URL"))
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_string())
}

/// Connects to `url` and brings the journal's schema up to date.
pub async fn open_store(url: &str) -> Store {
    let store = Store::connect(url).await.expect("store connects");
    store.migrate().await.expect("migrations run");
    store
}

/// Rounds recorded for `campaign`, oldest first: slot, holder that claimed it, state.
/// Empty while the journal does not exist yet.
pub async fn rounds(db_url: &str, campaign: &str) -> Vec<(DateTime<Utc>, String, String)> {
    sqlx::any::install_default_drivers();
    let url = if db_url.starts_with("sqlite:") {
        format!("{db_url}?mode=ro")
    } else {
        db_url.to_string()
    };
    let Ok(mut conn) = sqlx::AnyConnection::connect(&url).await else {
        return Vec::new(); // not created yet
    };
    let rows: Vec<(i64, String, String)> =
        sqlx::query_as("SELECT slot, holder, state FROM rounds WHERE campaign = $1 ORDER BY slot")
            .bind(campaign)
            .fetch_all(&mut conn)
            .await
            .expect("rounds query");
    conn.close().await.ok();
    rows.into_iter()
        .map(|(ms, h, s)| (DateTime::from_timestamp_millis(ms).unwrap(), h, s))
        .collect()
}

/// Intent counts by state for one kind, read straight from the journal (empty while it does
/// not exist yet).
pub async fn intent_states(db_url: &str, kind: &str) -> Vec<(String, i64)> {
    sqlx::any::install_default_drivers();
    let Ok(mut conn) = sqlx::AnyConnection::connect(db_url).await else {
        return Vec::new(); // not created yet
    };
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT state, COUNT(*) FROM intents WHERE kind = $1 GROUP BY state ORDER BY state",
    )
    .bind(kind)
    .fetch_all(&mut conn)
    .await
    .expect("intents query");
    conn.close().await.ok();
    rows
}

/// One `#[tokio::test]` per backend for each `async fn name(db: TestDb)`, in modules
/// `sqlite` and `postgres`: `on_both_backends!(flow::full_flow, budget::caps_hold)` makes
/// `sqlite::full_flow`, `postgres::full_flow`, ... Invoke it where the named modules are
/// children of the invoking module.
macro_rules! on_both_backends {
    ($($module:ident :: $name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let db = $crate::support::db::TestDb::sqlite().await;
                    super::$module::$name(db).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let db = $crate::support::db::TestDb::postgres().await;
                    super::$module::$name(db).await;
                }
            )*
        }
    };
}

/// A five-minute lease of `campaign` granted to `holder` at `at` (after the last one lapsed, a
/// takeover); the test fails when it is not granted.
pub async fn lease_at(
    store: &Store,
    campaign: &str,
    holder: &str,
    at: DateTime<Utc>,
) -> LeaseToken {
    store
        .leases()
        .try_acquire_lease(campaign, holder, chrono::Duration::minutes(5), at)
        .await
        .expect("lease query")
        .expect("lease granted")
}

//! `store/`: the journal. Every changing marketplace call is an intent recorded before it is
//! sent, with its budget reservation, in one transaction; its outcome is recorded with what it
//! implies in another. One API over PostgreSQL and SQLite through sqlx `Any`. [`Store`] hands
//! out one handle per concern (`handles`); the rooms below hold their SQL.
//!
//! - `money/`: caps, the append-only ledger, reservations, the account cap, approvals, the month's sums;
//! - `intents/`: begin with the reservation, settle, resolve, causes and history;
//! - `links/`: held and foreign links, the link list's sync;
//! - `campaigns/`: remote ids, adoption, each campaign's file, stalls, a rename's hand-over;
//! - `rounds/`: buy rounds and their searches;
//! - `guards/`: halts, leases, removals, the anomaly brake's reads, notices;
//! - `batch`: what the journal holds of many campaigns, each table read once (start-up, `plan`);
//! - `handles`: the front doors (`campaigns()`, `intents()`, `links()`, `leases()`, `rounds()`, `reports()`);
//! - `quiet`: the journal's stamp over what a plan reads, and a look's one write (a converged
//!   campaign's reconciliation that only looks);
//! - `schema`: where the schema stands against the migrations (the read-only commands);
//! - `error`: [`StoreError`]; `rows`: reading `Any` rows; `run!` (below): one statement, its
//!   binds and its named error;
//! - `durable`: one shared `fsync` per SQLite write; `writes`: whether the journal can be written;
//! - `faultpoint`: the SIGKILL suite's crash points (the money protocol's boundaries, a
//!   rename's commit), compiled only with the `test-hooks` feature;
//! - `plans` (tests): the reads that grow with a campaign's history use an index.
//!
//! Why runtime-checked queries: sqlx's `query!` checks against one database per crate; one SQL
//! text per query, accepted by both dialects, is checked instead by one test suite run on both
//! backends (`tests/it/store.rs`). Values are limited to what `Any` carries: `i64`, `String`,
//! `Option<_>`; times are Unix milliseconds, money kopecks, booleans 0/1, JSON text.
//!
//! May import: crate::metrics.

/// One write transaction of a [`Store`]: `transaction!(store, op, |tx| { body })` begins it
/// ([`Store::write_tx`]), runs `body` (which ends in `Ok(value)`; `?` inside it returns
/// early, and the dropped transaction rolls back; a `return Ok(…)` ends it as its last
/// line would, so only after reads alone), commits, and passes the result through
/// [`Store::write_done`]. A failure of the begin or the commit is `op`'s. A macro, not a
/// function taking an async closure: the futures of such a closure are generic over the
/// transaction's borrow, and rustc cannot then prove them `Send` for the engine's spawned
/// tasks ("implementation of `Send` is not general enough").
macro_rules! transaction {
    ($store:expr, $op:expr, |$tx:ident| $body:block) => {{
        let op: &'static str = $op;
        let result = async {
            let mut $tx = $store.write_tx(op).await?;
            let value: Result<_, $crate::store::StoreError> = async { $body }.await;
            let value = value?;
            $tx.commit().await.map_err($crate::store::rows::db(op))?;
            Ok(value)
        }
        .await;
        $store.write_done(result).await
    }};
}

/// One statement inside a transaction or on a connection:
/// `run!(execute, &mut *tx, op, "SQL"; a, b)` is
/// `run!(execute, &mut *tx, op, "SQL"; a, b)`, and likewise
/// `fetch_optional`, `fetch_all` and `fetch_one`. The journal's hundred-odd statements share
/// this one shape (binds in the order of the SQL's `$n`, a failure named by its operation);
/// written once, each statement reads as its SQL and its values.
macro_rules! run {
    ($method:ident, $conn:expr, $op:expr, $sql:expr $(; $($arg:expr),* $(,)?)?) => {
        sqlx::query($sql)
            $($(.bind($arg))*)?
            .$method($conn)
            .await
            .map_err($crate::store::rows::db($op))
    };
}

mod batch;
mod campaigns;
mod durable;
pub(crate) mod error;
pub(crate) mod faultpoint;
mod guards;
mod handles;
mod intents;
mod links;
mod money;
#[cfg(test)]
mod plans;
mod quiet;
mod rounds;
mod rows;
mod schema;
mod writes;

use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::{Any, AnyPool, Executor, Transaction};

pub use batch::{BatchRead, CHUNK, CampaignGauges, CampaignJournal, CampaignListFacts};
pub use campaigns::adoption::{AdoptOutcome, AdoptedAutobuyer};
pub(crate) use campaigns::files::CampaignFile;
pub use campaigns::remote::StopSettlement;
pub use campaigns::respell::RespeltUrl;
pub use error::StoreError;
pub(crate) use guards::anomaly::Observed;
pub use guards::halts::{Halt, HaltEvent, HaltKind, HaltScope};
pub use guards::leases::{HolderIdentity, LeaseHolder};
pub(crate) use guards::notices::LostLinks;
pub use intents::causes::{CauseKind, CauseRow, HistoryEntry, IntentCause};
pub use linkrunner_domain::intents::*;
pub use linkrunner_domain::records::*;
pub use links::held::LinkRef;
pub use links::twice::HeldTwiceFinding;
pub use money::account::{AccountBudget, AccountCapSet};
pub use money::month::{DaySum, LedgerSum};
use rows::db;
pub(crate) use schema::SchemaState;
pub(crate) use writes::WriteFault;

use crate::metrics::Metrics;

/// Which database a [`Store`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Postgres,
    Sqlite,
}

/// The journal. Cheap to clone: the pool is shared.
#[derive(Clone)]
pub struct Store {
    /// Reads (and, on PostgreSQL and in-memory SQLite, writes too).
    pool: AnyPool,
    /// Writes. For a SQLite file: one connection of its own, so this process's writers queue
    /// here in order instead of colliding on SQLite's lock and sleeping in its busy handler;
    /// elsewhere the same pool as `pool`.
    writer: AnyPool,
    /// For a SQLite file: makes each write durable with a shared `fsync` (see [`durable`]).
    wal: Option<Arc<durable::WalSync>>,
    backend: Backend,
    /// The URL with its password replaced, for `Debug` and errors.
    shown_url: String,
    metrics: Option<Arc<Metrics>>,
    /// Whether the last write failed, since when and why (`/readyz`, the
    /// `linkrunner_journal_writable` gauge): shared by every clone.
    writes: Arc<writes::WriteHealth>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("backend", &self.backend)
            .field("url", &self.shown_url)
            .finish_non_exhaustive()
    }
}

type Tx = Transaction<'static, Any>;
/// A statement with its values bound, not yet run.
type AnyQuery<'q> = sqlx::query::Query<'q, Any, sqlx::any::AnyArguments>;

impl Store {
    /// The SQLite file of `url` (`None`: PostgreSQL or in memory): a command that only reads
    /// does not create it.
    pub(crate) fn sqlite_file_of(url: &str) -> Option<std::path::PathBuf> {
        url.starts_with("sqlite:")
            .then(|| durable::sqlite_file(url))
            .flatten()
    }

    /// Opens `sqlite://FILE` (created on first use, WAL) or `postgres://...`.
    pub async fn connect(url: &str) -> Result<Store, StoreError> {
        install_default_drivers();
        let shown_url = redact_url(url);
        let connect_err = |source| StoreError::Connect {
            url: shown_url.clone(),
            source,
        };
        let (backend, url) = if url.starts_with("sqlite:") {
            (Backend::Sqlite, sqlite_url(url))
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            (Backend::Postgres, url.to_string())
        } else {
            let source =
                sqlx::Error::Configuration("expected sqlite://FILE or postgres://...".into());
            return Err(connect_err(source));
        };
        let writes = Arc::<writes::WriteHealth>::default();
        let pool = pool_options(backend, &url, &writes, Role::Reads)
            .connect(&url)
            .await
            .map_err(connect_err)?;
        let file = match backend {
            Backend::Sqlite => durable::sqlite_file(&url),
            Backend::Postgres => None,
        };
        let writer = match file {
            Some(_) => pool_options(backend, &url, &writes, Role::Writes)
                .max_connections(1)
                .connect(&url)
                .await
                .map_err(connect_err)?,
            None => pool.clone(),
        };
        Ok(Store {
            pool,
            writer,
            wal: file.map(|f| Arc::new(durable::WalSync::new(f))),
            backend,
            shown_url,
            metrics: None,
            writes,
        })
    }

    /// Brings the schema up to date; safe to run again and from two processes.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        let result = self.migrator().run(&self.pool).await;
        result.map_err(|source| {
            self.count_error();
            StoreError::Migrate { source }
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// One round trip to the database (for readiness).
    pub async fn ping(&self) -> Result<(), StoreError> {
        let result = self.pool.execute("SELECT 1").await;
        self.done(result.map(|_| ()).map_err(db("ping")))
    }

    /// Reports journal latency and database errors to `m` from now on.
    pub fn set_metrics(&mut self, m: Arc<Metrics>) {
        m.journal_writable
            .set(i64::from(self.writes.fault().is_none()));
        self.metrics = Some(m);
    }

    /// Why the journal cannot be written now, as the last write found (`None`: it could).
    pub(crate) fn write_fault(&self) -> Option<WriteFault> {
        self.writes.fault()
    }

    /// Closes the pools; pending operations finish first.
    pub async fn close(&self) {
        self.writer.close().await;
        self.pool.close().await;
    }

    /// `fsync` calls made to make SQLite writes durable (0 on PostgreSQL): the benchmark
    /// prints writes per `fsync`.
    pub fn wal_syncs(&self) -> u64 {
        self.wal.as_ref().map_or(0, |w| w.syncs())
    }

    /// A transaction that will write. SQLite takes the write lock up front (`BEGIN IMMEDIATE`)
    /// so a read-then-write never fails with SQLITE_BUSY halfway; the busy timeout waits instead.
    async fn write_tx(&self, op: &'static str) -> Result<Tx, StoreError> {
        let tx = match self.backend {
            Backend::Sqlite => self.writer.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.writer.begin().await,
        };
        tx.map_err(db(op))
    }

    /// One write statement outside a transaction, through [`Self::write_done`]; a failure is
    /// `op`'s.
    async fn write_one(
        &self,
        op: &'static str,
        query: AnyQuery<'_>,
    ) -> Result<sqlx::any::AnyQueryResult, StoreError> {
        let done = query.execute(&self.writer).await.map_err(db(op));
        self.write_done(done).await
    }

    /// [`Self::write_one`] of a statement that must change a row: `missing()` when it changed
    /// none.
    async fn write_some(
        &self,
        op: &'static str,
        query: AnyQuery<'_>,
        missing: impl FnOnce() -> StoreError,
    ) -> Result<(), StoreError> {
        if self.write_one(op, query).await?.rows_affected() == 0 {
            return Err(missing());
        }
        Ok(())
    }

    /// Counts a failed database operation; every public method passes its result through here.
    fn done<T>(&self, result: Result<T, StoreError>) -> Result<T, StoreError> {
        if let Err(StoreError::Database { .. } | StoreError::Connect { .. }) = &result {
            self.count_error();
        }
        result
    }

    /// [`Self::done`] for a write: once it succeeded, returns only when it is on disk. Keeps
    /// the write health: a database error marks the journal unwritable, a success clears it.
    async fn write_done<T>(&self, result: Result<T, StoreError>) -> Result<T, StoreError> {
        let synced = match result {
            Ok(value) => match &self.wal {
                Some(wal) => wal.after_commit().await.map(|()| value),
                None => Ok(value),
            },
            Err(e) => Err(e),
        };
        let writable = self.writes.observe(&synced);
        if let (Some(m), Some(w)) = (&self.metrics, writable) {
            m.journal_writable.set(i64::from(w));
        }
        self.done(synced)
    }

    fn count_error(&self) {
        if let Some(m) = &self.metrics {
            m.database_errors_total.inc();
        }
    }

    fn observe_write(&self, step: &str, started: Instant) {
        if let Some(m) = &self.metrics {
            m.journal_write_duration_seconds
                .with_label_values(&[step])
                .observe(started.elapsed().as_secs_f64());
        }
    }
}

/// Which of a SQLite file's pools a connection serves (see [`Store::writer`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Reads,
    Writes,
}

/// Readers of a SQLite file at once. Each is a thread of its own with its own page cache,
/// schema and prepared statements, allocated by SQLite through the C allocator (not the
/// binary's jemalloc) in that thread's arena: at 10,000 campaigns each reader held 4-6 MiB
/// resident. Four keep two cores busy (WAL lets them read beside the writer); eight bought
/// no speed and cost about 20 MiB (issue 34, docs/sizing.md#memory).
const SQLITE_READERS: u32 = 4;

/// Each SQLite reader's page cache, 1 MiB (SQLite's default is 2,000 KiB): the operating
/// system caches the file too, so a page a reader drops costs a `pread`, not a disk read. The
/// writer keeps the default: its B-tree pages are the ones every write walks.
const SQLITE_READER_CACHE: &str = "PRAGMA cache_size = -1024";

fn pool_options(
    backend: Backend,
    url: &str,
    writes: &Arc<writes::WriteHealth>,
    role: Role,
) -> AnyPoolOptions {
    // A connection still inside a transaction when it is handed out again is closed instead:
    // after SQLite rolled back a transaction by itself (a full disk, SQLITE_FULL at COMMIT),
    // sqlx's own ROLLBACK fails, its transaction depth stays at 1, and every later `BEGIN` on
    // that connection failed with "begin_with at non-zero transaction depth" until a restart
    // (issue 25). A fresh connection starts clean. Tested by `tests/it` `faults::disk_full`.
    // So is one that existed when a write failed (see `writes.rs`): tested by
    // `faults::sqlite_journal`.
    let writes = writes.clone();
    let base = AnyPoolOptions::new()
        .acquire_timeout(Duration::from_secs(15))
        .before_acquire(move |conn, meta| {
            let stale = writes.predates_last_fault(meta.age);
            Box::pin(async move { Ok(!stale && !sqlx::Connection::is_in_transaction(conn)) })
        });
    match backend {
        // Each connection to `:memory:` is its own database: keep exactly one, forever.
        Backend::Sqlite if url.contains(":memory:") => base
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None),
        // Writers have a pool of their own (see `Store::writer`); these serve readers, which
        // WAL lets run beside the writer.
        Backend::Sqlite => base
            .max_connections(SQLITE_READERS)
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    conn.execute("PRAGMA journal_mode = WAL").await?;
                    if role == Role::Reads {
                        conn.execute(SQLITE_READER_CACHE).await?;
                    }
                    // Durable all the same: every write waits for an `fsync` of the log that
                    // covers it, shared with the writes around it (see `durable.rs`).
                    conn.execute("PRAGMA synchronous = NORMAL").await?;
                    conn.execute("PRAGMA busy_timeout = 15000").await?;
                    conn.execute("PRAGMA foreign_keys = ON").await?;
                    Ok(())
                })
            }),
        // A statement that hangs must not hold row locks (and a campaign's budget) forever;
        // nor may a process that froze (SIGSTOP, a VM pause) inside a transaction: the server
        // ends its session so another daemon can take over the lease. Transactions here never
        // wait on the network, so 15 s idle inside one means the holder is gone. Proven by
        // tests/faults split_brain::a_daemon_frozen_past_its_lease_and_resumed_buys_nothing_twice.
        // NOTICEs (e.g. "relation `_sqlx_migrations` already exists, skipping" at every
        // migration) are not for operators: sqlx would log each at INFO.
        Backend::Postgres => base.max_connections(10).after_connect(|conn, _| {
            Box::pin(async move {
                conn.execute("SET statement_timeout = '30s'").await?;
                conn.execute("SET idle_in_transaction_session_timeout = '15s'")
                    .await?;
                conn.execute("SET client_min_messages = warning").await?;
                Ok(())
            })
        }),
    }
}

/// `sqlite://FILE` opens read-write-create unless the URL chose a mode.
fn sqlite_url(url: &str) -> String {
    if url.contains("mode=") || url.contains(":memory:") {
        url.to_string()
    } else if url.contains('?') {
        format!("{url}&mode=rwc")
    } else {
        format!("{url}?mode=rwc")
    }
}

/// The URL with any password replaced by `***`; unparseable URLs are not shown at all.
pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            if u.password().is_some() {
                let _ = u.set_password(Some("***"));
            }
            u.to_string()
        }
        Err(_) => "<unparseable database URL>".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn debug_of_a_store_never_shows_the_password() {
        install_default_drivers();
        let url = "postgres://app:hunter2@127.0.0.1:1/linkrunner";
        let pool = AnyPoolOptions::new().connect_lazy(url).expect("lazy pool");
        let store = Store {
            writer: pool.clone(),
            wal: None,
            pool,
            backend: Backend::Postgres,
            shown_url: redact_url(url),
            metrics: None,
            writes: Arc::default(),
        };

        let shown = format!("{store:?}");

        assert!(
            !shown.contains("hunter2") && shown.contains("127.0.0.1"),
            "{shown}"
        );
    }

    #[test]
    fn redacted_url_keeps_user_host_and_database_but_not_the_password() {
        let shown = redact_url("postgres://app:s3cret@db.internal:5432/linkrunner");
        assert_eq!(shown, "postgres://app:***@db.internal:5432/linkrunner");
    }

    #[test]
    fn sqlite_url_is_created_on_first_use_unless_a_mode_is_given() {
        assert_eq!(
            sqlite_url("sqlite:///var/lib/lr.db"),
            "sqlite:///var/lib/lr.db?mode=rwc"
        );
        assert_eq!(sqlite_url("sqlite://x.db?mode=ro"), "sqlite://x.db?mode=ro");
    }
}

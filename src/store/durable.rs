//! Durability of SQLite writes, with one `fsync` shared by every write that finished meanwhile.
//!
//! A journaled call is sent only once its intent is on disk (`journal.rs`, step 1), so every
//! write must be durable when its function returns, against a power loss as well as a
//! crash. `PRAGMA synchronous = FULL` gives that with one `fsync` of the write-ahead log per
//! commit: about 3 ms on this project's machines, so a few hundred commits a second, one after
//! another, whatever else is waiting (issue 13 measured the first reconciliation of 10,000
//! campaigns at 50 calls/s, about 14 commits per campaign).
//!
//! Instead, connections run `synchronous = NORMAL` (a commit writes the log, which survives a
//! crash of the process, but does not `fsync` it), and each write then waits here until one
//! `fsync` of the log covers its commit. Writes that finish while an `fsync` runs share the
//! next one, so the disk's latency is paid once per group, not once per write: group commit,
//! the way PostgreSQL flushes its WAL for concurrent committers. A write is reported done
//! only after its commit is on disk, exactly as with `FULL`. Checkpoints copy the log into
//! the database file and `fsync` it before the log is reused (SQLite does so in every mode
//! but `OFF`), so what this synced stays durable.
//!
//! Tested by `tests/it` `store::observe::sqlite_writes_are_synced_before_they_return` (a write
//! is reported only after a sync that covers it) and by this module's unit test (writes that
//! finish during a sync share the next one).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::Mutex;

use super::StoreError;

/// The write-ahead log of one SQLite database file, and how far it is known to be on disk.
#[derive(Debug)]
pub(super) struct WalSync {
    /// `<database>-wal`.
    wal: PathBuf,
    /// Writes committed so far (each counted after its commit returned).
    committed: AtomicU64,
    /// The count of writes the last finished `fsync` covers; held while an `fsync` runs, so
    /// one runs at a time and the writes waiting behind it share the next.
    synced: Mutex<u64>,
    /// `fsync` calls made, for tests and the benchmark.
    syncs: AtomicU64,
}

impl WalSync {
    pub(super) fn new(database: PathBuf) -> WalSync {
        let mut wal = database.into_os_string();
        wal.push("-wal");
        WalSync {
            wal: PathBuf::from(wal),
            committed: AtomicU64::new(0),
            synced: Mutex::new(0),
            syncs: AtomicU64::new(0),
        }
    }

    /// Returns once a write that has just committed is on disk.
    pub(super) async fn after_commit(&self) -> Result<(), StoreError> {
        let mine = self.committed.fetch_add(1, Ordering::SeqCst) + 1;
        let mut synced = self.synced.lock().await;
        if *synced >= mine {
            // An `fsync` that started after this commit already covered it.
            return Ok(());
        }
        // Every write counted up to here committed before this `fsync` starts.
        let covers = self.committed.load(Ordering::SeqCst);
        let wal = self.wal.clone();
        tokio::task::spawn_blocking(move || sync_file(&wal))
            .await
            .map_err(|e| io_error(std::io::Error::other(e)))?
            .map_err(io_error)?;
        self.syncs.fetch_add(1, Ordering::Relaxed);
        *synced = covers;
        Ok(())
    }

    pub(super) fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
    }
}

/// `fsync` of the log. No log file means nothing is pending in it: SQLite removes it only
/// after a checkpoint has put its content into the (synced) database file.
fn sync_file(path: &std::path::Path) -> std::io::Result<()> {
    match std::fs::File::open(path) {
        Ok(f) => f.sync_data(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn io_error(e: std::io::Error) -> StoreError {
    StoreError::Database {
        op: "sync_wal",
        source: sqlx::Error::Io(e),
    }
}

/// The database file of a `sqlite:` URL, or `None` for an in-memory database.
pub(super) fn sqlite_file(url: &str) -> Option<PathBuf> {
    if url.contains(":memory:") || url.contains("mode=memory") {
        return None;
    }
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or(rest);
    (!path.is_empty()).then(|| PathBuf::from(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_of_a_sqlite_url_is_its_path_without_options() {
        assert_eq!(
            sqlite_file("sqlite:///var/lib/lr.db?mode=rwc"),
            Some(PathBuf::from("/var/lib/lr.db"))
        );
        assert_eq!(
            sqlite_file("sqlite://journal.db"),
            Some(PathBuf::from("journal.db"))
        );
        assert_eq!(sqlite_file("sqlite::memory:"), None);
    }

    #[tokio::test]
    async fn writes_that_finish_during_a_sync_share_the_next_one() {
        let dir = std::env::temp_dir().join(format!("lr-walsync-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("j.db");
        std::fs::write(dir.join("j.db-wal"), b"frames").unwrap();
        let w = std::sync::Arc::new(WalSync::new(db));
        let writers: Vec<_> = (0..64)
            .map(|_| {
                let w = w.clone();
                tokio::spawn(async move { w.after_commit().await })
            })
            .collect();
        for t in writers {
            t.await.unwrap().unwrap();
        }
        assert_eq!(*w.synced.lock().await, 64, "every write is covered");
        assert!(w.syncs() >= 1 && w.syncs() < 64, "syncs {}", w.syncs());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

//! Issue 25, point 3: the SQLite journal faults besides a full disk (`disk_full.rs`), each
//! real and in the middle of buy rounds:
//!
//! - locked: another process holds an exclusive lock (the `sqlite3` shell in `BEGIN
//!   EXCLUSIVE`, as an operator's inspection or a backup tool would);
//! - read-only: the database file and its WAL made immutable (`chattr +i`: the tests run as
//!   root, whom mode bits do not stop; writes through the daemon's open descriptors fail).
//!
//! Every write fails cleanly, `/readyz` answers 503 with the reason and
//! `linkrunner_journal_writable` is 0, nothing changing is sent meanwhile; once the fault is
//! gone the daemon recovers by itself, and the ledger shows nothing bought twice or lost.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use super::support::*;
use crate::support::init_logs;

/// A `sqlite3` process holding `BEGIN EXCLUSIVE` on a database until released.
struct Locker {
    child: Child,
    stdin: ChildStdin,
}

impl Locker {
    fn lock(db: &Path) -> Locker {
        let mut child = Command::new("sqlite3")
            .arg(db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("this test needs the sqlite3 shell");
        let mut stdin = child.stdin.take().expect("stdin");
        // The shell waits for the daemon's own writes to end, then holds the lock.
        writeln!(stdin, ".timeout 30000\nBEGIN EXCLUSIVE;\nSELECT 'locked';").expect("lock asked");
        let mut said = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut said)
            .expect("the shell answers");
        assert_eq!(said.trim(), "locked", "the lock was taken");
        Locker { child, stdin }
    }

    fn release(mut self) {
        writeln!(self.stdin, "COMMIT;\n.quit").expect("release");
        drop(self.stdin);
        let status = self.child.wait().expect("the shell exits");
        assert!(status.success(), "{status}");
    }
}

/// A fault put on the journal file and taken off again.
trait Fault: Send + 'static {
    fn put(db: &Path) -> Self;
    fn take_off(self);
}

impl Fault for Locker {
    fn put(db: &Path) -> Self {
        Locker::lock(db)
    }
    fn take_off(self) {
        self.release()
    }
}

/// The database file and its WAL immutable: every write to them fails, even root's.
struct ReadOnly(Vec<std::path::PathBuf>);

fn chattr(flag: &str, files: &[std::path::PathBuf]) {
    let out = Command::new("chattr")
        .arg(flag)
        .args(files)
        .output()
        .expect("chattr runs");
    crate::support::binary::assert_success(
        &out,
        "this test needs chattr on an ext4-like filesystem, as root",
    );
}

impl Fault for ReadOnly {
    fn put(db: &Path) -> Self {
        let wal = db.with_extension("db-wal");
        let files: Vec<_> = [db.to_path_buf(), wal]
            .into_iter()
            .filter(|f| f.exists())
            .collect();
        chattr("+i", &files);
        ReadOnly(files)
    }
    fn take_off(self) {
        chattr("-i", &self.0);
    }
}

impl Drop for ReadOnly {
    /// A failed test must leave no file its temporary directory cannot remove.
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").args(&self.0).output();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_sqlite_journal_fails_cleanly_and_recovers_by_itself() {
    journal_fault::<Locker>("locked").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_sqlite_journal_fails_cleanly_and_recovers_by_itself() {
    journal_fault::<ReadOnly>("").await;
}

/// The daemon meets fault `F` on its journal; `/readyz` shows `reason` while it lasts.
async fn journal_fault<F: Fault>(reason: &str) {
    // Arrange: the daemon buying every second on an SQLite journal.
    init_logs();
    let dir = tempfile::tempdir().expect("journal dir");
    let file = dir.path().join("journal.db");
    let db_url = format!("sqlite://{}", file.display());
    let (_canary, sandbox, _campaigns, d) = buying_in_process(&db_url, "0 9 * * *").await;

    // Act: the fault.
    let path = file.clone();
    let fault = tokio::task::spawn_blocking(move || F::put(&path))
        .await
        .expect("the fault is on");

    // Assert: not ready, with the reason (after SQLite's busy timeout); the gauge says so;
    // nothing changing is sent.
    let body = readyz_says_not_writable(&d, Duration::from_secs(60)).await;
    assert!(body.contains(reason), "the reason is shown: {body}");
    assert_writable_gauge(&d, 0).await;
    assert_no_changing_call_sent(
        &sandbox,
        "a changing call was sent while the journal could not be written",
    )
    .await;
    assert!(d.is_running(), "the daemon exited on the fault");

    // Act: the fault is taken off.
    tokio::task::spawn_blocking(move || fault.take_off())
        .await
        .expect("the fault is off");
    let released_at = chrono::Utc::now();

    // Assert: ready again and buying, by itself; nothing bought twice or lost.
    assert_sqlite_recovers(d, &sandbox, released_at, Duration::from_secs(30)).await;
}

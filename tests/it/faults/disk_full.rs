//! Issue 25, point 3: the SQLite journal's filesystem fills up in the middle of buy rounds. A
//! real full filesystem: a small tmpfs mounted for the test, filled with a file. Every write
//! fails cleanly, `/readyz` answers 503 with the reason and `linkrunner_journal_writable` is
//! 0, nothing changing is sent meanwhile; once space returns the daemon recovers by itself
//! (before the fix, sqlx's transaction depth stayed at 1 on the writer connection and every
//! pass failed with "begin_with at non-zero transaction depth" until a restart), and the
//! ledger shows nothing bought twice or lost.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::support::*;
use crate::support::init_logs;

/// A tmpfs of `size` mounted on a fresh directory, unmounted when dropped.
struct SmallFs {
    dir: tempfile::TempDir,
}

impl SmallFs {
    fn mount(size: &str) -> SmallFs {
        let dir = tempfile::tempdir().expect("mount point");
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .expect("mount runs");
        crate::support::binary::assert_success(
            &out,
            "this test needs to mount a small tmpfs (root with CAP_SYS_ADMIN, as on the \
             project's machines and CI)",
        );
        SmallFs { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file until the filesystem is full; returns it.
    fn fill(&self) -> PathBuf {
        let filler = self.path().join("filler");
        let mut f = std::fs::File::create(&filler).expect("filler");
        let chunk = vec![0u8; 64 * 1024];
        while f.write_all(&chunk).is_ok() {}
        let _ = f.sync_all();
        filler
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_under_the_sqlite_journal_fails_cleanly_and_recovers_by_itself() {
    // Arrange: the daemon buying every second, its journal on a 16 MiB filesystem.
    init_logs();
    let fs = SmallFs::mount("16m");
    let db_url = format!("sqlite://{}", fs.path().join("journal.db").display());
    let (_canary, sandbox, _dir, d) = buying_in_process(&db_url, "0 9 * * *").await;

    // Act: the filesystem fills up.
    let filler = fs.fill();

    // Assert: not ready, with the reason; the gauge says so; nothing changing is sent.
    let body = readyz_says_not_writable(&d, Duration::from_secs(30)).await;
    assert!(body.contains("full"), "the reason is shown: {body}");
    assert_writable_gauge(&d, 0).await;
    assert_no_changing_call_sent(
        &sandbox,
        "a changing call was sent while the journal could not be written",
    )
    .await;
    assert!(d.is_running(), "the daemon exited on a full disk");

    // Act: space returns.
    std::fs::remove_file(&filler).expect("filler removed");
    let recovered_at = chrono::Utc::now();

    // Assert: ready again and buying, by itself; nothing bought twice or lost.
    assert_sqlite_recovers(d, &sandbox, recovered_at, Duration::from_secs(10)).await;
}

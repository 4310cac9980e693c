//! Removals as decisions (issue 32), with the real binary: campaign files that vanish all at
//! once (an empty checkout, a failed mount) or more than half within the window stop nothing
//! until they return or an operator's `resolve removals`; one file removed among many is
//! still removed at once. Asserted on the sandbox's ledger (autobuyers' states), the
//! `linkrunner_removals_held` gauge, `/readyz` and the journal.

use std::path::Path;
use std::time::Duration;

use linkrunner_sandbox::{AutobuyerState, SandboxHandle};
use sqlx::Connection;

use super::support::{command_on, run_binary, start_sandbox, with_autobuyer, with_autobuyers};
use crate::support::binary;
use crate::support::campaigns;
use crate::support::db::TestDb;
use crate::support::http::get;
use crate::support::http::series;
use crate::support::wait::PATIENCE;
use crate::support::wait::within;

/// How long a removal that is not held takes at most to stop its autobuyer here (well under
/// it: the reconciler takes a removed campaign at once): a held one is watched this long.
const WATCH: Duration = Duration::from_secs(5);

const SHOPS: [&str; 4] = ["rm-a", "rm-b", "rm-c", "rm-d"];

/// The four campaigns' directory, an empty one to move files aside into, a journal, the
/// sandbox, and `linkrunner run` on them once every autobuyer runs.
async fn four_running() -> (
    tempfile::TempDir,
    tempfile::TempDir,
    TestDb,
    SandboxHandle,
    binary::Daemon,
) {
    crate::support::init_logs();
    let dir = with_autobuyers(&SHOPS);
    let aside = tempfile::tempdir().unwrap();
    let journal = TestDb::sqlite().await;
    let sandbox = start_sandbox(0).await;
    let mut daemon = run_binary(&journal.url, dir.path(), &sandbox, &[]).await;
    daemon.ready().await;
    all_running(&sandbox, &SHOPS).await;
    (dir, aside, journal, sandbox, daemon)
}

/// Each shop's autobuyer state on the marketplace.
fn autobuyers(sandbox: &SandboxHandle) -> Vec<(String, AutobuyerState)> {
    let ledger = sandbox.ledger();
    let mut all: Vec<(String, AutobuyerState)> = ledger
        .autobuyers
        .iter()
        .map(|a| (a.name.clone(), a.state))
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

fn running(sandbox: &SandboxHandle, shop: &str) -> bool {
    autobuyers(sandbox)
        .iter()
        .any(|(n, s)| *n == format!("{shop}-auto") && *s == AutobuyerState::Running)
}

async fn all_running(sandbox: &SandboxHandle, shops: &[&str]) {
    within(PATIENCE * 2, "every autobuyer runs", || async {
        shops.iter().all(|s| running(sandbox, s)).then_some(())
    })
    .await;
}

/// Moves `shops`' files out of `dir` into `aside`.
fn take_away(dir: &Path, aside: &Path, shops: &[&str]) {
    for s in shops {
        let f = format!("{s}.yaml");
        std::fs::rename(dir.join(&f), aside.join(&f)).expect("move the file aside");
    }
}

/// SIGHUP, and waits until the daemon counted one more successful reload.
async fn reload(daemon: &binary::Daemon) {
    let reloads = r#"linkrunner_reloads_total{outcome="succeeded"}"#;
    let before = series(&daemon.metrics_body().await, reloads).unwrap_or(0.0);
    daemon.signal("HUP");
    within(PATIENCE, "the reload is counted", || async {
        (series(&daemon.metrics_body().await, reloads).unwrap_or(0.0) > before).then_some(())
    })
    .await;
}

async fn held_gauge(daemon: &binary::Daemon) -> Option<f64> {
    series(&daemon.metrics_body().await, "linkrunner_removals_held")
}

async fn gauge_is(daemon: &binary::Daemon, want: f64, what: &str) {
    within(PATIENCE, what, || async {
        (held_gauge(daemon).await == Some(want)).then_some(())
    })
    .await;
}

/// `/readyz`'s removals detail.
async fn readyz_removals(daemon: &binary::Daemon) -> String {
    let (_, body) = get(&format!("http://{}/readyz", daemon.addr)).await;
    let v: serde_json::Value = serde_json::from_str(&body).expect("readyz JSON");
    v["removals"]["detail"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The journal's removal rows: campaign, state, who resolved it.
async fn removal_rows(db_url: &str) -> Vec<(String, String, Option<String>)> {
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(db_url).await.expect("journal");
    let rows = sqlx::query_as(
        "SELECT campaign, state, resolved_by FROM campaign_removals ORDER BY campaign",
    )
    .fetch_all(&mut conn)
    .await
    .expect("campaign_removals");
    conn.close().await.ok();
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_emptied_campaign_directory_stops_no_autobuyer_and_the_files_return_resumes() {
    // Arrange: four campaigns, each with a running autobuyer.
    let (dir, aside, journal, sandbox, daemon) = four_running().await;
    let before = autobuyers(&sandbox);

    // Act: every file vanishes (a failed checkout).
    take_away(dir.path(), aside.path(), &SHOPS);
    reload(&daemon).await;

    // Assert: nothing stopped while watched; held, and said so.
    tokio::time::sleep(WATCH).await;
    assert_eq!(
        autobuyers(&sandbox),
        before,
        "a held removal stopped nothing"
    );
    gauge_is(&daemon, 4.0, "the hold of four removals is on /metrics").await;
    readyz_says(&daemon, "every campaign file is gone").await;
    let rows = removal_rows(&journal.url).await;
    assert!(
        rows.len() == 4 && rows.iter().all(|r| r.1 == "held"),
        "{rows:?}"
    );

    // Act: the files return.
    take_away(aside.path(), dir.path(), &SHOPS);
    daemon.signal("HUP");

    // Assert: the hold is over, the journal forgets it, everything still runs.
    gauge_is(&daemon, 0.0, "the hold is lifted").await;
    assert_eq!(readyz_removals(&daemon).await, "none held");
    assert!(removal_rows(&journal.url).await.is_empty());
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(autobuyers(&sandbox), before);
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_removal_proceeds_more_than_half_within_the_window_hold_until_resolve_removals() {
    // Arrange
    let (dir, aside, journal, sandbox, daemon) = four_running().await;

    // Act: one file of four is removed.
    take_away(dir.path(), aside.path(), &["rm-a"]);
    daemon.signal("HUP");

    // Assert: removed as always: its autobuyer stops; no hold.
    within(PATIENCE, "rm-a's autobuyer stops", || async {
        (!running(&sandbox, "rm-a")).then_some(())
    })
    .await;
    assert_eq!(held_gauge(&daemon).await, Some(0.0));

    // Act: two more vanish within the window: three of four in ten minutes.
    take_away(dir.path(), aside.path(), &["rm-b", "rm-c"]);
    reload(&daemon).await;

    // Assert: their autobuyers run on; held, and said so.
    tokio::time::sleep(WATCH).await;
    assert!(running(&sandbox, "rm-b") && running(&sandbox, "rm-c"));
    assert!(running(&sandbox, "rm-d"));
    gauge_is(&daemon, 2.0, "the two later removals are held").await;
    readyz_says(&daemon, "3 of 4 campaign files vanished").await;

    // Act: the operator's word, from another process.
    let mut resolve = command_on(&journal.url, dir.path(), &sandbox);
    resolve.args([
        "resolve",
        "removals",
        "--reason",
        "rm-b and rm-c were retired",
        "--by",
        "ann",
    ]);
    let out = binary::tokio(resolve).output().await.expect("resolve runs");
    assert!(out.status.success(), "{out:?}");

    // Assert: the daemon honours it: both stop; rm-d still runs; the journal says who.
    within(PATIENCE, "rm-b's and rm-c's autobuyers stop", || async {
        (!running(&sandbox, "rm-b") && !running(&sandbox, "rm-c")).then_some(())
    })
    .await;
    gauge_is(&daemon, 0.0, "the hold is lifted").await;
    assert!(running(&sandbox, "rm-d"));
    let rows = removal_rows(&journal.url).await;
    let resolved: Vec<&str> = rows
        .iter()
        .filter(|r| r.1 == "resolved" && r.2.as_deref() == Some("ann"))
        .map(|r| r.0.as_str())
        .collect();
    assert_eq!(resolved, ["rm-b", "rm-c"], "{rows:?}");
    daemon.stop().await;
}

/// `linkrunner once` on `dir`: its exit code and stdout.
async fn once(journal: &str, dir: &Path, sandbox: &SandboxHandle) -> (Option<i32>, String) {
    let mut cmd = command_on(journal, dir, sandbox);
    cmd.arg("once");
    let out = binary::tokio(cmd).output().await.expect("once runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_on_an_empty_directory_exits_non_zero_and_stops_nothing() {
    // Arrange: `once` made two campaigns and started their autobuyers.
    crate::support::init_logs();
    let dir = tempfile::tempdir().unwrap();
    for s in &SHOPS[..2] {
        campaigns::write(
            dir.path(),
            &format!("{s}.yaml"),
            &with_autobuyer(s, "0 9 * * *"),
        );
    }
    let journal = TestDb::sqlite().await;
    let sandbox = start_sandbox(0).await;
    let (code, out) = once(&journal.url, dir.path(), &sandbox).await;
    assert_eq!(code, Some(0), "{out}");
    all_running(&sandbox, &SHOPS[..2]).await;
    let before = autobuyers(&sandbox);

    // Act: the directory is empty.
    let empty = tempfile::tempdir().unwrap();
    let (code, out) = once(&journal.url, empty.path(), &sandbox).await;

    // Assert: non-zero, each campaign reported held, nothing stopped.
    assert_eq!(code, Some(1), "{out}");
    assert!(
        SHOPS[..2]
            .iter()
            .all(|s| out.contains(&format!("{s}: removal_held"))),
        "{out}"
    );
    assert_eq!(autobuyers(&sandbox), before);

    // Act: the operator says the removals are meant; `once` again.
    let mut resolve = command_on(&journal.url, empty.path(), &sandbox);
    resolve.args(["resolve", "removals", "--reason", "both retired"]);
    let r = binary::tokio(resolve).output().await.expect("resolve runs");
    assert!(r.status.success(), "{r:?}");
    let (_, out) = once(&journal.url, empty.path(), &sandbox).await;

    // Assert: now they are removed: both autobuyers stopped.
    assert!(!out.contains(": removal_held"), "{out}");
    assert!(
        SHOPS[..2].iter().all(|s| !running(&sandbox, s)),
        "{:?}",
        autobuyers(&sandbox)
    );
}

/// `/readyz`'s word on removals says `what`.
async fn readyz_says(daemon: &binary::Daemon, what: &str) {
    let said = readyz_removals(daemon).await;
    assert!(said.contains(what), "{said}");
}

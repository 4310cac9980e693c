//! Signals to the real binary: SIGHUP reloads; SIGTERM in the middle of a buy round lets the
//! purchase in flight finish and be recorded, then exits 0 within the grace period.

use std::time::Duration;

use linkrunner_sandbox::SandboxHandle;

use super::support::{run_binary, start_sandbox};
use crate::support::campaigns;
use crate::support::db::TestDb;
use crate::support::db::intent_states;
use crate::support::http::series;
use crate::support::wait::PATIENCE;
use crate::support::wait::within;

/// A campaign directory holding one campaign, `name`, a fresh SQLite journal, and a sandbox
/// taking `latency_ms` over every call.
async fn one_campaign(name: &str, latency_ms: u64) -> (tempfile::TempDir, TestDb, SandboxHandle) {
    crate::support::init_logs();
    let yaml = campaigns::simple(name, "0 9 * * *", 5000);
    let campaigns = campaigns::dir_with(&[("a.yaml", &yaml)]);
    (
        campaigns,
        TestDb::sqlite().await,
        start_sandbox(latency_ms).await,
    )
}

/// Waits (30 s at most) until a purchase is in flight in the journal at `db`.
async fn until_a_purchase_is_in_flight(db: &str) {
    within(Duration::from_secs(30), "a purchase is in flight", || {
        purchase_in_flight(db)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_reloads_the_campaign_directory() {
    // Arrange
    let (campaigns, journal, sandbox) = one_campaign("hup-shop", 0).await;
    let mut daemon = run_binary(&journal.url, campaigns.path(), &sandbox, &[]).await;
    daemon.ready().await;
    let reloads = r#"linkrunner_reloads_total{outcome="succeeded"}"#;
    assert_eq!(series(&daemon.metrics_body().await, reloads), Some(1.0));

    // Act: SIGHUP with no file changed, so the watcher has nothing to report.
    daemon.signal("HUP");

    // Assert
    within(
        Duration::from_secs(5),
        "SIGHUP counted a second reload",
        || async { (series(&daemon.metrics_body().await, reloads) == Some(2.0)).then_some(()) },
    )
    .await;
    // SIGTERM, and a clean exit within the patience.
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_a_purchase_lets_it_finish_and_exits_0_within_the_grace() {
    // Arrange: every marketplace call takes 800 ms, so a purchase is in flight long enough
    // to be caught.
    let (campaigns, journal, sandbox) = one_campaign("term-shop", 800).await;
    let db = &journal.url;
    let grace = Duration::from_secs(10);
    let mut daemon = run_binary(
        db,
        campaigns.path(),
        &sandbox,
        &["--round-every", "1", "--shutdown-grace", "10"],
    )
    .await;
    until_a_purchase_is_in_flight(db).await;

    // Act
    daemon.signal("TERM");
    let status = daemon.exit_within(grace).await;

    // Assert: a clean exit in time; nothing left in flight or uncertain; the journal and
    // the marketplace agree on what was bought.
    let status = status.expect("linkrunner run exits within the shutdown grace");
    assert!(status.success(), "{status}");
    let (succeeded, states) = settled_purchases(db).await;
    let ledger = sandbox.ledger();
    assert!(succeeded > 0, "{states:?}");
    assert_eq!(ledger.purchases.len() as i64, succeeded);
    assert_eq!(ledger.duplicate_purchases, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purchase_cut_off_by_a_zero_grace_is_settled_by_the_next_start() {
    // Arrange: as above, but no grace at all, and short leases so a restart need not wait
    // long for the stopped process's lease to expire.
    let (campaigns, journal, sandbox) = one_campaign("cut-shop", 800).await;
    let db = &journal.url;
    let args = [
        "--round-every",
        "1",
        "--shutdown-grace",
        "0",
        "--lease-ttl",
        "5",
    ];
    let mut daemon = run_binary(db, campaigns.path(), &sandbox, &args).await;
    until_a_purchase_is_in_flight(db).await;
    daemon.signal("TERM");
    let status = daemon.exit_within(Duration::from_secs(5)).await;
    let status = status.expect("exits at once with no grace");
    assert!(status.success(), "{status}");
    let forced = intent_states(db, "purchase").await;
    assert!(forced.iter().any(|(s, _)| s == "in_flight"), "{forced:?}");

    // Act: start again, on a quick marketplace.
    sandbox.set_faults(Default::default()).unwrap();
    let daemon = run_binary(
        db,
        campaigns.path(),
        &sandbox,
        &["--round-every", "1", "--lease-ttl", "5"],
    )
    .await;
    within(PATIENCE, "the cut-off purchase is settled", || async {
        let states = intent_states(db, "purchase").await;
        states
            .iter()
            .all(|(s, _)| s != "in_flight" && s != "uncertain")
            .then_some(())
    })
    .await;
    // SIGTERM, and a clean exit within the patience.
    daemon.stop().await;

    // Assert: the journal and the marketplace agree; nothing was bought twice.
    let (succeeded, states) = settled_purchases(db).await;
    let ledger = sandbox.ledger();
    assert_eq!(ledger.purchases.len() as i64, succeeded, "{states:?}");
    assert_eq!(ledger.duplicate_purchases, 0);
}

/// Asserts that no purchase is left in flight or uncertain; returns how many succeeded, and
/// the counts by state for a failure message.
async fn settled_purchases(db: &str) -> (i64, Vec<(String, i64)>) {
    let states = intent_states(db, "purchase").await;
    assert!(
        states
            .iter()
            .all(|(s, _)| s != "in_flight" && s != "uncertain"),
        "{states:?}"
    );
    let succeeded = states
        .iter()
        .find(|(s, _)| s == "succeeded")
        .map_or(0, |(_, n)| *n);
    (succeeded, states)
}

/// For `within`: `Some` once a purchase intent is in flight.
async fn purchase_in_flight(db: &str) -> Option<()> {
    intent_states(db, "purchase")
        .await
        .iter()
        .any(|(state, n)| state == "in_flight" && *n > 0)
        .then_some(())
}

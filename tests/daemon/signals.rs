//! Signals to the real binary: SIGHUP reloads; SIGTERM in the middle of a buy round lets the
//! purchase in flight finish and be recorded, then exits 0 within the grace period.

use std::time::Duration;

use crate::support::{
    Binary, PATIENCE, campaign_yaml, eventually, intent_states, series, sqlite_url, start_sandbox,
    write,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_reloads_the_campaign_directory() {
    // Arrange
    crate::support::init_logs();
    let dir = tempfile::tempdir().unwrap();
    let campaigns = dir.path().join("campaigns");
    std::fs::create_dir(&campaigns).unwrap();
    write(
        &campaigns,
        "a.yaml",
        &campaign_yaml("hup-shop", "0 9 * * *", 5000),
    );
    let sandbox = start_sandbox(0).await;
    let mut daemon = Binary::run(&sqlite_url(dir.path()), &campaigns, &sandbox, &[]).await;
    daemon.ready().await;
    let reloads = r#"linkrunner_reloads_total{outcome="succeeded"}"#;
    assert_eq!(series(&daemon.metrics_body().await, reloads), Some(1.0));

    // Act: SIGHUP with no file changed, so the watcher has nothing to report.
    daemon.signal("HUP");

    // Assert
    eventually(
        "SIGHUP counted a second reload",
        Duration::from_secs(5),
        || async { (series(&daemon.metrics_body().await, reloads) == Some(2.0)).then_some(()) },
    )
    .await;
    daemon.signal("TERM");
    let status = daemon
        .exit_within(PATIENCE)
        .await
        .expect("exits after SIGTERM");
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_a_purchase_lets_it_finish_and_exits_0_within_the_grace() {
    // Arrange: every marketplace call takes 800 ms, so a purchase is in flight long enough
    // to be caught.
    crate::support::init_logs();
    let dir = tempfile::tempdir().unwrap();
    let campaigns = dir.path().join("campaigns");
    std::fs::create_dir(&campaigns).unwrap();
    write(
        &campaigns,
        "a.yaml",
        &campaign_yaml("term-shop", "0 9 * * *", 5000),
    );
    let sandbox = start_sandbox(800).await;
    let db = sqlite_url(dir.path());
    let grace = Duration::from_secs(10);
    let mut daemon = Binary::run(
        &db,
        &campaigns,
        &sandbox,
        &["--round-every", "1", "--shutdown-grace", "10"],
    )
    .await;
    eventually(
        "a purchase is in flight",
        Duration::from_secs(30),
        || async {
            intent_states(&db, "purchase")
                .await
                .iter()
                .any(|(state, n)| state == "in_flight" && *n > 0)
                .then_some(())
        },
    )
    .await;

    // Act
    daemon.signal("TERM");
    let status = daemon.exit_within(grace).await;

    // Assert: a clean exit in time; nothing left in flight or uncertain; the journal and
    // the marketplace agree on what was bought.
    let status = status.expect("linkrunner run exits within the shutdown grace");
    assert!(status.success(), "{status}");
    let states = intent_states(&db, "purchase").await;
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
    let ledger = sandbox.ledger();
    assert!(succeeded > 0, "{states:?}");
    assert_eq!(ledger.purchases.len() as i64, succeeded);
    assert_eq!(ledger.duplicate_purchases, 0);
}

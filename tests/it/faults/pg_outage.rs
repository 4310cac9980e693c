//! PostgreSQL goes away in the middle of buy rounds: stopped, restarted, its connections
//! killed. The daemon stays up, says it is not ready, sends nothing that changes anything
//! while the journal is unreachable, and the money invariants hold afterwards.

use std::time::Duration;

use super::support::*;
use crate::support::app::InProcess;
use crate::support::http::http_get;
use crate::support::init_logs;
use crate::support::pg_cluster::PgCluster;
use crate::support::sandbox;
use crate::support::wait::within;

async fn readyz(d: &InProcess) -> Option<u16> {
    http_get(d.addr, "/readyz").await.map(|(s, _)| s)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_outage_mid_round_stops_spending_and_recovers_within_the_caps() {
    init_logs();
    let pg = PgCluster::start();
    let canary = Canary::new();
    let sandbox = sandbox::start(sandbox_config(&canary)).await;
    let dir = campaign_dir("0 9 * * *");
    let d = in_process(&pg.url(), &sandbox.base_url(), &canary, dir.path()).await;
    first_purchase(&sandbox).await;

    pg.pg_ctl_stop("immediate");
    within(
        Duration::from_secs(5),
        "/readyz 503 after the stop",
        || async { (readyz(&d).await == Some(503)).then_some(()) },
    )
    .await;
    // Calls sent before the stop may still be answered; after that, none may start.
    assert_no_changing_call_sent(
        &sandbox,
        "a changing call started while the journal was unreachable",
    )
    .await;
    assert!(d.is_running(), "the daemon exited during the outage");
    assert_eq!(http_get(d.addr, "/healthz").await.map(|r| r.0), Some(200));

    pg.pg_ctl_start();
    within(
        Duration::from_secs(5),
        "/readyz 200 after the restart",
        || async { (readyz(&d).await == Some(200)).then_some(()) },
    )
    .await;
    for _ in 0..5 {
        pg.terminate_backends().await;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    within(
        Duration::from_secs(5),
        "/readyz 200 after killed connections",
        || async { (readyz(&d).await == Some(200)).then_some(()) },
    )
    .await;
    let recovered_at = chrono::Utc::now();
    within(
        Duration::from_secs(60),
        "a successful round after recovery, all settled",
        || settled_round_after(&d.store, recovered_at),
    )
    .await;

    let store = d.store.clone();
    d.stop().await;
    assert_ledger_invariants(&sandbox.ledger(), &store).await;
}

//! `/readyz` follows the journal database: 503 while PostgreSQL is down, 200 once it is back,
//! and the daemon stays up (`/healthz` 200) throughout.

use std::time::Duration;

use super::support::{World, at};
use crate::support::http::get;
use crate::support::pg_cluster::PgCluster;
use crate::support::wait::within;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_is_503_while_postgres_is_down_and_200_when_it_returns() {
    // Arrange: a daemon whose journal is on a cluster we can stop.
    let world = World::new(at(9, 0, 30)).await;
    let cluster = tokio::task::spawn_blocking(PgCluster::start).await.unwrap();
    let daemon = world.start_on(&cluster.url()).await;
    let (readyz, healthz) = (
        format!("{}/readyz", daemon.base),
        format!("{}/healthz", daemon.base),
    );
    within(Duration::from_secs(10), "ready at first", || async {
        (get(&readyz).await.0 == 200).then_some(())
    })
    .await;

    // Act: PostgreSQL stops.
    let cluster = tokio::task::spawn_blocking(move || {
        cluster.pg_ctl_stop("fast");
        cluster
    })
    .await
    .unwrap();

    // Assert: not ready within 5 s, naming the database; alive all along.
    let body = within(
        Duration::from_secs(5),
        "503 within 5 s of the stop",
        || async {
            assert_eq!(
                get(&healthz).await.0,
                200,
                "/healthz failed while PostgreSQL was down"
            );
            let (status, body) = get(&readyz).await;
            (status == 503).then_some(body)
        },
    )
    .await;
    let report: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(report["database"]["ready"], false, "{report}");
    assert_eq!(report["ready"], false, "{report}");

    // Act: PostgreSQL returns.
    let cluster = tokio::task::spawn_blocking(move || {
        cluster.pg_ctl_start();
        cluster
    })
    .await
    .unwrap();

    // Assert: ready again within 5 s, the same daemon still running.
    within(
        Duration::from_secs(5),
        "200 within 5 s of the restart",
        || async {
            assert_eq!(get(&healthz).await.0, 200);
            (get(&readyz).await.0 == 200).then_some(())
        },
    )
    .await;
    assert!(daemon.is_running());
    daemon.stop().await;
    drop(cluster);
}

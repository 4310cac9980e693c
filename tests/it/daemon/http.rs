//! The HTTP endpoint of a running daemon: routes, methods and the status API.

use reqwest::Method;

use super::support::{Daemon, World, at};
use crate::support::campaigns;
use crate::support::http::get;
use crate::support::http::request;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_paths_are_404_and_other_methods_405() {
    // Arrange
    let world = World::new(at(9, 0, 30)).await;
    let daemon = world.start().await;
    let base = &daemon.base;

    // Act
    let unknown = get(&format!("{base}/nope")).await.0;
    let post_metrics = request(Method::POST, &format!("{base}/metrics")).await.0;
    let delete_campaigns = request(Method::DELETE, &format!("{base}/api/v1/campaigns"))
        .await
        .0;
    let healthz = get(&format!("{base}/healthz")).await.0;

    // Assert
    assert_eq!(unknown, 404);
    assert_eq!(post_metrics, 405);
    assert_eq!(delete_campaigns, 405);
    assert_eq!(healthz, 200);
    daemon.stop().await;
}

/// The daemon on campaign `known-shop`, once its start reconciliation is done.
async fn known_shop_reconciled() -> (World, Daemon) {
    let world = World::new(at(9, 0, 30)).await;
    world.write(
        "known.yaml",
        &campaigns::simple("known-shop", "0 9 * * *", 4000),
    );
    let daemon = world.start_reconciled().await;
    (world, daemon)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_api_answers_404_for_an_unknown_campaign_and_the_facts_for_a_known_one() {
    // Arrange: a campaign whose project the start reconciliation creates.
    let (world, daemon) = known_shop_reconciled().await;
    let base = daemon.base.clone();
    let (status, body) = get(&format!("{base}/api/v1/campaigns/known-shop")).await;
    assert_eq!(status, 200, "{body}");
    let facts: serde_json::Value = serde_json::from_str(&body).unwrap();

    // Act
    let unknown = get(&format!("{base}/api/v1/campaigns/no-such-shop")).await;
    let list = get(&format!("{base}/api/v1/campaigns")).await;

    // Assert
    assert_eq!(unknown.0, 404, "{}", unknown.1);
    assert_eq!(facts["campaign"], "known-shop");
    assert_eq!(facts["monthly_cap"], "4000", "{facts}");
    assert_eq!(facts["urls"], 1, "{facts}");
    assert_eq!(facts["texts"], 2, "{facts}");
    assert!(
        facts["uncertain"].as_array().is_some_and(|u| u.is_empty()),
        "{facts}"
    );
    let project = world.sandbox.ledger().projects[0].id;
    assert_eq!(facts["project_id"], project);
    assert_eq!(list.0, 200);
    let listed: serde_json::Value = serde_json::from_str(&list.1).unwrap();
    assert_eq!(listed[0]["campaign"], "known-shop");
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn intents_follow_the_journal_within_seconds_of_a_pass_not_the_reconcile_interval() {
    // Arrange: a fresh journal; the start reconciliation creates the project (an intent).
    // The reconcile interval of this world is an hour: the gauge must not wait for it.
    let (world, daemon) = known_shop_reconciled().await;
    let recorded = crate::support::db::intent_states(&world.db_url, "create_project").await;
    let succeeded = recorded
        .iter()
        .find(|(s, _)| s == "succeeded")
        .map(|(_, n)| *n as f64);
    assert_eq!(succeeded, Some(1.0), "{recorded:?}");
    let series = r#"linkrunner_intents{kind="create_project",state="succeeded"}"#;

    // Act: scrape for at most five seconds.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut seen = None;
    while std::time::Instant::now() < deadline {
        let body = get(&format!("{}/metrics", daemon.base)).await.1;
        seen = crate::support::http::series(&body, series);
        if seen == succeeded {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }

    // Assert
    assert_eq!(seen, succeeded, "{series} does not follow the journal");
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_carry_the_standard_process_series_from_the_first_scrape() {
    let world = World::new(at(9, 0, 30)).await;
    let daemon = world.start().await;

    let body = get(&format!("{}/metrics", daemon.base)).await.1;

    let value = |name: &str| {
        crate::support::http::series(&body, name).unwrap_or_else(|| panic!("no {name}"))
    };
    assert!(value("process_resident_memory_bytes") > 1e6, "{body}");
    assert!(value("process_virtual_memory_bytes") >= value("process_resident_memory_bytes"));
    assert!(value("process_cpu_seconds_total") > 0.0);
    assert!(value("process_open_fds") >= 3.0);
    assert!(value("process_max_fds") >= value("process_open_fds"));
    assert!(value("process_threads") >= 1.0);
    let now = chrono::Utc::now().timestamp() as f64;
    let started = value("process_start_time_seconds");
    assert!(
        started <= now + 1.0 && started > now - 86_400.0,
        "{started} vs {now}"
    );
    assert!(
        body.contains("# TYPE process_cpu_seconds_total counter"),
        "{body}"
    );
    daemon.stop().await;
}

//! The HTTP endpoint of a running daemon: routes, methods and the status API.

use reqwest::Method;

use linkrunner::daemon::run::Event;

use super::support::{World, at, campaign_yaml, get, request};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_api_answers_404_for_an_unknown_campaign_and_the_facts_for_a_known_one() {
    // Arrange: a campaign whose project the start reconciliation creates.
    let world = World::new(at(9, 0, 30)).await;
    world.write(
        "known.yaml",
        &campaign_yaml("known-shop", "0 9 * * *", 4000),
    );
    let mut daemon = world.start().await;
    daemon
        .next_event(|e| matches!(e, Event::Reconciled(_)).then_some(()))
        .await;
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

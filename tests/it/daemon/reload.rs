//! Reloads: a file that becomes invalid is reported and its last good version keeps running;
//! a Kubernetes ConfigMap update (a `..data` symlink swapped to a new directory) is picked up.

use std::os::unix::fs::symlink;

use linkrunner::daemon::run::Event;

use super::support::{PATIENCE, World, at, campaign_yaml, get, rounds, series, within};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_becomes_invalid_is_reported_and_its_last_good_version_keeps_buying() {
    // Arrange: two campaigns, past their 09:00 baseline.
    let world = World::new(at(9, 0, 30)).await;
    world.write("a.yaml", &campaign_yaml("shop-a", "*/10 * * * *", 5000));
    world.write("b.yaml", &campaign_yaml("shop-b", "*/10 * * * *", 5000));
    let mut daemon = world.start().await;
    for name in ["shop-a", "shop-b"] {
        within(PATIENCE, "both baselines are recorded", || async {
            (!rounds(&world.db_url, name).await.is_empty()).then_some(())
        })
        .await;
    }

    // Act: shop-a's file gets a budget that is not a number.
    let broken =
        campaign_yaml("shop-a", "*/10 * * * *", 5000).replace("monthly: 5000", "monthly: lots");
    world.write("a.yaml", &broken);
    let summary = daemon
        .next_event(|e| match e {
            Event::Reloaded(s) if !s.problems.is_empty() => Some(s.clone()),
            _ => None,
        })
        .await;

    // Assert: reported in the reload and in metrics; the last good version is kept.
    assert!(
        summary.problems.iter().all(|p| p.path.ends_with("a.yaml")),
        "{:?}",
        summary.problems
    );
    assert!(summary.kept_last_good.iter().any(|p| p.ends_with("a.yaml")));
    assert_eq!(summary.loaded, 2);
    let body = daemon.metrics_body().await;
    assert_eq!(
        series(&body, r#"linkrunner_reloads_total{outcome="failed"}"#),
        Some(1.0),
        "{body}"
    );
    assert_eq!(
        series(&body, "linkrunner_campaign_files_rejected"),
        Some(1.0)
    );
    assert_eq!(series(&body, "linkrunner_campaigns_loaded"), Some(2.0));

    // Act: the next slot comes.
    world.clock.set(at(9, 10, 30));
    let mut bought = std::collections::BTreeMap::new();
    while bought.len() < 2 {
        let (campaign, n) = daemon
            .next_event(|e| match e {
                Event::Round { report, .. } => Some((report.campaign.clone(), report.bought)),
                _ => None,
            })
            .await;
        bought.insert(campaign, n);
    }

    // Assert: both campaigns bought, shop-a on its last good version.
    assert!(bought["shop-a"] > 0, "{bought:?}");
    assert!(bought["shop-b"] > 0, "{bought:?}");
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configmap_symlink_swap_is_picked_up_by_the_watcher() {
    // Arrange: the layout kubelet writes — files are links through `..data` into a
    // timestamped directory.
    let world = World::new(at(9, 0, 30)).await;
    let dir = world.campaigns();
    let v1 = dir.join("..2026_11_22_09_00_00.1");
    std::fs::create_dir(&v1).unwrap();
    std::fs::write(
        v1.join("shop-k.yaml"),
        campaign_yaml("shop-k", "0 9 * * *", 4000),
    )
    .unwrap();
    symlink("..2026_11_22_09_00_00.1", dir.join("..data")).unwrap();
    symlink("..data/shop-k.yaml", dir.join("shop-k.yaml")).unwrap();
    let mut daemon = world.start().await;
    daemon
        .next_event(|e| matches!(e, Event::Reconciled(_)).then_some(()))
        .await;
    let status = format!("{}/api/v1/campaigns/shop-k", daemon.base);
    assert!(get(&status).await.1.contains(r#""monthly_cap":"4000""#));

    // Act: kubelet's update — a new directory, a new `..data` link renamed over the old one.
    let v2 = dir.join("..2026_11_22_09_05_00.2");
    std::fs::create_dir(&v2).unwrap();
    std::fs::write(
        v2.join("shop-k.yaml"),
        campaign_yaml("shop-k", "0 9 * * *", 4500),
    )
    .unwrap();
    symlink("..2026_11_22_09_05_00.2", dir.join("..data_tmp")).unwrap();
    std::fs::rename(dir.join("..data_tmp"), dir.join("..data")).unwrap();
    std::fs::remove_dir_all(&v1).unwrap();

    // Assert: the new version is loaded and reconciled.
    daemon
        .next_event(|e| match e {
            Event::Reloaded(s) if s.changed.iter().any(|c| c == "shop-k") => Some(()),
            _ => None,
        })
        .await;
    within(PATIENCE, "the new cap is in the journal", || async {
        get(&status)
            .await
            .1
            .contains(r#""monthly_cap":"4500""#)
            .then_some(())
    })
    .await;
    daemon.stop().await;
}

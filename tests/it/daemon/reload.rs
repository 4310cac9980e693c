//! Reloads: a file that becomes invalid while the daemon runs holds its campaign as recorded
//! (no stop, no buy) until it is fixed; a Kubernetes ConfigMap update (a `..data` symlink
//! swapped to a new directory) is picked up.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::time::Duration;

use linkrunner::daemon::run::Event;
use linkrunner_sandbox::{AutobuyerState, Ledger};

use super::support::{World, at, with_autobuyer};
use crate::support::campaigns;
use crate::support::db::rounds;
use crate::support::http::get;
use crate::support::http::series;
use crate::support::wait::PATIENCE;
use crate::support::wait::within;

/// What the marketplace holds of `name`: links bought by purchase calls, and its autobuyers.
fn on_the_market(ledger: &Ledger, name: &str) -> (usize, Vec<(String, AutobuyerState)>) {
    let domain = format!("https://{name}.example");
    let projects: Vec<i64> = ledger
        .projects
        .iter()
        .filter(|p| p.domain.trim_end_matches('/') == domain)
        .map(|p| p.id)
        .collect();
    let bought = ledger
        .purchases
        .iter()
        .filter(|p| p.autobuyer_id.is_none() && projects.contains(&p.project_id))
        .count();
    let autobuyers = ledger
        .autobuyers
        .iter()
        .filter(|a| a.name.starts_with(name))
        .map(|a| (a.name.clone(), a.state))
        .collect();
    (bought, autobuyers)
}

/// Every way an operator's edit can break a file, as (what, how): `None` is unreadable.
fn breakages(good: &str) -> Vec<(&'static str, Option<String>)> {
    vec![
        (
            "a type error",
            Some(good.replace("monthly: 5000", "monthly: lots")),
        ),
        ("an unknown key", Some(format!("{good}colour: red\n"))),
        (
            "a YAML syntax error",
            Some(good.replacen("name: shop-a\n", "name: [shop-a\n", 1)),
        ),
        ("an empty file", Some(String::new())),
        ("an unreadable file", None),
    ]
}

/// Breaks `path`: new text, or mode 000 — and for a process that reads it all the same
/// (root), a directory in its place, which cannot be read as a file either.
fn break_file(path: &std::path::Path, how: &Option<String>, good: &str) {
    match how {
        Some(text) => std::fs::write(path, text).expect("write the broken file"),
        None => {
            std::fs::write(path, good).expect("write");
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o000))
                .expect("chmod 000");
            if std::fs::read(path).is_ok() {
                std::fs::remove_file(path).expect("remove");
                std::fs::create_dir(path).expect("a directory in its place");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_becomes_invalid_holds_its_campaign_until_it_is_fixed() {
    // Arrange: two campaigns buying every ten minutes, shop-a with a running autobuyer;
    // both bought in a round.
    let world = World::new(at(9, 0, 30)).await;
    let good = with_autobuyer("shop-a", "*/10 * * * *");
    world.write("a.yaml", &good);
    world.write("b.yaml", &campaigns::simple("shop-b", "*/10 * * * *", 5000));
    let mut daemon = world.start().await;
    for name in ["shop-a", "shop-b"] {
        within(PATIENCE, "both baselines are recorded", || async {
            (!rounds(&world.db_url, name).await.is_empty()).then_some(())
        })
        .await;
    }
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
    assert!(bought.values().all(|n| *n > 0), "both bought: {bought:?}");
    within(PATIENCE, "shop-a's autobuyer runs", || async {
        let (_, autobuyers) = on_the_market(&world.sandbox.ledger(), "shop-a");
        (autobuyers == [("shop-a-auto".to_string(), AutobuyerState::Running)]).then_some(())
    })
    .await;
    let a = world.campaigns().join("a.yaml");

    for (slot, (what, how)) in (2..).zip(breakages(&good)) {
        let before = on_the_market(&world.sandbox.ledger(), "shop-a");

        // Act: shop-a's file breaks; then its next slot comes.
        break_file(&a, &how, &good);
        let summary = daemon
            .next_event(|e| match e {
                Event::Reloaded(s) if !s.problems.is_empty() => Some(s.clone()),
                _ => None,
            })
            .await;
        let body = daemon.metrics_body().await;
        let minutes = 9 * 60 + slot * 10;
        world.clock.set(at(minutes / 60, minutes % 60, 30));
        let mut a_rounds = Vec::new();
        daemon
            .next_event(|e| match e {
                Event::Round { report, .. } if report.campaign == "shop-b" => Some(()),
                Event::Round { report, .. } => {
                    a_rounds.push(report.clone());
                    None
                }
                _ => None,
            })
            .await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        a_rounds.extend(daemon.drain_events().into_iter().filter_map(|e| match e {
            Event::Round { report, .. } => Some(report),
            _ => None,
        }));

        // Assert: reported and held — no round, nothing bought, its autobuyer not stopped.
        assert!(
            summary.held.iter().any(|p| p.ends_with("a.yaml")),
            "{what}: {summary:?}"
        );
        assert!(summary.removed.is_empty(), "{what}: {summary:?}");
        assert_eq!(summary.loaded, 1, "{what}");
        assert_eq!(
            series(&body, "linkrunner_campaign_file_invalid"),
            Some(1.0),
            "{what}"
        );
        assert!(
            a_rounds.is_empty(),
            "{what}: shop-a ran a round: {a_rounds:?}"
        );
        assert_eq!(
            on_the_market(&world.sandbox.ledger(), "shop-a"),
            before,
            "{what}"
        );

        // Act: the file is fixed.
        if a.is_dir() {
            std::fs::remove_dir(&a).expect("remove the directory");
        }
        let _ = std::fs::remove_file(&a);
        world.write("a.yaml", &good);

        // Assert: it resumes — the slot it was held through is bought.
        daemon
            .next_event(|e| match e {
                Event::Reloaded(s) if s.changed.iter().any(|c| c == "shop-a") => Some(()),
                _ => None,
            })
            .await;
        let (_, bought) = daemon.next_round("shop-a").await;
        assert!(bought > 0, "{what}: shop-a buys again once fixed");
        let body = daemon.metrics_body().await;
        assert_eq!(
            series(&body, "linkrunner_campaign_file_invalid"),
            Some(0.0),
            "{what}"
        );
    }
    let (bought, autobuyers) = on_the_market(&world.sandbox.ledger(), "shop-a");
    assert!(
        bought > 0
            && autobuyers
                .iter()
                .all(|(_, s)| *s == AutobuyerState::Running)
    );
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configmap_symlink_swap_is_picked_up_by_the_watcher() {
    // Arrange: the layout kubelet writes — files are links through `..data` into a
    // timestamped directory.
    let world = World::new(at(9, 0, 30)).await;
    let dir = world.campaigns();
    let v1 = shop_k_version(&dir, "..2026_11_22_09_00_00.1", 4000);
    symlink("..2026_11_22_09_00_00.1", dir.join("..data")).unwrap();
    symlink("..data/shop-k.yaml", dir.join("shop-k.yaml")).unwrap();
    let mut daemon = world.start_reconciled().await;
    let status = format!("{}/api/v1/campaigns/shop-k", daemon.base);
    assert!(get(&status).await.1.contains(r#""monthly_cap":"4000""#));

    // Act: kubelet's update — a new directory, a new `..data` link renamed over the old one.
    shop_k_version(&dir, "..2026_11_22_09_05_00.2", 4500);
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

/// A ConfigMap-style version directory `name` in `dir` holding shop-k at `monthly` RUB.
fn shop_k_version(dir: &std::path::Path, name: &str, monthly: u32) -> std::path::PathBuf {
    let version = dir.join(name);
    std::fs::create_dir(&version).unwrap();
    let yaml = campaigns::simple("shop-k", "0 9 * * *", monthly);
    std::fs::write(version.join("shop-k.yaml"), yaml).unwrap();
    version
}

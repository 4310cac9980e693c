//! Issue 25, point 0: a campaign file that exists but fails validation is not a removal. For
//! every kind of invalid file, `once` and `plan` (the real binary) keep the campaign exactly
//! as recorded — its running autobuyer is not stopped, nothing is bought for it — say so, and
//! exit 1; `run` started on such a file holds the campaign too and sets
//! `linkrunner_campaign_file_invalid`. Asserted on the sandbox's ledger.

use std::os::unix::fs::PermissionsExt;

use linkrunner_sandbox::{AutobuyerState, Ledger};

use super::binary::{run, text};
use super::fixtures::{ACME, BOLT};
use super::support::{TICKET, TOKEN, TestDb, World};
use crate::support::binary::{self, Daemon, Target};
use crate::support::campaigns;

/// Every way an operator's edit can break a file, as (what, how).
fn breakages() -> Vec<(&'static str, Breakage)> {
    vec![
        (
            "a type error",
            Breakage::Text(ACME.replace("monthly: 3000", "monthly: lots")),
        ),
        (
            "an unknown key",
            Breakage::Text(ACME.replace("paused: false", "paused: false\ncolour: red")),
        ),
        (
            "a YAML syntax error",
            Breakage::Text(ACME.replace("name: acme-shoes", "name: [acme-shoes")),
        ),
        ("an empty file", Breakage::Text(String::new())),
        ("an unreadable file", Breakage::Unreadable),
    ]
}

enum Breakage {
    Text(String),
    /// Mode 000; a process that reads it all the same (root) finds a directory in its place,
    /// which cannot be read as a file either.
    Unreadable,
}

fn break_file(w: &World, how: &Breakage) {
    let path = w.dir.path().join("acme-shoes.yaml");
    match how {
        Breakage::Text(t) => std::fs::write(&path, t).expect("write the broken file"),
        Breakage::Unreadable => {
            std::fs::write(&path, ACME).expect("write");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000))
                .expect("chmod 000");
            if std::fs::read(&path).is_ok() {
                std::fs::remove_file(&path).expect("remove");
                std::fs::create_dir(&path).expect("a directory in its place");
            }
        }
    }
}

fn restore_file(w: &World) {
    let path = w.dir.path().join("acme-shoes.yaml");
    if path.is_dir() {
        std::fs::remove_dir(&path).expect("remove the directory");
    }
    let _ = std::fs::remove_file(&path);
    w.write_campaign("acme-shoes", ACME);
}

/// What the marketplace holds for acme-shoes: its purchases, and its autobuyers' states.
fn acme_on_the_market(w: &World, ledger: &Ledger) -> (usize, Vec<(String, AutobuyerState)>) {
    let projects = w.projects_of(ledger, &campaigns::load_one(ACME));
    let bought = ledger
        .purchases
        .iter()
        .filter(|p| projects.contains(&p.project_id))
        .count();
    let autobuyers = ledger
        .autobuyers
        .iter()
        .filter(|a| a.name.starts_with("acme"))
        .map(|a| (a.name.clone(), a.state))
        .collect();
    (bought, autobuyers)
}

pub async fn an_invalid_file_keeps_its_campaign_as_recorded_in_once_and_plan(db: TestDb) {
    // Arrange: acme-shoes (buy rounds, a running autobuyer) and bolt-bikes, converged.
    let w = World::bought_and_converged(db, &[("acme-shoes", ACME), ("bolt-bikes", BOLT)]).await;
    let before = acme_on_the_market(&w, &w.ledger());
    assert!(
        before
            .1
            .iter()
            .any(|(n, s)| n == "acme-auto" && *s == AutobuyerState::Running),
        "{before:?}"
    );

    for (what, how) in breakages() {
        // Act: the file breaks; `plan`, then `once`.
        break_file(&w, &how);
        let plan = run(&w, &["plan"]).await;
        let once = run(&w, &["once"]).await;
        restore_file(&w);

        // Assert: both exit 1, name the file and keep the campaign; nothing of it moved.
        assert_eq!(plan.status.code(), Some(1), "{what}: {}", text(&plan));
        let shown = String::from_utf8_lossy(&plan.stdout);
        assert!(!shown.contains("campaign file removed"), "{what}: {shown}");
        assert!(shown.contains("fails validation"), "{what}: {shown}");
        assert_eq!(once.status.code(), Some(1), "{what}: {}", text(&once));
        let said = String::from_utf8_lossy(&once.stdout);
        assert!(said.contains("acme-shoes: file_invalid"), "{what}: {said}");
        assert!(
            String::from_utf8_lossy(&once.stderr).contains("acme-shoes.yaml"),
            "{what}: {}",
            text(&once)
        );
        assert_eq!(acme_on_the_market(&w, &w.ledger()), before, "{what}");
        let recorded = w.recorded("acme-shoes").await;
        assert!(
            recorded.ids.autobuyers.values().all(|a| a.running),
            "{what}: the journal still has its autobuyer running"
        );
    }

    // And once the file is fixed, the campaign is what it was: nothing to do.
    let once = run(&w, &["once"]).await;
    assert!(
        String::from_utf8_lossy(&once.stdout).contains("acme-shoes: converged"),
        "{}",
        text(&once)
    );
    w.assert_invariants().await;
}

pub async fn run_started_on_an_invalid_file_holds_its_campaign_as_recorded(db: TestDb) {
    // Arrange: acme-shoes converged, then its file broken beyond showing its name.
    let w = World::bought_and_converged(db, &[("acme-shoes", ACME), ("bolt-bikes", BOLT)]).await;
    let before = acme_on_the_market(&w, &w.ledger());
    break_file(&w, &Breakage::Text("name: [acme-shoes".into()));

    // Act: the daemon starts; its first reconciliation covers every recorded campaign.
    let cmd = binary::command_on(&Target {
        db_url: &w.db.url,
        campaigns: w.dir.path(),
        market: &w.sandbox.base_url(),
        token: TOKEN,
        ticket: TICKET,
    });
    let mut daemon = Daemon::run(cmd, &[]).await;
    daemon.ready().await;
    let gauge = daemon.metrics_body().await;
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;

    // Assert: the file is said to be ignored; nothing of acme-shoes moved.
    assert!(
        gauge.contains("linkrunner_campaign_file_invalid 1"),
        "{gauge}"
    );
    assert_eq!(acme_on_the_market(&w, &w.ledger()), before);
    let (_, stderr) = daemon.stop().await;
    let recorded = w.recorded("acme-shoes").await;
    assert!(
        recorded.ids.autobuyers.values().all(|a| a.running),
        "{}",
        String::from_utf8_lossy(&stderr)
    );
}

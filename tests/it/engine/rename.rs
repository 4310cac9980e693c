//! Issue 32 item 2: renames are edits. A campaign that bought links, renamed with
//! `renamed_from` (the real binary's `plan` and `once`, then a buy round), creates no second
//! project, stops and starts no autobuyer, buys no page again, and keeps spending under its
//! new name. Asserted on the sandbox's ledger.

use std::collections::HashSet;

use linkrunner_sandbox::{Ledger, Op};

use super::binary::{run, text};
use super::fixtures::ACME;
use super::support::{TestDb, World, requests_total, sandbox_config};

/// `acme-shoes` renamed to `acme-x`, with or without `renamed_from`.
fn renamed(with_key: bool) -> String {
    let key = if with_key {
        "\nrenamed_from: acme-shoes"
    } else {
        ""
    };
    ACME.replace("name: acme-shoes", &format!("name: acme-x{key}"))
}

/// Pages bought per promoted URL (by its text: a second project has other URL ids).
fn pages_per_url(ledger: &Ledger) -> Vec<(String, i64)> {
    let url = |id: i64| {
        ledger
            .urls
            .iter()
            .find(|u| u.id == id)
            .map(|u| u.url.clone())
            .unwrap_or_default()
    };
    let mut v: Vec<(String, i64)> = ledger
        .purchases
        .iter()
        .map(|p| (url(p.url_id), p.page_id))
        .collect();
    v.sort();
    v
}

fn switches(ledger: &Ledger) -> (u64, u64, u64) {
    (
        requests_total(ledger, Op::CreateAutobuyer),
        requests_total(ledger, Op::StopAutobuyers),
        requests_total(ledger, Op::StartAutobuyers),
    )
}

pub async fn a_campaign_renamed_with_renamed_from_keeps_its_project_autobuyers_and_pages(
    db: TestDb,
) {
    // Arrange: acme-shoes bought its first round and runs its autobuyer.
    let w = World::new(db, sandbox_config()).await;
    w.write_campaign("acme-shoes", ACME);
    w.pass(true).await;
    w.converge(3).await;
    let before = w.ledger();
    assert_eq!(before.projects.len(), 1);
    assert!(!before.purchases.is_empty(), "the first round bought");
    let project = before.projects[0].id;

    // Act: the file is renamed, with `renamed_from`; `plan`, then `once` (a buy round).
    w.remove_campaign("acme-shoes");
    w.write_campaign("acme-x", &renamed(true));
    let plan = run(&w, &["plan"]).await;
    let plan_md = run(&w, &["plan", "--format", "markdown"]).await;
    let once = run(&w, &["once"]).await;

    // Assert: `plan` says what carries over, and neither creates nor removes anything.
    let shown = String::from_utf8_lossy(&plan.stdout);
    let links = before.purchases.len();
    let line = format!("rename acme-shoes → acme-x (project {project} and its ");
    assert!(shown.contains(&line), "{}", text(&plan));
    assert!(!shown.contains("campaign file removed"), "{shown}");
    assert!(!shown.contains("create the project"), "{shown}");
    assert!(
        String::from_utf8_lossy(&plan_md.stdout).contains(&line),
        "{}",
        text(&plan_md)
    );
    assert!(once.status.success(), "{}", text(&once));
    let after = w.ledger();
    assert_eq!(
        after.projects.len(),
        1,
        "no second project: {:?}",
        after.projects
    );
    assert_eq!(
        switches(&after),
        switches(&before),
        "no autobuyer created, stopped or started"
    );
    let pages = pages_per_url(&after);
    let unique: HashSet<&(String, i64)> = pages.iter().collect();
    assert_eq!(unique.len(), pages.len(), "a page bought again: {pages:?}");
    assert!(
        after.purchases.len() > links,
        "spending continues under the new name: {} → {}",
        links,
        after.purchases.len()
    );
    assert!(after.purchases.iter().all(|p| p.project_id == project));
    assert_eq!(
        w.store()
            .campaigns()
            .recorded_among(&["acme-shoes", "acme-x"])
            .await
            .unwrap(),
        ["acme-x"]
    );

    // A later pass with the key still in the file changes nothing more.
    let again = run(&w, &["once"]).await;
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(w.ledger().projects.len(), 1);
    assert_eq!(switches(&w.ledger()), switches(&before));
}

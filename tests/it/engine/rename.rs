//! Issue 32 item 2: renames are edits. A campaign that bought links, renamed with
//! `renamed_from` (the real binary's `plan` and `once`, then a buy round), creates no second
//! project, stops and starts no autobuyer, buys no page again, and keeps spending under its
//! new name. Asserted on the sandbox's ledger.

use std::collections::HashSet;

use linkrunner_sandbox::{Ledger, Op};

use super::binary::{run, text};
use super::fixtures::ACME;
use super::support::{TestDb, World, assert_no_new_spending};
use crate::support::ledger;

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
        ledger::requests(ledger, Op::CreateAutobuyer),
        ledger::requests(ledger, Op::StopAutobuyers),
        ledger::requests(ledger, Op::StartAutobuyers),
    )
}

pub async fn a_campaign_renamed_with_renamed_from_keeps_its_project_autobuyers_and_pages(
    db: TestDb,
) {
    // Arrange: acme-shoes bought its first round and runs its autobuyer.
    let w = World::bought_and_converged(db, &[("acme-shoes", ACME)]).await;
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
    let after = ledger_with_one_project(&w);
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

pub async fn a_rename_waits_while_another_process_holds_the_old_names_lease(db: TestDb) {
    // Arrange: acme-shoes converged; another process holds its lease for five minutes.
    let w = World::bought_and_converged(db, &[("acme-shoes", ACME)]).await;
    let before = w.ledger();
    let now = chrono::Utc::now();
    let other = w
        .store()
        .leases()
        .try_acquire_lease("acme-shoes", "daemon-b", chrono::Duration::minutes(5), now)
        .await
        .unwrap()
        .expect("the lease is free");

    // Act: renamed with the key while the lease is held; then after it is released.
    w.remove_campaign("acme-shoes");
    w.write_campaign("acme-x", &renamed(true));
    let waiting = w.pass(true).await;
    let held = (
        w.ledger(),
        w.store()
            .campaigns()
            .recorded_among(&["acme-shoes", "acme-x"])
            .await
            .unwrap(),
    );
    w.store().leases().release_lease(&other).await.unwrap();
    let done = w.pass(false).await;

    // Assert: the pass that could not take the old lease did nothing at all, and said why.
    let r = waiting
        .iter()
        .find(|r| r.campaign == "acme-x")
        .expect("a report");
    assert_eq!(
        r.outcome,
        linkrunner::effects::pass::PassOutcome::Skipped,
        "{r:?}"
    );
    assert!(
        r.detail
            .as_deref()
            .unwrap_or_default()
            .contains("the rename from acme-shoes waits"),
        "{r:?}"
    );
    assert!(
        waiting.iter().all(|r| r.campaign != "acme-shoes"),
        "the old name is not removed while its rename waits: {waiting:?}"
    );
    assert_eq!(held.1, ["acme-shoes"]);
    assert_eq!(held.0.projects.len(), 1);
    assert_eq!(switches(&held.0), switches(&before));
    assert_eq!(held.0.purchases.len(), before.purchases.len());
    let r = done
        .iter()
        .find(|r| r.campaign == "acme-x")
        .expect("a report");
    assert!(
        r.done
            .iter()
            .any(|d| d.starts_with("rename acme-shoes → acme-x")),
        "{r:?}"
    );
    assert_eq!(w.ledger().projects.len(), 1);
    assert_eq!(switches(&w.ledger()), switches(&before));
}

pub async fn a_campaign_renamed_without_the_key_is_blocked_and_never_gets_a_second_project(
    db: TestDb,
) {
    // Arrange: acme-shoes bought its first round.
    let w = World::bought_and_converged(db, &[("acme-shoes", ACME)]).await;
    let before = w.ledger();
    let project = before.projects[0].id;

    // Act: renamed without `renamed_from`, the domain spelt with `www.` this time.
    w.remove_campaign("acme-shoes");
    let file = renamed(false).replace("https://acme.example", "https://www.acme.example");
    w.write_campaign("acme-x", &file);
    let plan = run(&w, &["plan"]).await;
    let once = run(&w, &["once"]).await;

    // Assert: both say whose domain it is and what to write; nothing created or bought.
    let said = format!(
        "domain acme.example belongs to campaign acme-shoes (project {project}): if this is a rename, add `renamed_from: acme-shoes`"
    );
    let shown = String::from_utf8_lossy(&plan.stdout);
    assert!(shown.contains(&said), "{}", text(&plan));
    assert!(!shown.contains("create the project"), "{shown}");
    assert_eq!(once.status.code(), Some(1), "{}", text(&once));
    let out = String::from_utf8_lossy(&once.stdout);
    assert!(out.contains("acme-x: blocked"), "{}", text(&once));
    assert!(out.contains(&said), "{}", text(&once));
    let after = ledger_with_one_project(&w);
    assert_eq!(
        after.purchases.len(),
        before.purchases.len(),
        "nothing bought"
    );
    assert_eq!(
        ledger::requests(&after, Op::AddProject),
        ledger::requests(&before, Op::AddProject)
    );
    assert!(
        !is_recorded(&w, "acme-x").await,
        "the blocked campaign is not recorded, so `renamed_from` still works once added"
    );

    // The way out it names works: with the key, the record is handed over.
    w.write_campaign("acme-x", &renamed(true));
    let fixed = run(&w, &["once"]).await;
    assert!(fixed.status.success(), "{}", text(&fixed));
    assert_eq!(w.ledger().projects.len(), 1);
}

pub async fn a_second_campaign_naming_a_recorded_project_id_is_refused_naming_the_owner(
    db: TestDb,
) {
    use super::fixtures::BOLT;
    // Arrange: acme-shoes created its project and bought.
    let w = World::bought_and_converged(db, &[("acme-shoes", ACME)]).await;
    let before = w.ledger();
    let project = before.projects[0].id;

    // Act: another file (another domain) adopts acme-shoes's project by its id.
    let claiming = BOLT.replace(
        "budget:\n  monthly: \"7500.50\"",
        &format!(
            "project_id: {project}\nbudget:\n  unknown_link_rent: 200\n  monthly: \"7500.50\""
        ),
    );
    w.write_campaign("bolt-bikes", &claiming);
    let once = run(&w, &["once"]).await;

    // Assert: refused, naming the owner and the way out; nothing of it reaches the market.
    assert_eq!(once.status.code(), Some(1), "{}", text(&once));
    let out = String::from_utf8_lossy(&once.stdout);
    assert!(out.contains("bolt-bikes: blocked"), "{}", text(&once));
    assert!(
        out.contains(&format!(
            "`project_id` {project} is recorded for campaign acme-shoes"
        )),
        "{}",
        text(&once)
    );
    let after = w.ledger();
    assert_eq!(
        switches(&after),
        switches(&before),
        "no autobuyer created or switched"
    );
    assert_eq!(
        after.purchases.len(),
        before.purchases.len() + 1,
        "acme-shoes's round only"
    );
    assert!(!is_recorded(&w, "bolt-bikes").await);
}

/// Issue 32, item 1: a file adopting a project of its own but naming, on one of its URLs, the
/// `url_id` acme-shoes holds is refused at the pass before anything is recorded, naming the
/// owner and the way out (and `plan` says so), while acme-shoes is live and after its file is
/// removed; nothing is bought in its project and nothing is created.
pub async fn a_second_campaign_naming_a_recorded_url_id_is_refused_live_or_removed(db: TestDb) {
    use super::fixtures::BOLT;
    use linkrunner::effects::pass::PassOutcome;
    // Arrange: acme-shoes created its project and bought; bolt-bikes' account is in use.
    let w = World::bought_and_converged(db, &[("acme-shoes", ACME)]).await;
    let shoes = "https://acme.example/running-shoes";
    let url_id = w.recorded("acme-shoes").await.ids.urls[shoes];
    let seeded = w
        .sandbox
        .seed_in_use("https://bolt-bikes.example")
        .expect("seeded");
    let claiming = BOLT
        .replace(
            "  - url: https://bolt-bikes.example/\n    texts:",
            &format!("  - url: https://bolt-bikes.example/\n    url_id: {url_id}\n    texts:"),
        )
        .replace(
            "budget:\n  monthly: \"7500.50\"",
            &format!(
                "project_id: {}\nbudget:\n  unknown_link_rent: 200\n  monthly: \"7500.50\"",
                seeded.project_id
            ),
        );
    assert!(claiming.contains(&format!("url_id: {url_id}")));
    w.write_campaign("bolt-bikes", &claiming);
    let said = format!(
        "`url_id` {url_id} on https://bolt-bikes.example/ ({shoes} there) is recorded for campaign acme-shoes: \
         if this is a rename, add `renamed_from: acme-shoes`, else remove it from this file"
    );

    for acme_removed in [false, true] {
        if acme_removed {
            w.remove_campaign("acme-shoes");
        }
        let before = w.ledger();
        // Act
        let plan = run(&w, &["plan"]).await;
        let reports = w.pass(true).await;

        // Assert: `plan` says it as the pass does.
        let shown = String::from_utf8_lossy(&plan.stdout);
        assert!(
            shown.contains(&format!("blocked: {said}")),
            "acme removed: {acme_removed}: {}",
            text(&plan)
        );

        // Assert: blocked with the owner and the way out, never recorded, nothing spent.
        let bolt = reports
            .iter()
            .find(|r| r.campaign == "bolt-bikes")
            .expect("bolt-bikes reported");
        assert_eq!(bolt.outcome, PassOutcome::Blocked, "{bolt:?}");
        let detail = bolt.detail.clone().unwrap_or_default();
        assert!(
            detail.starts_with(&said),
            "acme removed: {acme_removed}: {detail}"
        );
        let after = w.ledger();
        let bolt = HashSet::from([seeded.project_id]);
        let what = format!("bolt-bikes' project, acme removed: {acme_removed}");
        assert_no_new_spending(&before, &after, &bolt, &what);
        assert!(!is_recorded(&w, "bolt-bikes").await);
    }
}

/// Whether the journal records the campaign `name` (a blocked claim is never recorded).
async fn is_recorded(w: &World, name: &str) -> bool {
    let found = w.store().campaigns().recorded_among(&[name]).await;
    !found.expect("journal read").is_empty()
}

/// The sandbox's ledger, asserting it holds one project: no second one was created.
fn ledger_with_one_project(w: &World) -> linkrunner_sandbox::Ledger {
    let after = w.ledger();
    assert_eq!(
        after.projects.len(),
        1,
        "no second project: {:?}",
        after.projects
    );
    after
}

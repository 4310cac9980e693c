//! Issue 32 item 2: an autobuyer entry may say `moved_from: CAMPAIGN`. An autobuyer belongs to
//! its project, so it moves with the project: together with the rename of its campaign it is
//! neither stopped nor created again (`plan` shows the move); to a campaign on another project
//! it is refused naming both, and nothing is created. Asserted on the sandbox's ledger through
//! the real binary.

use linkrunner_sandbox::{Ledger, Op};

use super::binary::{run, text};
use super::fixtures::{ACME, BOLT};
use super::respell::acme_converged;
use super::support::{TestDb, World, sandbox_config};
use crate::support::ledger::requests;

fn switches(ledger: &Ledger) -> (u64, u64, u64) {
    (
        requests(ledger, Op::CreateAutobuyer),
        requests(ledger, Op::StopAutobuyers),
        requests(ledger, Op::StartAutobuyers),
    )
}

/// The id of the one autobuyer the marketplace holds.
fn only_autobuyer_id(ledger: &Ledger) -> i64 {
    assert_eq!(ledger.autobuyers.len(), 1, "{:?}", ledger.autobuyers);
    ledger.autobuyers[0].id
}

pub async fn an_autobuyer_moved_with_its_campaigns_rename_is_neither_stopped_nor_created_again(
    db: TestDb,
) {
    // Arrange: acme-shoes runs its autobuyer.
    let w = acme_converged(db, false).await;
    let before = w.ledger();
    let id = only_autobuyer_id(&before);

    // Act: the file becomes acme-x, renamed from acme-shoes, its autobuyer moved from it.
    let moved = ACME
        .replace("name: acme-shoes", "name: acme-x\nrenamed_from: acme-shoes")
        .replace(
            "  - name: acme-auto\n",
            "  - name: acme-auto\n    moved_from: acme-shoes\n",
        );
    w.remove_campaign("acme-shoes");
    w.write_campaign("acme-x", &moved);
    let plan = run(&w, &["plan"]).await;
    let once = run(&w, &["once"]).await;
    let again = run(&w, &["once"]).await;

    // Assert: `plan` shows the move; no autobuyer was created, stopped or started.
    let shown = String::from_utf8_lossy(&plan.stdout);
    let line = format!(
        "move autobuyer acme-auto from acme-shoes to acme-x (id {id}, budget 1000 RUB/month)"
    );
    assert!(shown.contains(&line), "{}", text(&plan));
    assert!(!shown.contains("stop autobuyer"), "{shown}");
    assert!(once.status.success(), "{}", text(&once));
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(switches(&w.ledger()), switches(&before));
    let ids = w.store().campaigns().remote_ids("acme-x").await.unwrap();
    assert_eq!(ids.autobuyers.get("acme-auto").map(|a| a.id), Some(id));
    let later = run(&w, &["plan"]).await;
    assert!(
        !String::from_utf8_lossy(&later.stdout).contains("move autobuyer"),
        "honoured once: {}",
        text(&later)
    );
}

pub async fn an_autobuyer_moved_to_a_campaign_on_another_project_is_refused_naming_both(
    db: TestDb,
) {
    // Arrange: acme-shoes runs its autobuyer on its project; bolt-bikes has a project of its own.
    let w = World::new(db, sandbox_config()).await;
    w.write_campaign("acme-shoes", ACME);
    w.write_campaign("bolt-bikes", BOLT);
    w.pass(false).await;
    w.converge(3).await;
    let before = w.ledger();
    assert_eq!(before.projects.len(), 2);
    let project_of = |ids: linkrunner::domain::records::RemoteIds| ids.project.unwrap().project_id;
    let campaigns = w.store().campaigns();
    let acme_project = project_of(campaigns.remote_ids("acme-shoes").await.unwrap());
    let bolt_project = project_of(campaigns.remote_ids("bolt-bikes").await.unwrap());
    let created = requests(&before, Op::CreateAutobuyer);

    // Act: the autobuyer leaves acme-shoes's file for bolt-bikes's, with `moved_from`.
    let acme = ACME.split("autobuyers:").next().unwrap().to_string();
    let bolt = format!(
        "{BOLT}  - name: acme-auto\n    moved_from: acme-shoes\n    filter: bikes-mid\n    state: running\n    urls:\n      - {{ url: \"https://bolt-bikes.example/\", monthly_budget: 1000, total_links_limit: 20, daily_links_limit: 1 }}\n"
    );
    w.write_campaign("acme-shoes", &acme);
    w.write_campaign("bolt-bikes", &bolt);
    let validate = run(&w, &["validate"]).await;
    let plan = run(&w, &["plan"]).await;
    let once = run(&w, &["once"]).await;

    // Assert: the files are valid (only the journal knows the projects); `plan` and `once`
    // refuse the move naming both campaigns and projects; bolt-bikes creates no autobuyer.
    assert!(validate.status.success(), "{}", text(&validate));
    let said = "autobuyer `acme-auto` (id ";
    let projects = format!(
        "runs on project {acme_project} of campaign acme-shoes, and campaign bolt-bikes is on project {bolt_project}: an autobuyer belongs to its project"
    );
    for out in [&plan, &once] {
        let shown = String::from_utf8_lossy(&out.stdout);
        assert!(
            shown.contains(said) && shown.contains(&projects),
            "{}",
            text(out)
        );
    }
    assert_eq!(once.status.code(), Some(1), "{}", text(&once));
    assert!(
        String::from_utf8_lossy(&once.stdout).contains("bolt-bikes: blocked"),
        "{}",
        text(&once)
    );
    let after = w.ledger();
    assert_eq!(
        requests(&after, Op::CreateAutobuyer),
        created,
        "no second autobuyer"
    );
    assert_eq!(after.projects.len(), 2);
}

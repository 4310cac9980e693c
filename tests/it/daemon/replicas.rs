//! Two `linkrunner run` processes on one PostgreSQL journal: each (campaign, slot) round runs
//! once, nothing is bought twice and the caps hold; a campaign renamed with `renamed_from`,
//! seen by the replicas at different moments, creates, stops and buys again nothing.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use linkrunner_sandbox::{AutobuyerState, Ledger, SandboxHandle};

use super::support::{run_binary, start_sandbox, with_autobuyer, with_autobuyers};
use crate::support::binary::Daemon;
use crate::support::campaigns;
use crate::support::db::TestDb;
use crate::support::db::intent_states;
use crate::support::db::rounds;
use crate::support::ledger::autobuyer_switches;
use crate::support::wait::PATIENCE;
use crate::support::wait::within;

const CAMPAIGNS: [&str; 2] = ["twin-a", "twin-b"];
const MONTHLY_CAP_RUB: i64 = 1500;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_run_each_slot_once_and_buy_nothing_twice() {
    // Arrange: two campaigns with a tight cap, a round every second, two replicas.
    crate::support::init_logs();
    let db = TestDb::postgres().await;
    let dir = tempfile::tempdir().unwrap();
    for name in CAMPAIGNS {
        campaigns::write(
            dir.path(),
            &format!("{name}.yaml"),
            &campaigns::simple(name, "0 9 * * *", MONTHLY_CAP_RUB as u32),
        );
    }
    let sandbox = start_sandbox(20).await;
    let args = ["--round-every", "1", "--shutdown-grace", "10"];
    let mut one = run_binary(&db.url, dir.path(), &sandbox, &args).await;
    let mut two = run_binary(&db.url, dir.path(), &sandbox, &args).await;
    one.ready().await;
    two.ready().await;

    // Act: let both run until each campaign has had five rounds.
    for name in CAMPAIGNS {
        within(
            Duration::from_secs(40),
            "five rounds per campaign",
            || async { (rounds(&db.url, name).await.len() >= 5).then_some(()) },
        )
        .await;
    }
    let counted = rounds_counted(&one).await + rounds_counted(&two).await;
    let mut finished = 0;
    for name in CAMPAIGNS {
        let rows = rounds(&db.url, name).await;
        // A deferred slot (the other replica held the lease) is not finished: it is tried
        // again, and counted when a try ends it.
        finished += rows
            .iter()
            .filter(|r| r.2 != "running" && r.2 != "deferred")
            .count();
    }
    one.signal("TERM");
    two.signal("TERM");
    let exits = (
        one.exit_within(PATIENCE).await,
        two.exit_within(PATIENCE).await,
    );

    // Assert
    let (Some(a), Some(b)) = exits else {
        panic!("a replica did not stop: {exits:?}")
    };
    assert!(a.success() && b.success(), "{a} {b}");
    // A replica counts a round after recording its end, so together they can never have
    // counted more rounds than the journal finished — unless both ran the same slot.
    assert!(counted > 0.0);
    assert!(
        counted <= finished as f64,
        "the replicas counted {counted} rounds, the journal finished {finished}"
    );
    for name in CAMPAIGNS {
        let rows = rounds(&db.url, name).await;
        let slots: BTreeSet<_> = rows.iter().map(|r| r.0).collect();
        assert_eq!(
            slots.len(),
            rows.len(),
            "a slot of {name} ran twice: {rows:?}"
        );
    }
    let ledger = sandbox.ledger();
    assert_eq!(ledger.duplicate_purchases, 0);
    let states = intent_states(&db.url, "purchase").await;
    let succeeded = states
        .iter()
        .find(|(s, _)| s == "succeeded")
        .map_or(0, |(_, n)| *n);
    assert!(succeeded > 0, "nothing was bought: {states:?}");
    assert_eq!(ledger.purchases.len() as i64, succeeded, "{states:?}");
    for project in &ledger.projects {
        let spend: i64 = ledger
            .purchases
            .iter()
            .filter(|p| p.project_id == project.id)
            .map(|p| p.price.kopecks())
            .sum();
        assert!(
            spend <= MONTHLY_CAP_RUB * 100,
            "{} spent {spend} kopecks",
            project.domain
        );
    }
}

/// Buy rounds this replica ran, over every campaign and outcome.
/// Round tries that ended their slot (a `deferred` try leaves the slot open).
async fn rounds_counted(replica: &Daemon) -> f64 {
    replica
        .metrics_body()
        .await
        .lines()
        .filter(|l| l.starts_with("linkrunner_rounds_total{"))
        .filter(|l| !l.contains("outcome=\"deferred\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Three campaigns, each with buy rounds and a running autobuyer: `ren-a` is the one renamed,
/// the other two keep one file's removal from looking like a vanished directory (a held
/// removal would hide a stop).
const RENAMED_AMONG: [&str; 3] = ["ren-a", "ren-c", "ren-d"];

/// `ren-a`'s file renamed to `ren-b`, with `renamed_from`: same domain, URLs and autobuyer.
fn ren_b() -> String {
    with_autobuyer("ren-a", "0 9 * * *")
        .replace("name: ren-a\n", "name: ren-b\nrenamed_from: ren-a\n")
}

/// Renames `ren-a` to `ren-b` in `dir` and tells `replica` to reload.
fn rename_in(dir: &Path, replica: &Daemon) {
    std::fs::remove_file(dir.join("ren-a.yaml")).unwrap();
    campaigns::write(dir, "ren-b.yaml", &ren_b());
    replica.signal("HUP");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_seen_by_two_replicas_at_different_moments_creates_stops_and_rebuys_nothing() {
    // Arrange: two replicas on one PostgreSQL journal, each with its own copy of the files,
    // buying every second; every autobuyer runs and the rounds bought.
    crate::support::init_logs();
    let db = TestDb::postgres().await;
    // Each replica has its own copy of the files, as a checkout of its own would be.
    let (dir_one, dir_two) = (
        with_autobuyers(&RENAMED_AMONG),
        with_autobuyers(&RENAMED_AMONG),
    );
    let sandbox = start_sandbox(0).await;
    // Reconciliations every 5 s (the least `run` takes), so a replica that would stop what it
    // does not see in its files gets the lease and does so within the test.
    let args = [
        "--round-every",
        "1",
        "--shutdown-grace",
        "10",
        "--reconcile-interval",
        "5",
    ];
    let mut one = run_binary(&db.url, dir_one.path(), &sandbox, &args).await;
    let mut two = run_binary(&db.url, dir_two.path(), &sandbox, &args).await;
    one.ready().await;
    two.ready().await;
    let before = ledger_when_all_run(&sandbox).await;

    // Act: replica one sees the rename first and hands ren-a over; replica two keeps the old
    // files through several rounds, then sees the rename too.
    rename_in(dir_one.path(), &one);
    within(PATIENCE, "the hand-over", || async {
        let names = db
            .store
            .campaigns()
            .recorded_among(&["ren-a", "ren-b"])
            .await
            .ok()?;
        (names == ["ren-b"]).then_some(())
    })
    .await;
    let handed_over = sandbox.ledger();
    // Replica two reloads its old files (another edit, a SIGHUP): ren-b, recorded now, has no
    // file there, and its ren-a file names a campaign the journal no longer holds.
    two.signal("HUP");
    tokio::time::sleep(Duration::from_secs(12)).await;
    let between = sandbox.ledger();
    rename_in(dir_two.path(), &two);
    tokio::time::sleep(Duration::from_secs(4)).await;
    let after = sandbox.ledger();
    let (_, err_two) = two.stop().await;
    one.stop().await;

    // Assert: one project per domain, no autobuyer created, stopped or started, every one
    // running, no page bought twice for one URL; ren-a's project kept buying as ren-b.
    let log_two = String::from_utf8_lossy(&err_two);
    for (when, l) in [("between", &between), ("after", &after)] {
        assert_eq!(
            l.projects.len(),
            RENAMED_AMONG.len(),
            "{when}: {:?}",
            l.projects
        );
        assert_eq!(
            autobuyer_switches(l),
            autobuyer_switches(&before),
            "{when}: autobuyers switched\n{log_two}"
        );
        assert!(
            l.autobuyers
                .iter()
                .all(|a| a.state == AutobuyerState::Running),
            "{when}: {:?}",
            l.autobuyers
        );
        let mut pages: Vec<(i64, i64)> =
            l.purchases.iter().map(|p| (p.url_id, p.page_id)).collect();
        let bought = pages.len();
        pages.sort();
        pages.dedup();
        assert_eq!(
            pages.len(),
            bought,
            "{when}: a page bought twice for one URL"
        );
        assert_eq!(l.duplicate_purchases, 0, "{when}");
    }
    let project = |l: &Ledger| {
        l.projects
            .iter()
            .find(|p| p.domain.contains("ren-a.example"))
            .map(|p| p.id)
            .expect("ren-a's project")
    };
    let of = |l: &Ledger| l.purchases_of(project(l)).len();
    assert!(
        of(&after) > of(&handed_over),
        "ren-b buys on: {} → {}",
        of(&handed_over),
        of(&after)
    );
    assert_eq!(
        db.store
            .campaigns()
            .recorded_among(&["ren-a", "ren-b"])
            .await
            .unwrap(),
        ["ren-b"]
    );
}

/// Once every autobuyer runs and every campaign's first round bought: the ledger then.
async fn ledger_when_all_run(sandbox: &SandboxHandle) -> Ledger {
    within(
        Duration::from_secs(40),
        "every autobuyer runs and bought",
        || async {
            let l = sandbox.ledger();
            let running = l
                .autobuyers
                .iter()
                .filter(|a| a.state == AutobuyerState::Running)
                .count();
            let bought = l.projects.iter().all(|p| !l.purchases_of(p.id).is_empty());
            (running == RENAMED_AMONG.len() && l.projects.len() == RENAMED_AMONG.len() && bought)
                .then_some(l)
        },
    )
    .await
}

//! Two `linkrunner run` processes on one PostgreSQL journal: each (campaign, slot) round runs
//! once, nothing is bought twice and the caps hold.

use std::collections::BTreeSet;
use std::time::Duration;

use super::support::{run_binary, start_sandbox};
use crate::support::binary::Daemon;
use crate::support::campaigns;
use crate::support::db::TestDb;
use crate::support::db::intent_states;
use crate::support::db::rounds;
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

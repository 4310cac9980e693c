//! Capacity (issue 27, issue 34 item 6): buy rounds go before reconciliation. While a
//! reconciliation that cannot finish within `--reconcile-interval` keeps running, rounds that
//! come due start on time and buy, and reconciliation keeps going beside them on what they
//! leave idle (the client's queue serves a round's calls first; counted by the sandbox).

use std::time::Duration;

use linkrunner::daemon::run::Event;
use linkrunner_sandbox::{Ledger, Op};

use super::support::{Daemon, World, at};
use crate::support::app::InProcess;
use crate::support::campaigns;
use crate::support::db::rounds;
use crate::support::ledger;
use crate::support::wait::within;

const FILLERS: usize = 60;
const BUYERS: usize = 10;
const RATE_LIMIT: u32 = 40;

/// A campaign that never buys on a schedule: reconciliation is all it costs.
fn filler_yaml(name: &str) -> String {
    let full = campaigns::simple(name, "0 9 * * *", 4000);
    full[..full.find("buy:").expect("the template buys")].to_string()
}

/// Calls only a buy round makes: searches, their polls, purchases.
fn round_calls(l: &Ledger) -> u64 {
    [Op::SearchStart, Op::SearchResult, Op::BuyLinks]
        .into_iter()
        .map(|op| ledger::requests(l, op))
        .sum()
}

/// The daemon at `RATE_LIMIT` requests/s, reconciling every campaign every second: more
/// than the limit carries, so its reconciliation never ends.
async fn start(world: &World) -> Daemon {
    let mut settings = world.settings(&world.db_url);
    settings.market.rate_limit = std::num::NonZeroU32::new(RATE_LIMIT).unwrap();
    settings.daemon.reconcile_interval = Duration::from_secs(1);
    settings.daemon.watch = false;
    InProcess::start(settings).await
}

fn gauge(body: &str, name: &str) -> f64 {
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name} in /metrics"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_due_round_starts_while_a_long_reconciliation_is_under_way() {
    // Arrange: 60 campaigns that only reconcile, 10 that buy every ten minutes; the first
    // reconciliation creates every project, the 09:00 slots are the buyers' baselines.
    let world = World::new(at(9, 0, 30)).await;
    for i in 0..FILLERS {
        world.write(
            &format!("f{i:02}.yaml"),
            &filler_yaml(&format!("fill-{i:02}")),
        );
    }
    let buyers: Vec<String> = (0..BUYERS).map(|i| format!("buy-{i:02}")).collect();
    for b in &buyers {
        world.write(
            &format!("{b}.yaml"),
            &campaigns::simple(b, "*/10 * * * *", 5000),
        );
    }
    let mut daemon = start(&world).await;
    within(
        Duration::from_secs(120),
        "every project exists and every baseline is recorded",
        || async {
            let projects = world.sandbox.ledger().projects.len();
            let mut baselines = 0;
            for b in &buyers {
                baselines += rounds(&world.db_url, b).await.len();
            }
            (projects == FILLERS + BUYERS && baselines == BUYERS).then_some(())
        },
    )
    .await;
    let body = daemon.metrics_body().await;
    assert!(
        gauge(&body, "linkrunner_reconcile_cycle_seconds") > 1.0,
        "the reconciliation is planned longer than its interval: {body}"
    );
    daemon.drain_events();
    let before = world.sandbox.ledger();

    // Act: the buyers' 09:10 slot comes while the reconciliation goes on.
    world.clock.set(at(9, 10, 5));
    let mut bought = 0;
    for _ in 0..BUYERS {
        bought += daemon
            .next_event(|e| match e {
                Event::Round { slot, report } if *slot == at(9, 10, 0) => Some(report.bought),
                _ => None,
            })
            .await;
    }
    let after = world.sandbox.ledger();

    // Assert: every round bought on time, and reconciliation went on meanwhile.
    let ours = round_calls(&after) - round_calls(&before);
    // Each round's pass also reads its link list once: those are the rounds' too.
    let others =
        (ledger::all_requests(&after) - ledger::all_requests(&before)) - ours - BUYERS as u64;
    assert_eq!(bought, 2 * BUYERS as u32, "each round buys per_run = 2");
    assert!(
        ours >= 3 * BUYERS as u64,
        "a search, a poll and a purchase per round: {ours}"
    );
    assert!(
        others > 0,
        "reconciliation keeps its pace beside the rounds (it made {others} calls while they made {ours})"
    );
    let body = daemon.metrics_body().await;
    assert_eq!(gauge(&body, "linkrunner_rounds_started_late_total"), 0.0);
    assert!(
        gauge(
            &body,
            "linkrunner_api_calls_by_purpose_total{purpose=\"buy\"}"
        ) >= ours as f64
    );
    daemon.stop().await;
}

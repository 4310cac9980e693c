//! The anomaly brake (issue 33): the daemon halts a campaign that commits far above what its
//! schedule and its autobuyers' budgets explain — a marketplace whose autobuyers buy past
//! their budgets, and a second linkrunner on the same journal started by mistake with the
//! demo's one-second rounds — with the figures in the halt's reason, once, and nothing of
//! ours is bought after it until `resume`. Asserted on the journal's halts and the sandbox's
//! ledger. Also: an operator's halt (the brake's kind) stops the autobuyers of a campaign
//! whose file fails validation, which is otherwise held as recorded.

use std::time::Duration;

use linkrunner::clock::Clock;
use linkrunner::store::{Halt, HaltScope, Store};
use linkrunner_sandbox::{AutobuyerState, Behaviour};

use super::support::{Daemon, World, at, with_a_small_autobuyer};
use crate::support::app::InProcess;
use crate::support::campaigns;
use crate::support::http::series;
use crate::support::wait::PATIENCE;
use crate::support::wait::within;

const NAME: &str = "braked";

/// The in-process daemon on `world`, reconciling every second (so it reads the link list
/// often), with its own buy trigger and brake.
async fn start(world: &World, round_every: Option<Duration>, anomaly_multiple: f64) -> Daemon {
    let mut settings = world.settings(&world.db_url);
    settings.daemon.reconcile_interval = Duration::from_secs(1);
    settings.daemon.round_every = round_every;
    settings.daemon.watch = false;
    settings.daemon.anomaly_multiple = anomaly_multiple;
    InProcess::start(settings).await
}

/// The brake's halt of the campaign, once it is set.
async fn brake_of(store: &Store) -> Option<Halt> {
    let halts = store.halts().await.expect("halts");
    halts
        .into_iter()
        .find(|h| h.scope == HaltScope::campaign(NAME) && h.by.as_deref() == Some("anomaly brake"))
}

/// Links bought by purchase calls (ours), not by autobuyers.
fn ours(world: &World) -> usize {
    let l = world.sandbox.ledger();
    l.purchases
        .iter()
        .filter(|p| p.autobuyer_id.is_none())
        .count()
}

fn autobuyer_state(world: &World) -> Option<AutobuyerState> {
    let l = world.sandbox.ledger();
    l.autobuyers
        .iter()
        .find(|a| a.name.starts_with("auto"))
        .map(|a| a.state)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn autobuyers_buying_far_above_their_budgets_brake_the_campaign_until_resume() {
    // Arrange: a daily 09:00 round (the clock is at noon: none due) and an autobuyer of
    // 500 RUB and one link a day, on a marketplace whose autobuyers ignore their limits.
    let world = World::new(at(12, 0, 0)).await;
    let yaml = with_a_small_autobuyer(NAME);
    world.write("braked.yaml", &yaml);
    world
        .sandbox
        .set_behaviour(Behaviour {
            autobuy_every_ms: Some(100),
            autobuy_ignores_limits: true,
            ..Behaviour::default()
        })
        .unwrap();
    let daemon = start(&world, None, 3.0).await;

    // Act: the autobuyer runs and buys ten links a second.
    let halt = within(PATIENCE, "the anomaly brake's halt", || async {
        brake_of(&daemon.store).await
    })
    .await;

    // Assert: the halt carries the figures; the autobuyer is stopped and buys no more; the
    // 09:00 round of the next day buys nothing; one trip counted, one event recorded.
    assert!(
        halt.reason.contains("in the last")
            && halt.reason.contains("schedules and budgets explain"),
        "{}",
        halt.reason
    );
    within(Duration::from_secs(10), "the autobuyer stopped", || async {
        (autobuyer_state(&world) == Some(AutobuyerState::Stopped)).then_some(())
    })
    .await;
    let stopped_at = world.sandbox.ledger().purchases.len();
    world.clock.set(at(9, 0, 30) + chrono::Duration::days(1));
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        world.sandbox.ledger().purchases.len(),
        stopped_at,
        "bought under the brake"
    );
    assert_eq!(ours(&world), 0, "a buy round bought under the brake");
    let body = daemon.metrics_body().await;
    assert_eq!(
        series(
            &body,
            r#"linkrunner_anomaly_brake_trips_total{scope="campaign"}"#
        ),
        Some(1.0),
        "{body}"
    );
    // A campaign's brake is not "all spending stopped".
    assert_eq!(
        series(&body, "linkrunner_operator_halt"),
        Some(0.0),
        "{body}"
    );
    let events = daemon.store.halt_events(10).await.unwrap();
    assert_eq!(
        events.iter().filter(|e| e.by == "anomaly brake").count(),
        1,
        "{events:?}"
    );

    // Act 2: an operator resumes the campaign.
    let lifted = daemon
        .store
        .operator_resume_scope(
            &HaltScope::campaign(NAME),
            "night-operator",
            "seen",
            at(9, 1, 0) + chrono::Duration::days(1),
        )
        .await
        .unwrap();

    // Assert 2: lifted, and the autobuyer runs again.
    assert!(lifted);
    within(
        Duration::from_secs(15),
        "the autobuyer started again",
        || async { (autobuyer_state(&world) == Some(AutobuyerState::Running)).then_some(()) },
    )
    .await;
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_linkrunner_with_one_second_rounds_on_the_journal_is_braked_by_the_first() {
    // Arrange: a campaign of two links at 09:00 a day, run by the daemon on its schedule;
    // the clock is at noon, after the day's round.
    let world = World::new(at(12, 0, 0)).await;
    world.write(
        "braked.yaml",
        &campaigns::simple(NAME, "0 9 * * *", 100_000),
    );
    // Act: a second linkrunner on the same journal, started by mistake with the demo's
    // rounds every second and no brake of its own (an older build), buys two links a second.
    // It starts first, so it works the account (its account lease) and the scheduled daemon
    // stands by: a daemon's brake watches the whole journal, worked here or not.
    let runaway = start(&world, Some(Duration::from_secs(1)), 0.0).await;
    let scheduled = start(&world, None, 3.0).await;
    // Time passes: a second of the clock every quarter of a real one.
    let clock = world.clock.clone();
    let ticking = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(250)).await;
            clock.advance(chrono::Duration::seconds(1));
        }
    });
    let halt = within(PATIENCE, "the anomaly brake's halt", || async {
        brake_of(&scheduled.store).await
    })
    .await;

    // Assert: the scheduled daemon braked the campaign with the figures, and once the halt
    // is in force neither linkrunner buys any more.
    assert!(
        halt.reason.contains("schedules and budgets explain"),
        "{}",
        halt.reason
    );
    let halts = scheduled.store.halts().await.unwrap();
    assert!(
        !halts.iter().any(|h| h.is_wide()),
        "one campaign's anomaly halted the account: {halts:?}"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let braked_at = ours(&world);
    assert!(braked_at > 6, "braked after {braked_at} links");
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(ours(&world), braked_at, "bought under the brake");
    assert_eq!(world.sandbox.ledger().duplicate_purchases, 0);
    ticking.abort();
    runaway.stop().await;
    scheduled.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_with_a_campaign_lifts_that_campaigns_brake_and_leaves_the_account_halted() {
    // Arrange: the brake's halt of a campaign and an operator's account-wide halt.
    let db = crate::support::db::TestDb::sqlite().await;
    let now = chrono::Utc::now();
    db.store
        .brake(&HaltScope::campaign(NAME), "anomaly: …", now)
        .await
        .unwrap();
    db.store.operator_halt("alice", "stop", now).await.unwrap();

    // Act: `linkrunner resume --campaign NAME`, as an operator in a shell.
    let out = crate::support::binary::command()
        .env("LINKRUNNER_DATABASE_URL", &db.url)
        .args([
            "resume",
            "--campaign",
            NAME,
            "--by",
            "bob",
            "--reason",
            "refunded",
        ])
        .output()
        .expect("linkrunner runs");

    // Assert: the campaign's halt is gone, the account's stays.
    crate::support::binary::assert_success(&out, "linkrunner resume");
    let halts = db.store.halts().await.unwrap();
    let scopes: Vec<&HaltScope> = halts.iter().map(|h| &h.scope).collect();
    assert_eq!(scopes, vec![&HaltScope::Global], "{halts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operators_halt_stops_the_autobuyers_of_a_campaign_whose_file_fails_validation() {
    // Arrange: a campaign whose autobuyer runs, then its file broken (an unknown key: the
    // campaign is held as recorded, its autobuyer left running) and the account halted.
    let world = World::new(at(12, 0, 0)).await;
    let yaml = with_a_small_autobuyer(NAME);
    world.write("braked.yaml", &yaml);
    let daemon = start(&world, None, 0.0).await;
    within(PATIENCE, "the autobuyer running", || async {
        (autobuyer_state(&world) == Some(AutobuyerState::Running)).then_some(())
    })
    .await;
    daemon.stop().await;
    world.write("braked.yaml", &format!("{yaml}budjet: 1\n"));
    let daemon = start(&world, None, 0.0).await;

    // Act: the stop button.
    daemon
        .store
        .operator_halt("alice", "double charges", world.clock.now())
        .await
        .unwrap();

    // Assert: the held campaign's autobuyer is stopped in the marketplace all the same.
    within(Duration::from_secs(15), "the autobuyer stopped", || async {
        (autobuyer_state(&world) == Some(AutobuyerState::Stopped)).then_some(())
    })
    .await;
    daemon.stop().await;
}

//! Schedules: the timer triggers, the journal decides. A slot runs once; a restart does not run
//! it again; after downtime only the latest missed slot runs.

use std::time::Duration;

use chrono::DateTime;
use chrono::Utc;

use linkrunner::store::Store;
use linkrunner_sandbox::Faults;

use super::support::{Daemon, World, at};
use crate::support::campaigns;
use crate::support::db::rounds;
use crate::support::wait::within;

const NAME: &str = "tick-shop";

/// Slots recorded for the campaign, oldest first.
async fn slots(world: &World) -> Vec<DateTime<Utc>> {
    rounds(&world.db_url, NAME)
        .await
        .into_iter()
        .map(|r| r.0)
        .collect()
}

/// Long enough for the daemon's 1 s tick to have looked at the schedule twice.
const TWO_TICKS: Duration = Duration::from_millis(2500);

/// The daemon, started just after 09:00 on a campaign buying every ten minutes, once the
/// 09:00 baseline is recorded (the first buying slot is 09:10).
async fn ten_minute_campaign_past_its_baseline() -> (World, Daemon) {
    let world = World::new(at(9, 0, 30)).await;
    world.write("tick.yaml", &campaigns::simple(NAME, "*/10 * * * *", 5000));
    let daemon = world.start().await;
    within(
        crate::support::wait::PATIENCE,
        "the 09:00 baseline is recorded",
        || async { (slots(&world).await == vec![at(9, 0, 0)]).then_some(()) },
    )
    .await;
    (world, daemon)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slot_runs_once_not_again_after_restart_and_downtime_brings_one_catch_up_round() {
    // Arrange: every ten minutes; the daemon starts just after 09:00, which becomes the
    // baseline, so the first buying slot is 09:10.
    let (world, mut daemon) = ten_minute_campaign_past_its_baseline().await;

    // Act: the clock passes 09:10, then stays inside that slot for two ticks.
    world.clock.set(at(9, 10, 30));
    let (slot, bought) = daemon.next_round(NAME).await;
    world.clock.set(at(9, 12, 0));
    tokio::time::sleep(TWO_TICKS).await;

    // Assert: one round for 09:10, which bought; nothing more.
    assert_eq!(slot, at(9, 10, 0));
    assert!(bought > 0, "the 09:10 round bought nothing");
    let purchases_after_first_round = world.sandbox.ledger().purchases.len();
    assert_eq!(purchases_after_first_round, bought as usize);
    assert!(
        no_round_in(&mut daemon),
        "a second round ran within the same slot"
    );

    // Act: restart inside the slot that already ran.
    daemon.stop().await;
    let mut daemon = world.start().await;
    tokio::time::sleep(TWO_TICKS).await;

    // Assert: the new daemon did not run 09:10 again.
    assert!(
        no_round_in(&mut daemon),
        "the restarted daemon ran 09:10 again"
    );
    assert_eq!(slots(&world).await, vec![at(9, 0, 0), at(9, 10, 0)]);
    assert_eq!(
        world.sandbox.ledger().purchases.len(),
        purchases_after_first_round
    );

    // Act: downtime from 09:12 to 10:05 (09:20 ... 10:00 missed), then a restart.
    daemon.stop().await;
    world.clock.set(at(10, 5, 30));
    let mut daemon = world.start().await;
    let (catch_up, _) = daemon.next_round(NAME).await;
    tokio::time::sleep(TWO_TICKS).await;

    // Assert: exactly one catch-up round, for the latest missed slot.
    assert_eq!(catch_up, at(10, 0, 0));
    assert!(
        no_round_in(&mut daemon),
        "downtime caused a burst of rounds"
    );
    assert_eq!(
        slots(&world).await,
        vec![at(9, 0, 0), at(9, 10, 0), at(10, 0, 0)]
    );
    assert_eq!(world.sandbox.ledger().duplicate_purchases, 0);
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_campaign_records_its_first_slot_as_a_baseline_and_buys_at_the_next() {
    // Arrange
    let world = World::new(at(9, 0, 30)).await;
    world.write("tick.yaml", &campaigns::simple(NAME, "*/10 * * * *", 5000));

    // Act
    let mut daemon = world.start().await;
    let baseline = within(
        crate::support::wait::PATIENCE,
        "a first round is recorded as finished",
        || async {
            let first = rounds(&world.db_url, NAME).await.into_iter().next();
            first.filter(|(_, _, state)| state != "running")
        },
    )
    .await;

    // Assert: the 09:00 slot is skipped with nothing bought; 09:10 buys.
    assert_eq!((baseline.0, baseline.2.as_str()), (at(9, 0, 0), "skipped"));
    assert!(world.sandbox.ledger().purchases.is_empty());
    world.clock.set(at(9, 10, 5));
    let (slot, bought) = daemon.next_round(NAME).await;
    assert_eq!(slot, at(9, 10, 0));
    assert!(bought > 0);
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_stopped_by_a_held_lease_or_a_down_marketplace_is_tried_again_within_its_slot_once()
{
    // Arrange: the 09:00 baseline, then another process takes the campaign's lease.
    let (world, mut daemon) = ten_minute_campaign_past_its_baseline().await;
    let other = Store::connect(&world.db_url).await.expect("journal");
    let lease = other
        .leases()
        .try_acquire_lease(
            NAME,
            "other-replica",
            chrono::Duration::hours(1),
            at(9, 10, 0),
        )
        .await
        .expect("lease query")
        .expect("the lease is free");

    // Act + assert: the 09:10 round meets the held lease and is deferred, not lost.
    world.clock.set(at(9, 10, 30));
    assert_eq!(daemon.next_round(NAME).await, (at(9, 10, 0), 0));
    assert_eq!(state_of(&world, at(9, 10, 0)).await, "deferred");

    // The lease is free again but the marketplace answers 503 to everything: the try 30 s
    // later is deferred again.
    other.leases().release_lease(&lease).await.expect("release");
    world
        .sandbox
        .set_faults(Faults {
            error_rate: 1.0,
            ..Faults::default()
        })
        .expect("faults");
    world.clock.set(at(9, 11, 5));
    assert_eq!(daemon.next_round(NAME).await, (at(9, 10, 0), 0));
    assert_eq!(state_of(&world, at(9, 10, 0)).await, "deferred");
    assert!(world.sandbox.ledger().purchases.is_empty());

    // The marketplace is back: the third try, 60 s after the second, buys the slot's links.
    world.sandbox.set_faults(Faults::default()).expect("faults");
    world.clock.set(at(9, 12, 10));
    let (slot, bought) = daemon.next_round(NAME).await;
    assert_eq!((slot, bought), (at(9, 10, 0), 2), "per_run is 2");
    assert_eq!(state_of(&world, at(9, 10, 0)).await, "succeeded");

    // Nothing more within the slot, and the slot bought one round's worth, once.
    world.clock.set(at(9, 19, 0));
    tokio::time::sleep(TWO_TICKS).await;
    assert!(
        no_round_in(&mut daemon),
        "the slot ran again after it succeeded"
    );
    let ledger = world.sandbox.ledger();
    assert_eq!(ledger.purchases.len(), 2);
    assert_eq!(ledger.duplicate_purchases, 0);
    daemon.stop().await;
}

async fn state_of(world: &World, slot: DateTime<Utc>) -> String {
    rounds(&world.db_url, NAME)
        .await
        .into_iter()
        .find(|r| r.0 == slot)
        .map(|r| r.2)
        .unwrap_or_default()
}

/// True when no buy round finished since the last look.
fn no_round_in(daemon: &mut super::support::Daemon) -> bool {
    !daemon
        .drain_events()
        .iter()
        .any(|e| matches!(e, linkrunner::daemon::run::Event::Round { .. }))
}

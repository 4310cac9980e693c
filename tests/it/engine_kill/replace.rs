//! Issue 24 (5): the real binary killed with SIGKILL between the old autobuyer's stop and the
//! new one's creation when a changed spec is applied by replacement — of an autobuyer it
//! created, and of one a file adopted by id. Restarted, it settles the stop and creates the
//! new autobuyer once: never a second one, never two running.

use linkrunner::money::Money;
use linkrunner_sandbox::{AutobuyerState, Faults, InUse, Ledger};

use super::campaign::{Spec, adopted_team_autobuyer, adopted_url};
use super::invariants::{
    assert_every_purchase_recorded, assert_no_duplicate_purchase, assert_within_caps,
};
use super::support::{Backend, Rig};
use crate::support::ledger::autobuyers_named;

pub async fn killed_between_the_old_stop_and_the_new_creation(backend: Backend) {
    let mut spec = Spec::new("kill-replace", 2);
    let rig = Rig::start(backend, &[spec.file()], Faults::default()).await;
    rig.restart_until_converged().await;
    let auto_on = |ledger: &Ledger| autobuyers_named(ledger, "auto-on");
    let old = auto_on(&rig.sandbox.ledger());
    assert_eq!(old.len(), 1, "{old:?}");
    spec.autobuyers[0].2 = Money::from_rubles(400);
    let (name, yaml) = spec.file();
    rig.write_file(&name, &yaml);

    rig.once_killed_at_faultpoint("after_complete:stop_autobuyer")
        .await;
    let between = auto_on(&rig.sandbox.ledger());
    rig.restart_until_converged().await;

    assert_eq!(between.len(), 1, "killed before the creation: {between:?}");
    assert_eq!(between[0].state, AutobuyerState::Stopped);
    let ledger = rig.sandbox.ledger();
    let after = auto_on(&ledger);
    assert_eq!(after.len(), 2, "one new autobuyer, created once: {after:?}");
    assert_eq!(
        (after[0].id, after[0].state),
        (old[0].id, AutobuyerState::Stopped)
    );
    assert_eq!(after[1].state, AutobuyerState::Running);
    assert_eq!(after[1].urls[0].monthly_budget, Money::from_rubles(400));
    assert_no_duplicate_purchase(&ledger, &spec);
    assert_within_caps(&ledger, &spec);
    assert_every_purchase_recorded(&rig, &ledger, &spec).await;
}

/// An adopting file with no buy rounds: the seeded project, `/trail` with its id, and the
/// team's autobuyer by id, running with `budget` RUB and 20 links in all.
fn adopting_file(s: &InUse, budget: i64) -> String {
    let trail = &s.urls[2];
    format!(
        "name: acme-shoes\ndomain: {ADOPTED_DOMAIN}\nproject_id: {}\nurls:\n{}\
         budget:\n  monthly: 3000\n  max_link_price: 150\n  unknown_link_rent: 150\n  daily_links: 2\n  total_links: 2\n{}",
        s.project_id,
        adopted_url(trail),
        adopted_team_autobuyer(s, &trail.url, budget),
    )
}

const ADOPTED_DOMAIN: &str = "https://acme.example";

/// The same kill for an ADOPTED autobuyer (issue 24 (5) and (3)): the team's autobuyer has
/// bought two links on `/trail` and the team one more by hand there (the list cannot tell
/// them apart). Killed after the adopted one's stop, restarted: one new autobuyer, created
/// once, running, with the file's limit less all three links (conservatively), the adopted one
/// stopped, and the journal counting exactly what the marketplace holds.
pub async fn killed_between_an_adopted_ones_stop_and_the_new_creation(backend: Backend) {
    let rig = Rig::start(backend, &[], Faults::default()).await;
    let seeded = rig
        .sandbox
        .seed_in_use(ADOPTED_DOMAIN)
        .expect("account seeded");
    rig.write_file("acme-shoes.yaml", &adopting_file(&seeded, 500));
    // The sandbox's list is whole; without the word `once` reports buying stopped.
    rig.adopt_and_vouch("acme-shoes", 3, "UI shows 3").await;
    rig.restart_until_converged().await;
    let trail = &seeded.urls[2];
    assert_eq!(rig.sandbox.autobuy_now(2).len(), 2);
    let hand = rig
        .sandbox
        .buy_by_hand(seeded.project_id, trail.url_id, trail.texts[0].1);
    assert!(hand.is_some(), "a page left to buy by hand");
    rig.restart_until_converged().await;

    rig.write_file("acme-shoes.yaml", &adopting_file(&seeded, 600));
    rig.once_killed_at_faultpoint("after_complete:stop_autobuyer")
        .await;
    let between = rig.sandbox.ledger();
    rig.restart_until_converged().await;

    let team = |ledger: &Ledger| autobuyers_named(ledger, "team-auto");
    let between = team(&between);
    assert_eq!(between.len(), 1, "killed before the creation: {between:?}");
    assert_eq!(
        (between[0].id, between[0].state),
        (seeded.autobuyer_id, AutobuyerState::Stopped)
    );
    let ledger = rig.sandbox.ledger();
    let after = team(&ledger);
    assert_eq!(after.len(), 2, "one new autobuyer, created once: {after:?}");
    assert_eq!(
        (after[0].id, after[0].state),
        (seeded.autobuyer_id, AutobuyerState::Stopped)
    );
    assert_eq!(after[1].state, AutobuyerState::Running);
    assert_eq!(after[1].urls[0].monthly_budget, Money::from_rubles(600));
    assert_eq!(
        after[1].urls[0].total_links_limit, 17,
        "20 less the 3 links on /trail, the hand one counted as the adopted one's"
    );
    let budget = rig
        .journal
        .store
        .campaigns()
        .budget("acme-shoes", chrono::Utc::now().date_naive())
        .await
        .expect("budget");
    assert_eq!(
        budget.committed,
        ledger.commitment(seeded.project_id),
        "journal = ledger: every link at its rent plus the new budget"
    );
    assert_eq!(
        ledger.duplicates_by_purchase_calls(seeded.project_id).len(),
        0
    );
}

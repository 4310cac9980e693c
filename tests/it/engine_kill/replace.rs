//! Issue 24 (5): the real binary killed with SIGKILL between the old autobuyer's stop and the
//! new one's creation when a changed spec is applied by replacement. Restarted, it settles the
//! stop and creates the new autobuyer once: never a second one, never two running.

use linkrunner::money::Money;
use linkrunner_sandbox::{AutobuyerState, Faults};

use super::campaign::Spec;
use super::invariants::{
    assert_every_purchase_recorded, assert_no_duplicate_purchase, assert_within_caps,
};
use super::support::{Backend, Rig};

pub async fn killed_between_the_old_stop_and_the_new_creation(backend: Backend) {
    let mut spec = Spec::new("kill-replace", 2);
    let rig = Rig::start(backend, &[spec.file()], Faults::default()).await;
    rig.restart_until_converged().await;
    let auto_on = |ledger: &linkrunner_sandbox::Ledger| {
        let mut v: Vec<_> = ledger
            .autobuyers
            .iter()
            .filter(|a| a.name == "auto-on")
            .cloned()
            .collect();
        v.sort_by_key(|a| a.id);
        v
    };
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

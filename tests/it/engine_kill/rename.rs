//! Issue 32 (2): the real binary killed with SIGKILL inside a rename's hand-over — everything
//! moved, the transaction not committed (fault point `before_commit:rename`). The hand-over
//! happens once or not at all: right after the kill the journal still holds the old name
//! alone; restarted, the new name holds everything, and the sandbox's ledger shows one
//! project, no autobuyer created, stopped or started again, and no page bought twice.

use linkrunner_sandbox::Faults;

use super::campaign::Spec;
use super::invariants::assert_safe_and_converged;
use super::support::{Backend, Rig};
use crate::support::ledger::autobuyer_switches;

const OLD: &str = "kill-rename";
const NEW: &str = "kill-renamed";

/// Which of the two names the journal records.
async fn recorded(rig: &Rig) -> Vec<String> {
    let names = [OLD, NEW];
    rig.journal
        .store
        .campaigns()
        .recorded_among(&names)
        .await
        .expect("campaigns")
}

pub async fn killed_inside_the_hand_over_the_rename_happens_once_or_not_at_all(backend: Backend) {
    // Arrange: the campaign's first pass created everything and bought its first round.
    let old = Spec::new(OLD, 4);
    let rig = Rig::start(backend, &[old.file()], Faults::default()).await;
    let first = rig.run(&["once"]).await;
    assert!(first.status.success(), "{first:?}");
    let before = rig.sandbox.ledger();
    assert!(!before.purchases.is_empty(), "the first round bought");
    let new = Spec {
        name: NEW.into(),
        ..old.clone()
    };
    let (file, yaml) = new.file();
    let yaml = yaml.replace(
        &format!("name: {NEW}\n"),
        &format!("name: {NEW}\nrenamed_from: {OLD}\n"),
    );

    // Act: renamed with `renamed_from`; killed inside the hand-over; restarted until converged.
    rig.remove_file(&old.file().0);
    rig.write_file(&file, &yaml);
    rig.once_killed_at_faultpoint("before_commit:rename").await;
    let between = (recorded(&rig).await, rig.sandbox.ledger());
    rig.restart_until_converged().await;

    // Assert: not at all, then once; nothing created, stopped or started for it.
    assert_eq!(
        between.0,
        [OLD],
        "the killed hand-over left nothing half moved"
    );
    assert_eq!(between.1.purchases.len(), before.purchases.len());
    assert_eq!(recorded(&rig).await, [NEW]);
    let ledger = rig.sandbox.ledger();
    assert_eq!(ledger.projects.len(), 1, "{:?}", ledger.projects);
    assert_eq!(
        autobuyer_switches(&ledger),
        autobuyer_switches(&before),
        "autobuyers switched"
    );
    assert!(
        ledger.purchases.len() > before.purchases.len(),
        "bought on as {NEW}"
    );
    assert_safe_and_converged(&rig, &[new]).await;
}

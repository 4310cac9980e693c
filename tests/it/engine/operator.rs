//! An uncertain autobuyer creation: never re-sent, spending stops, an operator resolves it.

use std::collections::BTreeSet;

use linkrunner::effects::pass::PassOutcome;
use linkrunner::store::{IntentId, IntentKind, Resolution};
use linkrunner::views::report::campaign_status;
use linkrunner_sandbox::{AutobuyerState, Faults, Op};

use super::fixtures::ACME;
use super::support::{TestDb, World, sandbox_config};
use crate::support::ledger;

/// The arrangement both resolve tests share: acme-shoes whose autobuyer creation executed on
/// the marketplace but whose answer was cut short, after three passes.
pub struct Waiting {
    pub world: World,
    pub intent: IntentId,
    pub autobuyer_id: i64,
}

pub async fn autobuyer_creation_left_uncertain(db: TestDb) -> Waiting {
    let mut cfg = sandbox_config();
    cfg.faults = Faults {
        drop_after_commit_rate: 1.0,
        drop_ops: Some(BTreeSet::from([Op::CreateAutobuyer])),
        ..Faults::default()
    };
    let w = World::new(db, cfg).await;
    w.write_campaign("acme-shoes", ACME);
    for _ in 0..3 {
        w.pass(true).await;
    }
    let ledger = w.ledger();
    assert_eq!(
        ledger.autobuyers.len(),
        1,
        "created once on the marketplace"
    );
    let uncertain = w.recorded("acme-shoes").await.uncertain;
    assert_eq!(uncertain.len(), 1, "{uncertain:#?}");
    assert_eq!(uncertain[0].kind, IntentKind::CreateAutobuyer);
    w.sandbox.set_faults(Faults::default()).expect("faults off");
    Waiting {
        intent: uncertain[0].id,
        autobuyer_id: ledger.autobuyers[0].id,
        world: w,
    }
}

pub async fn uncertain_autobuyer_creation_waits_for_an_operator_and_is_never_resent(db: TestDb) {
    let Waiting {
        world: w,
        intent,
        autobuyer_id,
    } = autobuyer_creation_left_uncertain(db).await;

    let waiting = w.pass(true).await;
    let status = campaign_status(w.store(), "acme-shoes", chrono::Utc::now())
        .await
        .unwrap();
    let while_waiting = w.ledger();

    assert_eq!(
        waiting[0].outcome,
        PassOutcome::SpendingStopped,
        "{waiting:#?}"
    );
    assert!(
        status
            .spending_stopped
            .as_deref()
            .unwrap_or("")
            .contains("resolve"),
        "status says what to do: {status:#?}"
    );
    assert_eq!(status.uncertain[0].intent_id, intent.0);
    assert_eq!(
        ledger::requests(&while_waiting, Op::CreateAutobuyer),
        1,
        "never re-sent"
    );
    assert!(
        while_waiting.purchases.is_empty(),
        "nothing bought while waiting"
    );

    w.store()
        .intents()
        .resolve_intent(
            intent,
            Resolution::Created {
                remote_id: autobuyer_id,
            },
            "seen in the marketplace's web UI",
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    let resumed = w.pass(true).await;

    let after = w.ledger();
    assert!(resumed[0].converged(), "{resumed:#?}");
    assert_eq!(after.autobuyers.len(), 1, "still created once");
    assert_eq!(
        after.autobuyer(autobuyer_id).unwrap().state,
        AutobuyerState::Running
    );
    assert_eq!(
        after.purchases.len(),
        3,
        "spending resumed with a buy round"
    );
    w.converge(3).await;
    w.assert_invariants().await;
}

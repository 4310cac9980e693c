//! The steady state (issue 27): a converged campaign costs at most one link-list call per
//! reconciliation, counted by the sandbox, whether it runs autobuyers (whose links the pass
//! must see before it plans) or buys on a schedule.

use linkrunner::metrics::Purpose;
use linkrunner_sandbox::Op;

use super::fixtures::{ACME, BOLT};
use super::support::{TestDb, World, sandbox_config};
use crate::support::ledger;

pub async fn a_converged_campaign_costs_one_link_list_call_per_reconciliation(db: TestDb) {
    // Arrange: two campaigns (one with autobuyers and buy rounds, one with autobuyers, one
    // of them stopped) brought to convergence.
    let w = World::new(db, sandbox_config()).await;
    w.write_campaign("acme-shoes", ACME);
    w.write_campaign("bolt-bikes", BOLT);
    w.pass(true).await;
    w.converge(4).await;
    let before = w.ledger();
    let reconcile_before = w.engine.metrics().load.calls_for(Purpose::Reconcile);

    // Act: three reconciliations of the converged campaigns.
    for _ in 0..3 {
        let reports = w.pass(false).await;
        assert!(reports.iter().all(|r| r.converged()), "{reports:#?}");
    }

    // Assert: one list call per campaign per reconciliation, and nothing else.
    let after = w.ledger();
    let calls = ledger::all_requests(&after) - ledger::all_requests(&before);
    let lists = ledger::requests(&after, Op::ListLinks) - ledger::requests(&before, Op::ListLinks);
    assert_eq!(
        lists,
        2 * 3,
        "link-list calls for 2 campaigns over 3 reconciliations"
    );
    assert_eq!(
        calls, lists,
        "a converged reconciliation calls nothing but the list"
    );
    let counted = w.engine.metrics().load.calls_for(Purpose::Reconcile) - reconcile_before;
    assert_eq!(counted, 6, "the calls count as reconcile in the metrics");
    w.assert_invariants().await;
}

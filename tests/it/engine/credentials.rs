//! A 401 or 403 stops all spending for every campaign until the credentials work again.

use linkrunner::effects::pass::PassOutcome;
use linkrunner_sandbox::{Ledger, Op};

use super::fixtures::{ACME, DUNE};
use super::support::{TestDb, World, all_requests, pass_with, requests_total, sandbox_config};

const WRONG_TOKEN: &str = "a-token-the-marketplace-revoked";

async fn acme_and_dune(db: TestDb) -> World {
    let w = World::new(db, sandbox_config()).await;
    w.write_campaign("acme-shoes", ACME);
    w.write_campaign("dune-maps", DUNE);
    w
}

async fn global_halt(w: &World) -> Option<String> {
    let halts = w.store().halts().await.unwrap();
    halts.into_iter().find(|h| h.is_global()).map(|h| h.reason)
}

fn accepted_requests(l: &Ledger) -> u64 {
    all_requests(l)
        - l.requests
            .values()
            .filter_map(|m| m.get("unauthorized"))
            .sum::<u64>()
}

pub async fn rejected_credentials_stop_all_spending_until_they_work_again(db: TestDb) {
    let w = acme_and_dune(db).await;
    let rejected = w.engine_with_token(WRONG_TOKEN).await;

    let first = pass_with(&rejected, &w.campaigns(), true).await;
    let second = pass_with(&rejected, &w.campaigns(), true).await;

    let ledger = w.ledger();
    assert!(
        first
            .iter()
            .chain(&second)
            .all(|r| r.outcome == PassOutcome::SpendingStopped),
        "{first:#?} {second:#?}"
    );
    assert!(global_halt(&w).await.is_some(), "a global halt is recorded");
    assert_eq!(
        accepted_requests(&ledger),
        0,
        "nothing got through: {:?}",
        ledger.requests
    );
    assert!(ledger.projects.is_empty() && ledger.purchases.is_empty());
    assert!(ledger.autobuyers.is_empty() && ledger.filters.is_empty());

    w.pass(true).await;
    w.pass(true).await;
    w.converge(3).await;

    let resumed = w.ledger();
    assert_eq!(global_halt(&w).await, None, "the halt is lifted");
    assert_eq!(resumed.projects.len(), 2);
    assert!(!resumed.purchases.is_empty(), "spending resumed");
    w.assert_invariants().await;
}

pub async fn credentials_rejected_on_a_read_halt_every_campaign(db: TestDb) {
    let w = acme_and_dune(db).await;
    w.pass(true).await;
    w.converge(3).await;
    let before = w.ledger();
    let rejected = w.engine_with_token(WRONG_TOKEN).await;

    let reports = pass_with(&rejected, &w.campaigns(), true).await;
    let again = pass_with(&rejected, &w.campaigns(), true).await;

    let after = w.ledger();
    assert!(
        reports
            .iter()
            .chain(&again)
            .all(|r| r.outcome == PassOutcome::SpendingStopped),
        "{reports:#?} {again:#?}"
    );
    assert!(
        global_halt(&w).await.is_some(),
        "a 401 on a read halts spending too"
    );
    assert_eq!(after.purchases, before.purchases, "nothing bought");
    assert_eq!(accepted_requests(&after), accepted_requests(&before));
    assert_eq!(
        requests_total(&after, Op::BuyLinks),
        requests_total(&before, Op::BuyLinks),
        "no purchase even attempted"
    );

    let resumed = w.pass(true).await;

    assert_eq!(
        global_halt(&w).await,
        None,
        "the right token lifts the halt"
    );
    assert!(resumed.iter().all(|r| r.converged()), "{resumed:#?}");
    assert!(
        w.ledger().purchases.len() > before.purchases.len(),
        "spending resumed"
    );
    w.assert_invariants().await;
}

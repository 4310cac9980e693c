//! A 401 or 403 stops all spending of the account (here the one, default, account: every
//! campaign) until the credentials work again. Two accounts: `account_halts.rs`.

use linkrunner::effects::pass::PassOutcome;
use linkrunner_sandbox::{Ledger, Op};

use super::fixtures::{ACME, DUNE};
use super::support::{TestDb, World, pass_with, sandbox_config};
use crate::support::ledger;

const WRONG_TOKEN: &str = "a-token-the-marketplace-revoked";

async fn acme_and_dune(db: TestDb) -> World {
    let w = World::new(db, sandbox_config()).await;
    w.write_campaign("acme-shoes", ACME);
    w.write_campaign("dune-maps", DUNE);
    w
}

/// The default account's credentials halt (the deployment's one account's).
async fn global_halt(w: &World) -> Option<String> {
    let halts = w.store().halts().await.unwrap();
    let default = linkrunner::store::HaltScope::account("default");
    halts
        .into_iter()
        .find(|h| h.is_credentials() && h.scope == default)
        .map(|h| h.reason)
}

/// Two passes with the revoked token: in both, every campaign's spending stopped; and the
/// default account's halt is recorded (`why` says what recorded it).
async fn two_passes_with_the_revoked_token_stop_spending(w: &World, why: &str) {
    let rejected = w.engine_with_token(WRONG_TOKEN).await;
    let first = pass_with(&rejected, &w.campaigns(), true).await;
    let second = pass_with(&rejected, &w.campaigns(), true).await;
    assert!(
        first
            .iter()
            .chain(&second)
            .all(|r| r.outcome == PassOutcome::SpendingStopped),
        "{first:#?} {second:#?}"
    );
    assert!(global_halt(w).await.is_some(), "{why}");
}

fn accepted_requests(l: &Ledger) -> u64 {
    ledger::all_requests(l)
        - l.requests
            .values()
            .filter_map(|m| m.get("unauthorized"))
            .sum::<u64>()
}

pub async fn rejected_credentials_stop_all_spending_until_they_work_again(db: TestDb) {
    let w = acme_and_dune(db).await;

    two_passes_with_the_revoked_token_stop_spending(&w, "a global halt is recorded").await;

    let ledger = w.ledger();
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
    let before = w.buy_and_converge().await;

    two_passes_with_the_revoked_token_stop_spending(&w, "a 401 on a read halts spending too").await;

    let after = w.ledger();
    assert_eq!(after.purchases, before.purchases, "nothing bought");
    assert_eq!(accepted_requests(&after), accepted_requests(&before));
    assert_eq!(
        ledger::requests(&after, Op::BuyLinks),
        ledger::requests(&before, Op::BuyLinks),
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

/// Issue 32 (5): a 403 on one campaign's project (a `project_id` of another account), while
/// the same credentials read another project, halts that campaign only, naming the project:
/// the other campaign keeps buying, no global halt flaps on and off, and no credentials
/// alert's gauge is raised. A 403 everywhere still stops all spending.
pub async fn a_403_on_one_project_halts_that_campaign_only(db: TestDb) {
    let w = acme_and_dune(db).await;
    w.converge(3).await;
    let dune = w
        .recorded("dune-maps")
        .await
        .ids
        .project
        .expect("dune's project");
    let acme = w
        .recorded("acme-shoes")
        .await
        .ids
        .project
        .expect("acme's project");
    let foreign = |ids: &[i64]| {
        let mut b = w.sandbox.behaviour();
        b.foreign_projects = ids.iter().copied().collect();
        w.sandbox.set_behaviour(b).expect("behaviour");
    };
    foreign(&[dune.project_id]);
    let before = w.ledger();

    let first = w.pass(true).await;
    let second = w.pass(true).await;

    let of = |reports: &[linkrunner::effects::pass::CampaignReport], name: &str| {
        reports
            .iter()
            .find(|r| r.campaign == name)
            .cloned()
            .expect(name)
    };
    for reports in [&first, &second] {
        let d = of(reports, "dune-maps");
        assert_eq!(d.outcome, PassOutcome::Blocked, "{reports:#?}");
        let detail = d.detail.unwrap_or_default();
        assert!(
            detail.contains(&dune.project_id.to_string()) && detail.contains("403"),
            "the halt names the project and the answer: {detail}"
        );
        assert_ne!(
            of(reports, "acme-shoes").outcome,
            PassOutcome::SpendingStopped,
            "{reports:#?}"
        );
        assert_eq!(global_halt(&w).await, None, "no global halt: {reports:#?}");
    }
    let halts = w.store().halts().await.unwrap();
    let halt = halts
        .iter()
        .find(|h| h.scope == linkrunner::store::HaltScope::campaign("dune-maps"))
        .expect("dune's campaign halt");
    assert!(
        halt.reason.contains(&dune.project_id.to_string()),
        "{halt:?}"
    );
    let metrics = w.engine.metrics().render();
    assert!(
        metrics.contains("linkrunner_credentials_rejected 0"),
        "no credentials alert: {metrics}"
    );
    let after = w.ledger();
    assert!(
        after.purchases_of(acme.project_id).len() > before.purchases_of(acme.project_id).len(),
        "acme kept buying"
    );
    assert_eq!(
        after.purchases_of(dune.project_id).len(),
        before.purchases_of(dune.project_id).len(),
        "nothing bought for dune"
    );

    // The project readable again: the campaign's halt lifts by itself.
    foreign(&[]);
    w.pass(false).await;
    let halts = w.store().halts().await.unwrap();
    assert!(halts.is_empty(), "{halts:?}");

    // A 403 on every project: the credentials may be what is refused; everything stops.
    foreign(&[dune.project_id, acme.project_id]);
    let reports = w.pass(true).await;
    assert!(global_halt(&w).await.is_some(), "{reports:#?}");
    // The sample line: the HELP line also begins `linkrunner_credentials_rejected 1`.
    assert!(
        w.engine
            .metrics()
            .render()
            .lines()
            .any(|l| l == "linkrunner_credentials_rejected 1")
    );
    foreign(&[]);
    w.converge(3).await;
    assert_eq!(global_halt(&w).await, None);
    w.assert_invariants().await;
}

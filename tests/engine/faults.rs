//! Sandbox faults at high rates: 5xx before execution, 429s from a low server-wide rate
//! limit, and answers cut short after every kind of change was committed.

use linkrunner::sandbox::{Faults, Ledger};
use linkrunner::store::{IntentKind, Resolution};

use crate::fixtures::{ACME, BOLT, DUNE};
use crate::support::{
    TestDb, World, assert_link_limits, assert_no_duplicate_purchase, sandbox_commitment,
    sandbox_config,
};

/// Passes (each with a buy round) until everything converged; the caps bound the buying.
const MAX_PASSES: u32 = 40;

pub async fn faults_at_high_rates_never_duplicate_overspend_or_lose_a_purchase(db: TestDb) {
    let mut cfg = sandbox_config();
    cfg.seed = 20261122;
    cfg.faults = Faults {
        error_rate: 0.3,
        rate_limit: Some(12),
        drop_after_commit_rate: 0.3,
        ..Faults::default()
    };
    let w = World::new(db, cfg).await;
    w.write_campaign("acme-shoes", ACME);
    w.write_campaign("bolt-bikes", BOLT);
    w.write_campaign("dune-maps", DUNE);

    let mut passes = 0;
    let mut resolved = 0;
    loop {
        passes += 1;
        assert!(
            passes <= MAX_PASSES,
            "no convergence in {MAX_PASSES} passes under faults"
        );
        let reports = w.pass(true).await;
        assert_invariants_so_far(&w, &w.ledger()).await;
        resolved += act_as_operator(&w).await;
        let done = reports.iter().all(|r| r.converged() && r.uncertain == 0);
        if done && w.settled().await {
            break;
        }
    }

    let ledger = w.ledger();
    eprintln!(
        "faults: converged after {passes} passes, {resolved} operator resolution(s), {} purchase(s), {} 429(s)",
        ledger.purchases.len(),
        ledger.rate_limited
    );
    assert!(ledger.rate_limited > 0, "the rate limit answered 429s");
    assert!(
        !ledger.purchases.is_empty(),
        "rounds bought despite the faults"
    );
    w.assert_invariants().await;
}

/// Invariants that hold after every pass, converged or not: no duplicate, no cap exceeded.
async fn assert_invariants_so_far(w: &World, ledger: &Ledger) {
    assert_no_duplicate_purchase(ledger);
    for lc in w.campaigns() {
        let c = &lc.campaign;
        let projects = w.projects_of(ledger, c);
        assert!(
            sandbox_commitment(ledger, &projects) <= c.budget.monthly,
            "{}",
            c.name
        );
        assert_link_limits(ledger, c, &projects);
        let b = w
            .store()
            .budget(&c.name, chrono::Utc::now().date_naive())
            .await
            .unwrap();
        assert!(b.committed <= b.cap, "{}: {b:?}", c.name);
    }
}

/// What an operator does when a campaign waits for one: look at the marketplace (here, the
/// sandbox's ledger) and resolve each uncertain intent the engine will not settle itself.
async fn act_as_operator(w: &World) -> u32 {
    let mut n = 0;
    let ledger = w.ledger();
    for lc in w.campaigns() {
        let c = &lc.campaign;
        let r = w.recorded(&c.name).await;
        let projects = w.projects_of(&ledger, c);
        for i in &r.uncertain {
            let waits = i.kind == IntentKind::CreateAutobuyer
                || i.attempts >= crate::support::settings().max_attempts;
            if !waits || i.kind == IntentKind::Purchase {
                continue;
            }
            let name = i.request.get("name").and_then(|v| v.as_str());
            let known: Vec<i64> = r.ids.autobuyers.values().map(|a| a.id).collect();
            let found = match i.kind {
                IntentKind::CreateAutobuyer => ledger
                    .autobuyers
                    .iter()
                    .find(|a| {
                        projects.contains(&a.project_id)
                            && Some(a.name.as_str()) == name
                            && !known.contains(&a.id)
                    })
                    .map(|a| a.id),
                _ => None,
            };
            let resolution = match found {
                Some(remote_id) => Resolution::Created { remote_id },
                None => Resolution::NotCreated,
            };
            w.store()
                .resolve_intent(
                    i.id,
                    resolution,
                    "checked the marketplace",
                    chrono::Utc::now(),
                )
                .await
                .expect("resolve");
            n += 1;
        }
    }
    n
}

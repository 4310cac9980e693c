//! Sandbox faults at high rates: 5xx before execution, 429s from a low server-wide rate
//! limit, and answers cut short after every kind of change was committed.

use linkrunner::store::{IntentFilter, IntentKind, Resolution};
use linkrunner_sandbox::{Faults, Ledger};

use super::support::{
    TestDb, World, assert_link_limits, autobuyer_created_for, resolve, sandbox_config,
};
use crate::support::ledger;

/// Passes (each with a buy round) until everything converged; the caps bound the buying.
const MAX_PASSES: u32 = 80;

pub async fn faults_at_high_rates_never_duplicate_overspend_or_lose_a_purchase(db: TestDb) {
    let mut cfg = sandbox_config();
    cfg.seed = 20261122;
    cfg.faults = Faults {
        error_rate: 0.3,
        rate_limit: Some(5),
        drop_after_commit_rate: 0.3,
        ..Faults::default()
    };
    let w = World::new(db, cfg).await;
    w.write_fixture_campaigns();

    let mut passes = 0;
    let mut resolved = 0;
    let mut seen_uncertain = std::collections::HashMap::new();
    loop {
        passes += 1;
        assert!(
            passes <= MAX_PASSES,
            "no convergence in {MAX_PASSES} passes under faults"
        );
        let reports = w.pass(true).await;
        let ledger = w.ledger();
        if ledger.duplicate_purchases > 0 {
            // Evidence for the failure below: what the sandbox sold and what the journal did.
            eprintln!(
                "pass {passes}: {reports:#?}\n{}",
                purchase_evidence(&w, &ledger).await
            );
        }
        assert_invariants_so_far(&w, &ledger).await;
        resolved += act_as_operator(&w, &mut seen_uncertain).await;
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

/// Every purchase the sandbox made and every purchase intent of the journal, one per line.
async fn purchase_evidence(w: &World, ledger: &Ledger) -> String {
    let mut out = String::new();
    for p in &ledger.purchases {
        out.push_str(&format!("sandbox: {p:?}\n"));
    }
    for lc in w.campaigns() {
        let filter = IntentFilter {
            campaign: Some(lc.campaign.name.clone()),
            states: Vec::new(),
            kind: Some(IntentKind::Purchase),
        };
        for i in w
            .store()
            .intents()
            .find_intents(filter)
            .await
            .expect("intents")
        {
            out.push_str(&format!(
                "journal: #{} {} attempts={} {} {} error={:?} answer={:?}\n",
                i.id, i.natural_key, i.attempts, i.state, i.request, i.error, i.answer
            ));
        }
    }
    out
}

/// Invariants that hold after every pass, converged or not: no duplicate, no cap exceeded.
async fn assert_invariants_so_far(w: &World, ledger: &Ledger) {
    ledger::assert_no_duplicate_purchase(ledger);
    for lc in w.campaigns() {
        let c = &lc.campaign;
        let projects = w.projects_of(ledger, c);
        assert!(
            ledger::commitment(ledger, &projects) <= c.budget.monthly,
            "{}",
            c.name
        );
        assert_link_limits(ledger, c, &projects);
        let b = w.budget(&c.name).await;
        assert!(b.committed <= b.cap, "{}: {b:?}", c.name);
    }
}

/// What an operator does when a campaign waits for one: look at the marketplace (here, the
/// sandbox's ledger) and resolve each uncertain intent the engine will not settle itself —
/// an autobuyer creation, a free creation past its attempts, and a purchase the link list
/// has not settled for three passes (`status` says its absence proves nothing yet).
pub async fn act_as_operator(w: &World, seen: &mut std::collections::HashMap<i64, u32>) -> u32 {
    let mut n = 0;
    let ledger = w.ledger();
    for lc in w.campaigns() {
        let c = &lc.campaign;
        let r = w.recorded(&c.name).await;
        let projects = w.projects_of(&ledger, c);
        for i in &r.uncertain {
            let passes = seen.entry(i.id.0).or_default();
            *passes += 1;
            if i.kind == IntentKind::Purchase {
                if *passes >= 3 {
                    n += resolve_purchase(w, &ledger, &projects, i).await;
                }
                continue;
            }
            let waits = i.kind == IntentKind::CreateAutobuyer
                || i.attempts >= crate::support::app::fast_settings().max_attempts;
            if !waits {
                continue;
            }
            let found = match i.kind {
                IntentKind::CreateAutobuyer => autobuyer_created_for(&ledger, &projects, &r, i),
                _ => None,
            };
            let resolution = match found {
                Some(remote_id) => Resolution::Created { remote_id },
                None => Resolution::NotCreated,
            };
            resolve(w, i, resolution, "checked the marketplace").await;
            n += 1;
        }
    }
    n
}

/// Resolves an uncertain purchase from what the sandbox sold: its link id, or not created.
async fn resolve_purchase(
    w: &World,
    ledger: &Ledger,
    projects: &std::collections::HashSet<i64>,
    i: &linkrunner::store::IntentRow,
) -> u32 {
    let get = |k: &str| i.request.get(k).and_then(|v| v.as_i64());
    let sold = ledger.purchases.iter().find(|p| {
        projects.contains(&p.project_id)
            && Some(p.page_id) == get("page_id")
            && Some(p.url_id) == get("url_id")
    });
    let resolution = match sold {
        Some(p) => Resolution::Created {
            remote_id: p.link_id,
        },
        None => Resolution::NotCreated,
    };
    resolve(w, i, resolution, "checked the project's links").await;
    1
}

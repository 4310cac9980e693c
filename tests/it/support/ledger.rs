//! Reading the sandbox's ledger, the marketplace's side of every money assertion: requests
//! counted by operation, what a campaign's projects hold, no page bought twice, autobuyers by
//! name.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use linkrunner::money::Money;
use linkrunner_sandbox::{AutobuyerRecord, Ledger, Op, SandboxHandle};

/// How many requests of `op` the sandbox received, whatever their outcome.
pub fn requests(ledger: &Ledger, op: Op) -> u64 {
    ledger
        .requests
        .get(op.name())
        .map(|by_outcome| by_outcome.values().sum())
        .unwrap_or(0)
}

/// Requests of every operation, whatever their outcome.
pub fn all_requests(ledger: &Ledger) -> u64 {
    ledger.requests.values().flat_map(|m| m.values()).sum()
}

/// Requests of operations that change something, by operation, whatever their outcome.
pub fn changing_calls(l: &Ledger) -> BTreeMap<String, u64> {
    l.requests
        .iter()
        .filter(|(op, _)| {
            Op::ALL
                .iter()
                .any(|o| o.is_change() && o.name() == op.as_str())
        })
        .map(|(op, by_outcome)| (op.clone(), by_outcome.values().sum()))
        .collect()
}

/// The sandbox refused no purchase as a duplicate, and no page was bought twice for one URL
/// of one project.
pub fn assert_no_duplicate_purchase(ledger: &Ledger) {
    assert_eq!(
        ledger.duplicate_purchases, 0,
        "the sandbox saw a duplicate purchase"
    );
    let mut seen = HashSet::new();
    for p in &ledger.purchases {
        assert!(
            seen.insert((p.project_id, p.page_id, p.url_id)),
            "page {} bought twice for URL {} of project {}",
            p.page_id,
            p.url_id,
            p.project_id
        );
    }
}

/// What the marketplace holds against `projects`, by the rule of docs/operating.md#money
/// (`Ledger::commitment`): running autobuyers' budgets, the rent of links bought by purchase
/// calls and by stopped autobuyers; links that left count nothing.
pub fn commitment(ledger: &Ledger, projects: &HashSet<i64>) -> Money {
    projects
        .iter()
        .map(|p| ledger.commitment(*p))
        .fold(Money::ZERO, |a, m| a.checked_add(m).expect("sum"))
}

/// The sandbox's autobuyers named `name`, oldest first (a replacement keeps the name).
pub fn autobuyers_named(ledger: &Ledger, name: &str) -> Vec<AutobuyerRecord> {
    let mut all: Vec<_> = ledger
        .autobuyers
        .iter()
        .filter(|a| a.name == name)
        .cloned()
        .collect();
    all.sort_by_key(|a| a.id);
    all
}

/// Waits (up to 5 s) until `check` holds for the sandbox's ledger; returns the last ledger
/// either way so the caller's assertion shows what was there.
pub async fn ledger_when(sandbox: &SandboxHandle, check: impl Fn(&Ledger) -> bool) -> Ledger {
    let ledger = || async { Some(sandbox.ledger()).filter(|l| check(l)) };
    let found = super::wait::poll_until(Duration::from_secs(5), ledger).await;
    found.unwrap_or_else(|| sandbox.ledger())
}

/// Autobuyers created, stopped and started on the marketplace, in that order: unchanged by
/// what must neither create, stop nor start one (a rename).
pub fn autobuyer_switches(ledger: &Ledger) -> [u64; 3] {
    [Op::CreateAutobuyer, Op::StopAutobuyers, Op::StartAutobuyers].map(|op| requests(ledger, op))
}

/// Makes the sandbox's autobuyers careless (they buy pages their project already holds for the
/// URL, past their limits), lets each buy up to `max_per_autobuyer`, and returns the pages now
/// held twice, as (URL id, page id), sorted. Panics if there is none.
pub fn careless_autobuyers_buy_held_pages(
    sandbox: &SandboxHandle,
    max_per_autobuyer: usize,
) -> Vec<(i64, i64)> {
    let mut b = sandbox.behaviour();
    b.autobuy_buys_held = true;
    b.autobuy_ignores_limits = true;
    sandbox.set_behaviour(b).expect("a careless autobuyer");
    sandbox.autobuy_now(max_per_autobuyer);
    let mut doubles: Vec<(i64, i64)> = sandbox
        .ledger()
        .purchases
        .iter()
        .filter(|p| p.duplicate)
        .map(|p| (p.url_id, p.page_id))
        .collect();
    doubles.sort();
    doubles.dedup();
    assert!(!doubles.is_empty(), "the autobuyer bought a held page");
    doubles
}

//! What must hold after any kill and restart, read from the sandbox's ledger (the truth of
//! what was bought) and the journal (what the binary believes).

use std::collections::HashSet;

use linkrunner::money::Money;
use linkrunner_sandbox::{AutobuyerState, Ledger, Purchase};

use super::campaign::Spec;
use super::support::Rig;

/// The marketplace projects created for the campaign's domain (a free creation may have been
/// sent twice when its outcome was unknown; that costs nothing).
fn projects_of(ledger: &Ledger, spec: &Spec) -> HashSet<i64> {
    ledger
        .projects
        .iter()
        .filter(|p| p.domain == spec.domain)
        .map(|p| p.id)
        .collect()
}

fn purchases_of<'a>(ledger: &'a Ledger, spec: &Spec) -> Vec<&'a Purchase> {
    let projects = projects_of(ledger, spec);
    ledger
        .purchases
        .iter()
        .filter(|p| projects.contains(&p.project_id))
        .collect()
}

/// No page was bought twice for the same promoted URL, in any project of the campaign.
pub fn assert_no_duplicate_purchase(ledger: &Ledger, spec: &Spec) {
    assert_eq!(ledger.duplicate_purchases, 0, "sandbox counted duplicates");
    let mut seen = HashSet::new();
    for p in purchases_of(ledger, spec) {
        assert!(
            seen.insert((p.page_id, p.url_id)),
            "{}: page {} bought twice for URL {}",
            spec.name,
            p.page_id,
            p.url_id
        );
    }
}

/// Sandbox-side: links bought plus running autobuyers' budgets stay within the monthly cap,
/// and no more links than `total_links` were bought.
pub fn assert_within_caps(ledger: &Ledger, spec: &Spec) {
    let projects = projects_of(ledger, spec);
    let purchases = purchases_of(ledger, spec);
    let bought = purchases
        .iter()
        .fold(Money::ZERO, |acc, p| acc.checked_add(p.price).unwrap());
    let autobuyers = ledger
        .autobuyers
        .iter()
        .filter(|a| projects.contains(&a.project_id) && a.state == AutobuyerState::Running)
        .flat_map(|a| &a.urls)
        .fold(Money::ZERO, |acc, u| {
            acc.checked_add(u.monthly_budget).unwrap()
        });
    let committed = bought.checked_add(autobuyers).unwrap();
    assert!(
        committed <= spec.monthly_cap,
        "{}: links {bought} + running autobuyers {autobuyers} = {committed} RUB/month, over the cap {}",
        spec.name,
        spec.monthly_cap
    );
    assert!(
        purchases.len() <= spec.total_links as usize,
        "{}: {} links bought, total_links is {}",
        spec.name,
        purchases.len(),
        spec.total_links
    );
}

/// Every link the marketplace sold is a held link in the journal, and the journal holds
/// nothing the marketplace did not sell.
pub async fn assert_every_purchase_recorded(rig: &Rig, ledger: &Ledger, spec: &Spec) {
    let held = rig
        .journal
        .store
        .links()
        .held_links(&spec.name)
        .await
        .expect("held links");
    let purchases = purchases_of(ledger, spec);
    for p in &purchases {
        let recorded = held.iter().any(|h| {
            h.link_id.is_none_or(|id| id == p.link_id)
                && h.page_id == p.page_id
                && h.url_id == p.url_id
                && h.text_id == p.text_id
        });
        assert!(
            recorded,
            "{}: link {} (page {}) was bought but is not in the journal",
            spec.name, p.link_id, p.page_id
        );
    }
    assert_eq!(
        held.len(),
        purchases.len(),
        "{}: the journal holds {} links, the marketplace sold {}",
        spec.name,
        held.len(),
        purchases.len()
    );
}

/// The campaign is where its file wants it: every link bought, each autobuyer created once
/// and in its wanted state, nothing uncertain left in the journal.
pub async fn assert_converged(rig: &Rig, ledger: &Ledger, spec: &Spec) {
    let projects = projects_of(ledger, spec);
    assert_eq!(
        purchases_of(ledger, spec).len(),
        spec.total_links as usize,
        "{}: not every link was bought",
        spec.name
    );
    for (name, running, _) in &spec.autobuyers {
        let found: Vec<_> = ledger
            .autobuyers
            .iter()
            .filter(|a| projects.contains(&a.project_id) && &a.name == name)
            .collect();
        assert_eq!(
            found.len(),
            1,
            "{}: autobuyer {name} created {} times",
            spec.name,
            found.len()
        );
        let want = if *running {
            AutobuyerState::Running
        } else {
            AutobuyerState::Stopped
        };
        assert_eq!(found[0].state, want, "{}: autobuyer {name}", spec.name);
    }
    let intents = rig
        .journal
        .store
        .intents()
        .find_intents(Default::default())
        .await
        .expect("intents");
    let open: Vec<_> = intents
        .iter()
        .filter(|i| i.campaign == spec.name && !matches!(i.state.as_str(), "succeeded" | "failed"))
        .map(|i| (i.id.0, i.kind.as_str(), i.state.as_str()))
        .collect();
    assert!(
        open.is_empty(),
        "{}: intents left open: {open:?}",
        spec.name
    );
}

/// All of the above for every campaign.
pub async fn assert_safe_and_converged(rig: &Rig, specs: &[Spec]) {
    let ledger = rig.sandbox.ledger();
    for spec in specs {
        assert_no_duplicate_purchase(&ledger, spec);
        assert_within_caps(&ledger, spec);
        assert_every_purchase_recorded(rig, &ledger, spec).await;
        assert_converged(rig, &ledger, spec).await;
    }
}

//! `report --month` after real passes against the sandbox: the month's links and rent are the
//! sandbox ledger's purchases of that month and their prices, the autobuyer budgets are those
//! of the autobuyers it runs, and the columns add up to what the marketplace holds.

use linkrunner::money::Money;
use linkrunner::views::month::{self, Month, TOTAL};
use linkrunner_sandbox::AutobuyerState;

use super::fixtures::{ACME, DUNE};
use super::support::{TestDb, World};
use crate::support::ledger;

fn sum(ms: impl Iterator<Item = Money>) -> Money {
    ms.fold(Money::ZERO, |a, m| a.checked_add(m).expect("sum"))
}

pub async fn the_month_report_sums_to_the_sandbox_ledgers_purchases_and_autobuyers(db: TestDb) {
    let w = World::bought_and_converged(db, &[("acme-shoes", ACME), ("dune-maps", DUNE)]).await;

    let ledger = w.ledger();
    let first = ledger.purchases.first().expect("the rounds bought links");
    let m = Month::of(first.at);
    let r = month::month_report(w.store(), m).await.unwrap();

    assert_eq!(r.campaigns.len(), 2, "{r:#?}");
    for lc in w.campaigns() {
        let c = &lc.campaign;
        let projects = w.projects_of(&ledger, c);
        let line = r.campaigns.iter().find(|l| l.campaign == c.name).unwrap();
        let bought: Vec<_> = ledger
            .purchases
            .iter()
            .filter(|p| projects.contains(&p.project_id) && p.autobuyer_id.is_none())
            .filter(|p| m.start() <= p.at && p.at < m.end())
            .collect();
        assert!(!bought.is_empty(), "{} bought links", c.name);
        assert_eq!(line.links_bought, bought.len() as i64, "{}", c.name);
        assert_eq!(
            line.rent_committed,
            sum(bought.iter().map(|p| p.price)),
            "{}",
            c.name
        );
        let budgets = sum(ledger
            .autobuyers
            .iter()
            .filter(|a| projects.contains(&a.project_id) && a.state == AutobuyerState::Running)
            .flat_map(|a| a.urls.iter().map(|u| u.monthly_budget)));
        assert_eq!(line.autobuyer_budgets, budgets, "{}", c.name);
        assert_eq!(line.released, Money::ZERO);
        assert_eq!(
            line.net_change,
            ledger::commitment(&ledger, &projects),
            "{}",
            c.name
        );
    }
    assert_eq!(r.total.campaign, TOTAL);
    assert_eq!(
        month::month_total(w.store(), m).await.unwrap(),
        r.total,
        "the summary's total (the ledger by kind and reason only) is the report's"
    );
    assert_eq!(
        r.total.rent_committed,
        sum(ledger
            .purchases
            .iter()
            .filter(|p| p.autobuyer_id.is_none())
            .map(|p| p.price))
    );
    assert_eq!(
        r.total.autobuyer_budgets,
        Money::from_rubles(1000),
        "acme-auto runs"
    );

    let before = Month::parse(
        &(m.start() - chrono::Days::new(1))
            .format("%Y-%m")
            .to_string(),
    )
    .unwrap();
    let quiet = month::month_report(w.store(), before).await.unwrap();
    assert!(
        quiet
            .campaigns
            .iter()
            .all(|l| l.net_change == Money::ZERO && l.links_bought == 0),
        "nothing moved the month before: {quiet:#?}"
    );
    assert_eq!(
        month::month_total(w.store(), before).await.unwrap(),
        quiet.total
    );
    let csv = month::render_csv(&r);
    assert_eq!(
        csv.lines().count(),
        4,
        "header, two campaigns, the total: {csv}"
    );
}

//! Issue 24 (5): a changed autobuyer spec applied by replacement, end to end against the
//! sandbox: the old autobuyer stopped, a new one of the same name created with what is left of
//! the file's limit and started; a spec changed back created again; a replacement the cap
//! refuses stops nothing. Every check is on the sandbox's ledger (what the marketplace holds).

use linkrunner::decide::plan::{self, Action};
use linkrunner::effects::pass::PassOutcome;
use linkrunner::money::Money;
use linkrunner_sandbox::{AutobuyerRecord, AutobuyerState, Ledger};

use super::support::{TestDb, World, sandbox_config};
use crate::support::{campaigns, ledger};

/// One URL, an autobuyer with `budget` RUB and a total limit of 5 links, under `cap`.
fn file(budget: i64, cap: i64) -> String {
    let head = campaigns::head(
        "kit-shop",
        "https://kit.example",
        "https://kit.example/kits",
        &["#a#kits#/a#"],
    );
    format!(
        r##"{head}budget:
  monthly: {cap}
  max_link_price: 100
  daily_links: 2
  total_links: 10
filters:
  - name: kit-cheap
    price_rent_to: 100
autobuyers:
  - name: kit-auto
    filter: kit-cheap
    state: running
    urls:
      - {{ url: "https://kit.example/kits", monthly_budget: {budget}, total_links_limit: 5, daily_links_limit: 5 }}
"##
    )
}

/// The sandbox's autobuyers named `kit-auto`, oldest first.
fn kit_autobuyers(ledger: &Ledger) -> Vec<AutobuyerRecord> {
    ledger::autobuyers_named(ledger, "kit-auto")
}

fn running(ledger: &Ledger) -> Vec<AutobuyerRecord> {
    kit_autobuyers(ledger)
        .into_iter()
        .filter(|a| a.state == AutobuyerState::Running)
        .collect()
}

/// A world whose `kit-auto` (budget 300) runs and has bought two links.
async fn kit_with_two_links_bought(db: TestDb) -> World {
    let mut cfg = sandbox_config();
    cfg.autobuyers_start_running = true;
    let w = World::new(db, cfg).await;
    w.write_campaign("kit-shop", &file(300, 2000));
    w.converge(3).await;
    let bought = w.sandbox.autobuy_now(2);
    assert_eq!(bought.len(), 2, "the autobuyer bought two links");
    // A pass reads the list: the journal now counts both links.
    w.converge(3).await;
    w
}

/// Rent of the links the sandbox sold to autobuyers.
fn autobuyer_rent(ledger: &Ledger) -> Money {
    ledger
        .purchases
        .iter()
        .filter(|p| p.autobuyer_id.is_some())
        .fold(Money::ZERO, |a, p| a.checked_add(p.price).unwrap())
}

pub async fn a_changed_spec_is_replaced_with_what_is_left_of_the_limit(db: TestDb) {
    let w = kit_with_two_links_bought(db).await;
    let old_id = running(&w.ledger())[0].id;
    let changed = file(450, 2000);
    w.write_campaign("kit-shop", &changed);

    let p = plan::plan_campaign(
        &campaigns::load_one(&changed),
        &w.recorded("kit-shop").await,
        false,
    );
    let text = linkrunner::views::report::render_plan(&p);
    let reports = w.pass(false).await;

    // The plan: stop, settle, replace, with `-`/`+` lines and the money.
    let replace = p
        .actions
        .iter()
        .find(|a| matches!(a, Action::ReplaceAutobuyer { .. }))
        .expect("a replacement is planned");
    let Action::ReplaceAutobuyer { adds, urls, .. } = replace else {
        unreachable!()
    };
    assert_eq!(*adds, Money::from_rubles(450));
    assert_eq!(
        (urls[0].file_limit, urls[0].bought, urls[0].left),
        (5, 2, 3)
    );
    assert!(
        text.contains(&format!("- id {old_id}: budget 300 RUB/month")),
        "{text}"
    );
    assert!(text.contains("+ new: budget 450 RUB/month"), "{text}");
    assert!(
        text.contains("total_links_limit 3 (5 in the file less 2 bought before)"),
        "{text}"
    );
    // The marketplace: the old one stopped, one new one of the same name running with 3 left.
    assert_eq!(reports[0].outcome, PassOutcome::Converged, "{reports:#?}");
    let ledger = w.ledger();
    let all = kit_autobuyers(&ledger);
    assert_eq!(all.len(), 2, "one replacement: {all:?}");
    assert_eq!((all[0].id, all[0].state), (old_id, AutobuyerState::Stopped));
    assert_eq!(all[1].state, AutobuyerState::Running);
    assert_eq!(all[1].urls[0].total_links_limit, 3);
    assert_eq!(all[1].urls[0].monthly_budget, Money::from_rubles(450));
    // The money: the old one's links at their rent plus the new budget, as the ledger says.
    let b = w.recorded("kit-shop").await.budget;
    let expected = autobuyer_rent(&ledger)
        .checked_add(Money::from_rubles(450))
        .unwrap();
    assert_eq!(b.committed, expected);
    let again = w.pass(false).await;
    assert_eq!(again[0].outcome, PassOutcome::Converged, "{again:#?}");
    assert_eq!(
        kit_autobuyers(&w.ledger()).len(),
        2,
        "a second pass replaces nothing"
    );
    w.assert_invariants().await;
}

pub async fn a_spec_changed_back_is_created_again(db: TestDb) {
    let w = kit_with_two_links_bought(db).await;

    for budget in [450, 300] {
        w.write_campaign("kit-shop", &file(budget, 2000));
        let reports = w.pass(false).await;
        assert_eq!(reports[0].outcome, PassOutcome::Converged, "{reports:#?}");
    }

    let ledger = w.ledger();
    let all = kit_autobuyers(&ledger);
    assert_eq!(all.len(), 3, "300 → 450 → 300: {all:?}");
    let now = running(&ledger);
    assert_eq!(now.len(), 1, "one runs: {all:?}");
    assert_eq!(now[0].id, all[2].id);
    assert_eq!(now[0].urls[0].monthly_budget, Money::from_rubles(300));
    w.assert_invariants().await;
}

pub async fn a_replacement_the_cap_refuses_stops_nothing(db: TestDb) {
    let w = kit_with_two_links_bought(db).await;
    let before = w.ledger();
    let old_id = running(&before)[0].id;
    // The links stay counted at their rent: rent + 1000 does not fit under 1000.
    let changed = file(1000, 1000);
    w.write_campaign("kit-shop", &changed);

    let p = plan::plan_campaign(
        &campaigns::load_one(&changed),
        &w.recorded("kit-shop").await,
        false,
    );
    let reports = w.pass(false).await;

    assert!(
        p.unapplied
            .iter()
            .any(|n| n.contains("kit-auto is not replaced, and the old one")),
        "{:?}",
        p.notices
    );
    assert!(
        !p.actions
            .iter()
            .any(|a| matches!(a, Action::SetAutobuyer { running: false, .. })),
        "nothing is stopped: {:?}",
        p.actions
    );
    assert_eq!(reports[0].outcome, PassOutcome::Blocked, "{reports:#?}");
    let ledger = w.ledger();
    let all = kit_autobuyers(&ledger);
    assert_eq!(all.len(), 1, "nothing created: {all:?}");
    assert_eq!((all[0].id, all[0].state), (old_id, AutobuyerState::Running));
    assert_eq!(
        ledger.requests_of(linkrunner_sandbox::Op::StopAutobuyers, "ok"),
        before.requests_of(linkrunner_sandbox::Op::StopAutobuyers, "ok"),
        "no stop was sent"
    );
    w.assert_invariants().await;
}

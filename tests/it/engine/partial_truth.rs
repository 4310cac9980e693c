//! Issue 11's regressions: the engine against a marketplace that shows only part of the
//! truth — a link list that shows a first page only, purchases whose answers are cut after
//! commit, autobuyers that really buy, answers that say "error" with ids, links that leave,
//! and an autobuyer renamed near the cap. Every check is on the sandbox's ledger (what was
//! really sold), against the journal (what linkrunner counts).

use std::collections::HashSet;
use std::time::Duration;

use linkrunner::campaign::Campaign;
use linkrunner::decide::plan;
use linkrunner::effects::EngineSettings;
use linkrunner::effects::pass::PassOutcome;
use linkrunner::money::Money;
use linkrunner_sandbox::{AutobuyerState, Behaviour, Faults, LinkStatus, ListPaging, Op};

use super::fixtures::{BOLT, DUNE};
use super::support::{TestDb, World, pass_with, sandbox_config};
use crate::support::app::fast_settings;
use crate::support::campaigns;
use crate::support::ledger;

fn with_grace(ms: i64) -> EngineSettings {
    EngineSettings {
        settle_grace: chrono::Duration::milliseconds(ms),
        ..fast_settings()
    }
}

/// After any pass: no page bought twice for a URL by a purchase call, the marketplace's
/// commitment (the rule of docs/operating.md#money) within every cap, and the journal counting no less than it.
async fn assert_safe_so_far(w: &World) {
    let ledger = w.ledger();
    for lc in w.campaigns() {
        let c = &lc.campaign;
        let projects = w.projects_of(&ledger, c);
        for p in &projects {
            let twice = ledger.duplicates_by_purchase_calls(*p);
            assert!(
                twice.is_empty(),
                "{}: pages bought again: {twice:?}",
                c.name
            );
        }
        let sold = ledger::commitment(&ledger, &projects);
        assert!(
            sold <= c.budget.monthly,
            "{}: {sold} RUB over the cap",
            c.name
        );
        let b = w.budget(&c.name).await;
        assert!(
            b.committed >= sold,
            "{}: journal counts {} < sold {sold}",
            c.name,
            b.committed
        );
    }
}

fn project_of(w: &World, c: &Campaign) -> i64 {
    let ledger = w.ledger();
    let projects: HashSet<i64> = w.projects_of(&ledger, c);
    assert_eq!(projects.len(), 1, "{}: one project", c.name);
    *projects.iter().next().unwrap()
}

pub async fn a_first_page_list_and_purchases_cut_after_commit_never_buy_a_page_twice(db: TestDb) {
    let mut cfg = sandbox_config();
    cfg.behaviour = Behaviour {
        list_page_size: Some(2),
        list_paging: ListPaging::None,
        ..Behaviour::default()
    };
    cfg.faults = Faults {
        drop_after_commit_rate: 0.5,
        drop_ops: Some([Op::BuyLinks].into()),
        ..Faults::default()
    };
    let w = World::new(db, cfg).await;
    w.write_fixture_campaigns();
    let engine = w.engine_with(with_grace(1000)).await;

    for _ in 0..4 {
        pass_with(&engine, &w.campaigns(), true).await;
        assert_safe_so_far(&w).await;
        tokio::time::sleep(Duration::from_millis(1100)).await;
    }

    let ledger = w.ledger();
    ledger::assert_no_duplicate_purchase(&ledger);
    assert!(
        ledger.purchases.len() >= 4,
        "the scenario bought: {:?}",
        ledger.purchases
    );
    assert!(
        once_uncertain_purchases(&w).await > 0,
        "cut answers made purchases uncertain"
    );
}

/// Purchases of every campaign that were uncertain at some point (their pages are blocked).
async fn once_uncertain_purchases(w: &World) -> usize {
    let mut n = 0;
    for lc in w.campaigns() {
        let r = w.recorded(&lc.campaign.name).await;
        n += r.blocked.len() + r.purchases.iter().filter(|i| i.rebuy_blocked).count();
    }
    n
}

fn zed() -> String {
    campaigns::head(
        "zed-tools",
        "https://zed.example",
        "https://zed.example/tools",
        &["#a#zed tools#/a#"],
    ) + r##"budget:
  monthly: 1500
  max_link_price: 100
  daily_links: 2
  total_links: 10
filters:
  - name: zed-cheap
    price_rent_to: 100
autobuyers:
  - name: zed-auto
    filter: zed-cheap
    state: running
    urls:
      - { url: "https://zed.example/tools", monthly_budget: 1000, total_links_limit: 5, daily_links_limit: 2 }
"##
}

pub async fn renaming_an_autobuyer_near_the_cap_converges_in_one_pass(db: TestDb) {
    let mut cfg = sandbox_config();
    cfg.autobuyers_start_running = true;
    let w = World::new(db, cfg).await;
    w.write_campaign("zed-tools", &zed());
    w.pass(true).await;
    w.sandbox.autobuy_now(1);
    let renamed = zed().replace("name: zed-auto", "name: zed-auto-v2");
    w.write_campaign("zed-tools", &renamed);

    let c = campaigns::load_one(&renamed);
    let p = plan::plan_campaign(&c, &w.recorded("zed-tools").await, true);
    assert!(p.unapplied.is_empty(), "{:?}", p.notices);
    assert!(p.money.worst_after_round <= p.money.cap, "{:?}", p.money);
    let engine = w.engine_with(with_grace(300)).await;
    let reports = pass_with(&engine, &w.campaigns(), true).await;

    assert_eq!(reports[0].outcome, PassOutcome::Converged, "{reports:#?}");
    let ledger = w.ledger();
    let state = |n: &str| {
        ledger
            .autobuyers
            .iter()
            .find(|a| a.name == n)
            .map(|a| a.state)
    };
    assert_eq!(state("zed-auto"), Some(AutobuyerState::Stopped));
    assert_eq!(state("zed-auto-v2"), Some(AutobuyerState::Running));
    assert_eq!(ledger.autobuyers.len(), 2);
    assert_safe_so_far(&w).await;
    w.assert_invariants().await;
}

fn ivy() -> String {
    super::fixtures::IVY_HEAD.to_string()
        + r##"budget:
  monthly: 1200
  max_link_price: 150
  daily_links: 10
  total_links: 40
buy:
  schedule: "0 9 * * *"
  link_type_id: 1
  per_run: 2
  search:
    price_rent_to: 150
filters:
  - name: ivy-cheap
    price_rent_to: 150
autobuyers:
  - name: ivy-auto
    filter: ivy-cheap
    state: running
    urls:
      - { url: "https://ivy.example/seeds", monthly_budget: 600, total_links_limit: 20, daily_links_limit: 10 }
"##
}

pub async fn autobuyers_that_really_buy_never_have_their_pages_bought_again_and_count_once_stopped(
    db: TestDb,
) {
    let mut cfg = sandbox_config();
    cfg.autobuyers_start_running = true;
    let w = World::new(db, cfg).await;
    w.write_campaign("ivy-garden", &ivy());

    for _ in 0..4 {
        w.pass(true).await;
        w.sandbox.autobuy_now(3);
        assert_safe_so_far(&w).await;
    }
    w.write_campaign(
        "ivy-garden",
        &ivy().replace("state: running", "state: stopped"),
    );
    for _ in 0..5 {
        w.sandbox.autobuy_now(3);
        w.pass(true).await;
        assert_safe_so_far(&w).await;
    }

    let ledger = w.ledger();
    let c = campaigns::load_one(&ivy());
    let project = project_of(&w, &c);
    assert!(
        ledger.purchases.iter().any(|p| p.autobuyer_id.is_some()),
        "the autobuyer bought"
    );
    assert_eq!(ledger.autobuyers[0].state, AutobuyerState::Stopped);
    let b = w.budget("ivy-garden").await;
    assert_eq!(
        b.committed,
        ledger.commitment(project),
        "journal = ledger once settled"
    );
    w.assert_invariants().await;
}

pub async fn an_uncertain_start_then_a_flip_back_to_stopped_is_stopped_and_counted_until_then(
    db: TestDb,
) {
    let w = World::new(db, sandbox_config()).await;
    w.write_campaign("bolt-bikes", BOLT);
    w.pass(true).await;
    let running = BOLT.replace("    state: stopped", "    state: running");
    w.write_campaign("bolt-bikes", &running);
    w.sandbox
        .set_faults(Faults {
            drop_after_commit_rate: 1.0,
            drop_ops: Some([Op::StartAutobuyers].into()),
            ..Faults::default()
        })
        .unwrap();
    w.pass(true).await;
    w.sandbox.set_faults(Faults::default()).unwrap();
    let uncertain = w.recorded("bolt-bikes").await;
    assert_eq!(uncertain.uncertain.len(), 1, "the start is uncertain");
    let stops_before = ledger::requests(&w.ledger(), Op::StopAutobuyers);

    w.write_campaign("bolt-bikes", BOLT);
    let counted = w.budget("bolt-bikes").await;
    assert_eq!(counted.committed, Money::from_kopecks(750_050));
    let reports = w.pass(true).await;

    let ledger = w.ledger();
    let summer = ledger
        .autobuyers
        .iter()
        .find(|a| a.name == "bikes-summer")
        .unwrap();
    assert_eq!(summer.state, AutobuyerState::Stopped, "{reports:#?}");
    assert!(
        ledger::requests(&ledger, Op::StopAutobuyers) > stops_before,
        "a stop was sent"
    );
    w.converge(3).await;
    w.assert_invariants().await;
}

pub async fn a_purchase_answered_as_an_error_with_ids_is_settled_from_the_list_as_bought(
    db: TestDb,
) {
    let mut cfg = sandbox_config();
    cfg.faults = Faults {
        executed_error_rate: 1.0,
        executed_error_ops: Some([Op::BuyLinks].into()),
        ..Faults::default()
    };
    let w = World::new(db, cfg).await;
    w.write_campaign("dune-maps", DUNE);

    w.pass(true).await;
    w.sandbox.set_faults(Faults::default()).unwrap();
    w.pass(true).await;

    let ledger = w.ledger();
    assert!(
        !ledger.purchases.is_empty(),
        "bought though answered as errors"
    );
    ledger::assert_no_duplicate_purchase(&ledger);
    w.converge(3).await;
    w.assert_invariants().await;
}

pub async fn a_link_that_leaves_the_list_is_released_after_the_grace(db: TestDb) {
    let w = World::new(db, sandbox_config()).await;
    w.write_campaign("dune-maps", DUNE);
    w.pass(true).await;
    let ledger = w.ledger();
    let link = ledger.purchases[0].clone();
    let before = w.budget("dune-maps").await;

    w.sandbox
        .set_link_status(link.link_id, LinkStatus::Removed, true)
        .unwrap();
    w.pass(false).await;
    w.pass(false).await;

    let after = w.budget("dune-maps").await;
    assert_eq!(
        after.committed,
        before.committed.checked_sub(link.price).unwrap()
    );
    let project = project_of(&w, &campaigns::load_one(DUNE));
    assert_eq!(
        after.committed,
        w.ledger().commitment(project),
        "journal = ledger"
    );
    let held = w.store().links().held_links("dune-maps").await.unwrap();
    let gone = held.iter().find(|h| h.page_id == link.page_id).unwrap();
    assert!(
        gone.released
            .as_ref()
            .is_some_and(|(_, why)| why.contains("removed")),
        "{gone:?}"
    );
}

/// A pass whose future is dropped mid-flow (cancelled, or a process that is gone for the
/// journal) leaves no task renewing its lease: once the lease expires, another holder takes
/// the campaign. Before the fix the renewal task outlived the pass and renewed the lease of
/// the dropped holder every third of its lifetime, forever: every later pass was `skipped`.
pub async fn a_pass_dropped_mid_flow_leaves_no_lease_renewed_behind(db: TestDb) {
    let mut cfg = sandbox_config();
    cfg.faults = Faults {
        latency_ms: 1500,
        ..Faults::default()
    };
    let w = World::new(db, cfg).await;
    w.write_campaign("dune-maps", DUNE);
    let ttl = EngineSettings {
        lease_ttl: chrono::Duration::seconds(3),
        ..fast_settings()
    };
    let dropped = w.engine_with(ttl.clone()).await;
    let campaigns = w.campaigns();
    let pass = tokio::spawn(async move { dropped.pass(&campaigns, true).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    pass.abort();
    let _ = pass.await;
    w.sandbox.set_faults(Faults::default()).unwrap();

    tokio::time::sleep(Duration::from_millis(4500)).await;
    let next = w.engine_with(ttl).await;
    let reports = pass_with(&next, &w.campaigns(), true).await;

    assert_ne!(reports[0].outcome, PassOutcome::Skipped, "{reports:#?}");
    assert_safe_so_far(&w).await;
}

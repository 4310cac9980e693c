use std::sync::Arc;

use chrono::{TimeZone, Utc};
use tokio::time::Instant;

use super::*;
use crate::autobuy::AutobuyerSpec;
use crate::clock::ManualClock;
use crate::config::SandboxConfig;
use crate::search::Poll;
use crate::state::Params;

struct Fixture {
    world: World,
    clock: Arc<ManualClock>,
    project: i64,
    url_id: i64,
    text_id: i64,
}

fn fixture() -> Fixture {
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2025, 3, 1, 10, 0, 0).unwrap());
    let mut cfg = SandboxConfig::new("t", "k");
    cfg.search_ready_after_polls = 0;
    cfg.clock = clock.clone();
    let mut world = World::new(&cfg);
    let (project, url_id, text_id) = world.add_project("https://acme.example").unwrap();
    Fixture {
        world,
        clock,
        project,
        url_id,
        text_id,
    }
}

fn rubles(r: i64) -> Money {
    Money::from_rubles(r)
}

impl Fixture {
    /// A running autobuyer for the main URL; its filter's rent range is `range` (rubles).
    fn autobuyer(&mut self, budget: i64, total: i64, daily: i64, range: (i64, i64)) -> i64 {
        let params: Params = serde_json::json!({"priceRentFrom": range.0, "priceRentTo": range.1})
            .as_object()
            .cloned()
            .unwrap();
        let filter = self.world.add_filter("f", &[], params).unwrap();
        let spec = AutobuyerSpec {
            name: "auto".into(),
            is_auto_approve: true,
            filter_id: filter,
            urls: vec![AutobuyerUrl {
                url_id: self.url_id,
                monthly_budget: rubles(budget),
                total_links_limit: total,
                daily_links_limit: daily,
            }],
        };
        let id = self.world.create_autobuyer(self.project, spec).unwrap();
        self.world.switch_autobuyers(&[id], true).unwrap();
        id
    }

    /// A finished search for the main URL: its offered pages and prices.
    fn searched(&mut self) -> Vec<(i64, Money)> {
        let (job, meta) = self
            .world
            .start_search(self.url_id, None, None, Instant::now())
            .unwrap();
        let Ok(Poll::Ready(found)) = self.world.poll_search(&job, &meta, Instant::now()) else {
            panic!("search not ready");
        };
        found.iter().map(|(d, _)| (d.page_id, d.price)).collect()
    }

    fn mine(&self, autobuyer: i64) -> Vec<&crate::buy::Placement> {
        self.world
            .placements
            .iter()
            .filter(|p| p.autobuyer_id == Some(autobuyer))
            .collect()
    }

    fn rent_of(&self, autobuyer: i64) -> Money {
        self.mine(autobuyer)
            .iter()
            .filter(|p| p.status == LinkStatus::Active)
            .fold(Money::ZERO, |s, p| s.checked_add(p.price).unwrap())
    }
}

#[test]
fn a_running_autobuyer_fills_its_monthly_budget_and_no_more() {
    let mut f = fixture();
    let id = f.autobuyer(500, 100, 100, (0, 1000));

    let bought = f.world.autobuy_now(usize::MAX);

    assert!(bought.len() >= 2, "bought {bought:?}");
    assert!(f.rent_of(id) <= rubles(500));
    let cheapest = f.world.inventory.iter().map(|d| d.price).min().unwrap();
    assert!(
        f.rent_of(id).checked_add(cheapest).unwrap() > rubles(500),
        "it stopped while a donor still fitted its budget"
    );
    assert!(f.mine(id).iter().all(|p| p.page.text_id == f.text_id));
}

#[test]
fn a_stopped_autobuyer_buys_nothing() {
    let mut f = fixture();
    let id = f.autobuyer(500, 10, 10, (0, 1000));
    f.world.switch_autobuyers(&[id], false).unwrap();

    assert!(f.world.autobuy_now(usize::MAX).is_empty());
    assert!(f.world.placements.is_empty());
}

#[test]
fn the_total_links_limit_holds_across_rounds_and_days() {
    let mut f = fixture();
    let id = f.autobuyer(100_000, 3, 2, (0, 1000));

    f.world.autobuy_now(usize::MAX);
    f.clock.advance(chrono::Duration::days(1));
    f.world.autobuy_now(usize::MAX);
    f.clock.advance(chrono::Duration::days(1));
    f.world.autobuy_now(usize::MAX);

    assert_eq!(f.mine(id).len(), 3);
}

#[test]
fn the_daily_limit_holds_until_the_next_utc_day() {
    let mut f = fixture();
    let id = f.autobuyer(100_000, 100, 2, (0, 1000));

    f.world.autobuy_now(1);
    f.world.autobuy_now(usize::MAX);
    assert_eq!(f.mine(id).len(), 2);
    f.clock.advance(chrono::Duration::hours(13));
    f.world.autobuy_now(usize::MAX);
    assert_eq!(f.mine(id).len(), 2, "23:00 is still the same UTC day");
    f.clock.advance(chrono::Duration::hours(1));
    f.world.autobuy_now(usize::MAX);

    assert_eq!(f.mine(id).len(), 4);
}

#[test]
fn a_faulty_autobuyer_buys_past_its_budget_and_daily_and_total_limits() {
    let mut f = fixture();
    f.world.behaviour.autobuy_ignores_limits = true;
    // 100 RUB a month, 1 link a day, 1 in all.
    let id = f.autobuyer(100, 1, 1, (100, 150));

    f.world.autobuy_now(3);

    let mine = f.mine(id);
    assert_eq!(mine.len(), 3, "three links on a budget of one");
    let rent = mine
        .iter()
        .fold(Money::ZERO, |a, p| a.checked_add(p.price).unwrap());
    assert!(rent > rubles(100), "{rent} within the budget");
}

#[test]
fn it_buys_only_within_its_filter_rent_range_and_never_a_page_twice_even_when_careless() {
    let mut f = fixture();
    f.world.behaviour.autobuy_buys_held = true;
    let id = f.autobuyer(100_000, 100, 100, (100, 150));

    f.world.autobuy_now(usize::MAX);
    f.clock.advance(chrono::Duration::days(1));
    f.world.autobuy_now(usize::MAX);

    let mine = f.mine(id);
    assert!(!mine.is_empty());
    assert!(
        mine.iter()
            .all(|p| p.price >= rubles(100) && p.price <= rubles(150))
    );
    let mut pages: Vec<i64> = mine.iter().map(|p| p.page.page_id).collect();
    pages.sort_unstable();
    pages.dedup();
    assert_eq!(pages.len(), mine.len(), "a page bought twice for one URL");
}

#[test]
fn it_finds_the_pages_a_search_offered_first_and_skips_those_the_project_holds() {
    let mut f = fixture();
    let offered = f.searched();
    let held = offered[0].0;
    let page = PageRef {
        page_id: held,
        url_id: f.url_id,
        text_id: f.text_id,
    };
    f.world.place(f.project, page, offered[0].1, None);
    let id = f.autobuyer(100_000, 3, 3, (0, 1000));

    f.world.autobuy_now(usize::MAX);

    let mut expected: Vec<i64> = offered.iter().map(|(p, _)| *p).collect();
    expected.sort_unstable();
    expected.retain(|p| *p != held);
    let pages: Vec<i64> = f.mine(id).iter().map(|p| p.page.page_id).collect();
    assert_eq!(pages, expected[..3]);
    assert_eq!(f.world.books[0].duplicate_purchases, 0);
}

#[test]
fn a_careless_autobuyer_buys_a_page_the_project_already_holds() {
    let mut f = fixture();
    let offered = f.searched();
    let lowest = offered.iter().map(|(p, _)| *p).min().unwrap();
    let price = offered.iter().find(|(p, _)| *p == lowest).unwrap().1;
    let page = PageRef {
        page_id: lowest,
        url_id: f.url_id,
        text_id: f.text_id,
    };
    f.world.place(f.project, page, price, None);
    f.world.behaviour.autobuy_buys_held = true;
    let id = f.autobuyer(100_000, 1, 1, (0, 1000));

    f.world.autobuy_now(usize::MAX);

    let mine = f.mine(id);
    assert_eq!(mine[0].page.page_id, lowest);
    assert!(mine[0].duplicate);
    assert_eq!(f.world.books[0].duplicate_purchases, 1);
    let ledger = f.world.ledger_of(0);
    assert!(ledger.duplicates_by_purchase_calls(f.project).is_empty());
}

#[test]
fn a_purchase_call_for_a_page_an_autobuyer_holds_is_a_duplicate_by_purchase_calls() {
    let mut f = fixture();
    let id = f.autobuyer(100_000, 1, 1, (0, 1000));
    f.world.autobuy_now(usize::MAX);
    let (page, price) = {
        let held = f.mine(id)[0];
        (held.page, held.price)
    };

    f.world.place(f.project, page, price, None);

    let ledger = f.world.ledger_of(0);
    let dups = ledger.duplicates_by_purchase_calls(f.project);
    assert_eq!(dups.len(), 1);
    assert_eq!(
        (dups[0].page_id, dups[0].autobuyer_id),
        (page.page_id, None)
    );
}

#[test]
fn a_removed_link_frees_its_rent_in_the_budget_but_not_its_page_or_total() {
    let mut f = fixture();
    let id = f.autobuyer(200, 100, 100, (0, 1000));
    f.world.autobuy_now(usize::MAX);
    let before = f.mine(id).len();
    let first = f.mine(id)[0].id;

    f.world
        .set_link_status(first, LinkStatus::Removed, false)
        .unwrap();
    f.world.autobuy_now(usize::MAX);

    assert!(f.mine(id).len() > before);
    assert!(f.rent_of(id) <= rubles(200));
    let first_page = f.mine(id)[0].page.page_id;
    assert_eq!(
        f.mine(id)
            .iter()
            .filter(|p| p.page.page_id == first_page)
            .count(),
        1
    );
}

#[test]
fn an_autobuyer_of_another_account_buys_with_that_accounts_money_into_its_ledger() {
    let cfg = SandboxConfig::new("t", "k").with_account({
        let mut b = crate::config::SandboxAccount::new("b", "t2", "k2");
        b.balance = rubles(300);
        b
    });
    let mut f = Fixture {
        world: World::new(&cfg),
        ..fixture()
    };
    f.world.caller = 1;
    (f.project, f.url_id, f.text_id) = f.world.add_project("https://beta.example").unwrap();
    let id = f.autobuyer(100_000, 100, 100, (0, 1000));
    f.world.caller = 0;

    f.world.autobuy_now(usize::MAX);

    let (a, b) = (f.world.ledger_of(0), f.world.ledger_of(1));
    assert!(a.purchases.is_empty() && a.spend == Money::ZERO);
    assert!(!b.purchases.is_empty(), "b's autobuyer bought");
    assert!(
        b.purchases
            .iter()
            .all(|p| p.account == "b" && p.autobuyer_id == Some(id))
    );
    assert_eq!(b.spend, f.rent_of(id));
    assert!(b.spend <= rubles(300), "no further than b's balance");
    assert_eq!(b.balance, rubles(300).checked_sub(b.spend).unwrap());
}

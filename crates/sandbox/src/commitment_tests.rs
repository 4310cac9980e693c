use super::*;
use crate::autobuy::{AutobuyerSpec, AutobuyerUrl};
use crate::buy::PageRef;
use crate::config::SandboxConfig;
use crate::state::{Params, World};

fn rubles(r: i64) -> Money {
    Money::from_rubles(r)
}

/// A project with one running autobuyer (budget 300 RUB, filter 0–100 RUB) that bought
/// links, and one link bought by a purchase call at 70 RUB: `(world, project, autobuyer)`.
fn world_with_links() -> (World, i64, i64) {
    let mut world = World::new(&SandboxConfig::new("t", "k"));
    let (project, url_id, text_id) = world.add_project("https://acme.example").unwrap();
    let params: Params = serde_json::json!({"priceRentFrom": 0, "priceRentTo": 100})
        .as_object()
        .cloned()
        .unwrap();
    let filter = world.add_filter("f", &[], params).unwrap();
    let spec = AutobuyerSpec {
        name: "auto".into(),
        is_auto_approve: true,
        filter_id: filter,
        urls: vec![AutobuyerUrl {
            url_id,
            monthly_budget: rubles(300),
            total_links_limit: 100,
            daily_links_limit: 100,
        }],
    };
    let id = world.create_autobuyer(project, spec).unwrap();
    world.switch_autobuyers(&[id], true).unwrap();
    assert!(!world.autobuy_now(usize::MAX).is_empty());
    let page = PageRef {
        page_id: 1,
        url_id,
        text_id,
    };
    world.place(project, page, rubles(70), None);
    (world, project, id)
}

fn autobuyer_rent(ledger: &Ledger, id: i64) -> Money {
    ledger
        .purchases
        .iter()
        .filter(|p| p.autobuyer_id == Some(id))
        .fold(Money::ZERO, |s, p| s.checked_add(p.price).unwrap())
}

#[test]
fn a_running_autobuyer_counts_its_budget_and_its_links_are_inside_it() {
    let (world, project, id) = world_with_links();
    let ledger = world.ledger_of(0);

    assert!(autobuyer_rent(&ledger, id) > Money::ZERO);
    assert_eq!(ledger.commitment(project), rubles(300 + 70));
    assert_eq!(
        ledger.commitment_parts(project),
        Commitment {
            running_budgets: rubles(300),
            stopped_autobuyer_links: Money::ZERO,
            bought_links: rubles(70),
        }
    );
}

#[test]
fn once_stopped_an_autobuyer_s_links_count_at_their_own_rent() {
    let (mut world, project, id) = world_with_links();
    world.switch_autobuyers(&[id], false).unwrap();
    let ledger = world.ledger_of(0);

    let rent = autobuyer_rent(&ledger, id);
    assert_eq!(
        ledger.commitment(project),
        rent.checked_add(rubles(70)).unwrap()
    );
}

#[test]
fn removed_and_rejected_links_count_nothing() {
    let (mut world, project, id) = world_with_links();
    world.switch_autobuyers(&[id], false).unwrap();
    let ledger = world.ledger_of(0);
    let auto_link = ledger
        .purchases
        .iter()
        .find(|p| p.autobuyer_id == Some(id))
        .cloned()
        .unwrap();
    let round_link = ledger
        .purchases
        .iter()
        .find(|p| p.autobuyer_id.is_none())
        .unwrap()
        .link_id;

    world
        .set_link_status(auto_link.link_id, LinkStatus::Removed, false)
        .unwrap();
    world
        .set_link_status(round_link, LinkStatus::Rejected, true)
        .unwrap();

    let expected = autobuyer_rent(&ledger, id)
        .checked_sub(auto_link.price)
        .unwrap();
    assert_eq!(world.ledger_of(0).commitment(project), expected);
}

#[test]
fn another_project_s_links_and_autobuyers_do_not_count() {
    let (mut world, _, _) = world_with_links();
    let (other, _, _) = world.add_project("https://other.example").unwrap();

    assert_eq!(world.ledger_of(0).commitment(other), Money::ZERO);
}

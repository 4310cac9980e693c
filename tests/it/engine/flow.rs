//! The full flow, `once` twice, and a removed campaign file.

use linkrunner_sandbox::{AutobuyerState, Ledger};

use super::fixtures::{ACME, BOLT};
use super::support::{TestDb, World, assert_no_new_spending, sandbox_config};

fn autobuyer_state(ledger: &Ledger, name: &str) -> Option<AutobuyerState> {
    let mut matching = ledger.autobuyers.iter().filter(|a| a.name == name);
    let first = matching.next()?;
    assert!(matching.next().is_none(), "autobuyer {name} created twice");
    Some(first.state)
}

/// Every URL of the campaign exists once on the marketplace, with each of its texts once
/// (creating a project also adds the domain's main page with a default text).
/// Each named autobuyer exists in the ledger in its state.
fn assert_autobuyer_states(ledger: &Ledger, want: &[(&str, AutobuyerState)]) {
    for (name, state) in want {
        assert_eq!(autobuyer_state(ledger, name), Some(*state), "{name}");
    }
}

fn assert_promoted_once(ledger: &Ledger, c: &linkrunner::campaign::Campaign) {
    for u in &c.urls {
        let ids: Vec<i64> = ledger
            .urls
            .iter()
            .filter(|l| l.url == u.url)
            .map(|l| l.id)
            .collect();
        assert_eq!(ids.len(), 1, "{} added once: {:?}", u.url, ledger.urls);
        for t in &u.texts {
            let n = ledger
                .texts
                .iter()
                .filter(|x| x.url_id == ids[0] && &x.text == t)
                .count();
            assert_eq!(n, 1, "text {t:?} of {} added once", u.url);
        }
    }
}

async fn acme_and_bolt(db: TestDb) -> World {
    let w = World::new(db, sandbox_config()).await;
    w.write_campaign("acme-shoes", ACME);
    w.write_campaign("bolt-bikes", BOLT);
    w
}

pub async fn full_flow_creates_everything_buys_within_caps_and_records_it(db: TestDb) {
    let w = acme_and_bolt(db).await;

    let reports = w.pass(true).await;
    w.converge(3).await;

    let ledger = w.ledger();
    assert!(reports.iter().all(|r| r.converged()), "{reports:#?}");
    assert_eq!(ledger.projects.len(), 2, "one project per campaign");
    for lc in w.campaigns() {
        assert_promoted_once(&ledger, &lc.campaign);
    }
    assert_eq!(ledger.filters.len(), 3, "every filter created once");
    assert_autobuyer_states(
        &ledger,
        &[
            ("acme-auto", AutobuyerState::Running),
            ("bikes-all-year", AutobuyerState::Running),
            ("bikes-summer", AutobuyerState::Stopped),
        ],
    );
    let acme = reports.iter().find(|r| r.campaign == "acme-shoes").unwrap();
    assert_eq!(acme.bought, 3, "a round buys per_run links");
    assert_eq!(ledger.purchases.len(), 3, "only acme-shoes has buy rounds");
    let held = w.store().links().held_links("acme-shoes").await.unwrap();
    assert!(
        held.iter()
            .all(|h| h.link_id.is_some() && h.seen_in_list_at.is_some()),
        "the link sync saw every held link: {held:#?}"
    );
    w.assert_invariants().await;
}

pub async fn a_second_once_changes_nothing_but_a_new_round_within_the_caps(db: TestDb) {
    let w = acme_and_bolt(db).await;
    let before = w.buy_and_converge().await;

    let second = w.pass(true).await;
    let third = w.pass(true).await;

    let after = w.ledger();
    assert!(
        second.iter().chain(&third).all(|r| r.converged()),
        "{second:#?} {third:#?}"
    );
    assert_eq!(after.projects, before.projects, "no new project");
    assert_eq!(after.urls, before.urls, "no new URL");
    assert_eq!(after.texts, before.texts, "no new text");
    assert_eq!(after.filters, before.filters, "no new filter");
    assert_eq!(
        after.autobuyers, before.autobuyers,
        "no new or switched autobuyer"
    );
    let bought = |r: &[linkrunner::effects::pass::CampaignReport]| {
        r.iter()
            .find(|r| r.campaign == "acme-shoes")
            .unwrap()
            .bought
    };
    // daily_links is 4 and the first round bought 3: the second may buy one, the third none.
    assert_eq!(
        bought(&second),
        1,
        "the second round stops at the daily limit"
    );
    assert_eq!(bought(&third), 0, "no round buys past the daily limit");
    assert_eq!(after.purchases.len(), before.purchases.len() + 1);
    w.assert_invariants().await;
}

pub async fn removing_a_campaign_file_stops_its_autobuyers_and_buys_nothing(db: TestDb) {
    let w = acme_and_bolt(db).await;
    let before = w.buy_and_converge().await;
    w.remove_campaign("bolt-bikes");

    let reports = w.pass(true).await;

    let after = w.ledger();
    let bolt = reports.iter().find(|r| r.campaign == "bolt-bikes").unwrap();
    assert!(
        bolt.done
            .iter()
            .any(|d| d.starts_with("stop autobuyer bikes-all-year")),
        "{bolt:#?}"
    );
    assert_autobuyer_states(
        &after,
        &[
            ("bikes-all-year", AutobuyerState::Stopped),
            ("bikes-summer", AutobuyerState::Stopped),
        ],
    );
    let bolt_projects = w.projects_of(&after, &crate::support::campaigns::load_one(BOLT));
    assert_no_new_spending(&before, &after, &bolt_projects, "bolt-bikes removed");
    let recorded = w.recorded("bolt-bikes").await;
    assert!(
        recorded.ids.autobuyers.values().all(|a| !a.running),
        "the journal knows they are stopped"
    );
    assert_eq!(recorded.budget.committed, linkrunner::money::Money::ZERO);
    w.assert_invariants().await;
}

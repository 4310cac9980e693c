//! The answer forms of issue 12 end to end: a marketplace that answers 404 while a search
//! runs, nests ids and the price, or truncates reads still gets the campaign's links bought
//! (exactly once, within the caps); a job that keeps answering "not found" is given up at
//! the search deadline, not at the first poll.

use std::time::Duration;

use linkrunner::clock::ManualClock;
use linkrunner::effects::pass::CampaignReport;
use linkrunner::effects::{Engine, EngineSettings};
use linkrunner::market::{FieldMap, MarketClient};
use linkrunner_sandbox::shapes::{Pending, PriceField, TextsAnswer};
use linkrunner_sandbox::{Op, SandboxConfig};

use super::fixtures::ACME;
use super::support::{TICKET, TOKEN, TestDb, World, sandbox_config};
use crate::support::app::{self, Journal, fast_settings};
use crate::support::ledger;

/// An engine over a client with `field_map` and patient reads, as an operator would run it
/// against such a marketplace.
async fn engine(w: &World, field_map: &str, settings: EngineSettings) -> Engine<MarketClient> {
    let mut market = app::client_config(&w.sandbox.base_url(), TOKEN, TICKET);
    market.read_retries = 8;
    market.field_map = FieldMap::parse(field_map).expect("field map");
    let mut app = app::settings(Journal::Open(w.store().clone()), market);
    app.engine = settings;
    app::build(app).await
}

async fn acme_buys_in(db: TestDb, cfg: SandboxConfig, field_map: &str) -> World {
    let mut w = World::new(db, cfg).await;
    w.engine = engine(&w, field_map, fast_settings()).await;
    w.write_campaign("acme-shoes", ACME);

    let reports = w.pass(true).await;
    w.converge(3).await;

    let acme = &reports[0];
    assert!(acme.converged(), "{reports:#?}");
    assert_eq!(acme.bought, 3, "a round buys per_run links: {reports:#?}");
    assert_eq!(w.ledger().purchases.len(), 3);
    w.assert_invariants().await;
    w
}

pub async fn a_marketplace_answering_404_while_a_search_runs_still_gets_links_bought(db: TestDb) {
    let mut cfg = sandbox_config();
    cfg.shape.pending = Pending::Http404;
    cfg.search_ready_after_polls = 2;

    let w = acme_buys_in(db, cfg, "").await;

    let ledger = w.ledger();
    assert!(
        ledger.polls_served >= 3 * ledger.searches_started,
        "every search was polled through its 404s: {} polls for {} searches",
        ledger.polls_served,
        ledger.searches_started
    );
}

pub async fn nested_ids_and_a_nested_price_with_its_field_map_get_links_bought(db: TestDb) {
    let mut cfg = sandbox_config();
    cfg.shape.texts = TextsAnswer::NestedObjects;
    cfg.shape.price = PriceField::Nested;

    acme_buys_in(db, cfg, "price=prices.rent").await;
}

pub async fn reads_truncated_in_transit_still_get_links_bought_once(db: TestDb) {
    let mut cfg = sandbox_config();
    cfg.faults.truncate_rate = 0.3;

    let w = acme_buys_in(db, cfg, "").await;

    let ledger = w.ledger();
    assert!(
        ledger.polls_served > 2 * ledger.searches_started,
        "some polls were truncated and read again: {} polls for {} searches",
        ledger.polls_served,
        ledger.searches_started
    );
    assert_eq!(
        ledger::requests(&ledger, Op::BuyLinks),
        ledger.requests_of(Op::BuyLinks, "ok"),
        "every purchase call was accepted: none was sent again"
    );
}

/// The search deadline is the engine's clock's, and that clock is the test's: it moves past
/// the deadline once every job has answered "not found" twice. With the wall clock and a
/// short deadline, a loaded machine spent the deadline on the pass's other steps and the
/// jobs were given up at their first poll.
pub async fn a_search_answering_not_found_past_its_deadline_is_given_up_then_restarted(db: TestDb) {
    let mut cfg = sandbox_config();
    cfg.shape.pending = Pending::Http404;
    cfg.search_ready_after = Duration::from_secs(3600);
    let clock = ManualClock::new("2026-03-02T08:00:00Z".parse().expect("time"));
    let w = World::on_clock(db, cfg, clock.clone(), |s| {
        s.market.read_retries = 8;
        s.engine.search_deadline = SEARCH_DEADLINE;
    })
    .await;
    w.write_campaign("acme-shoes", ACME);

    let first = pass_past_search_deadlines(&w, &clock, 2).await;
    let after_first = w.ledger();
    pass_past_search_deadlines(&w, &clock, 2).await;
    let after_second = w.ledger();

    assert_eq!(first[0].bought, 0, "{first:#?}");
    assert!(after_second.purchases.is_empty());
    assert_eq!(after_first.searches_started, 2, "one search per URL");
    assert_eq!(
        after_second.searches_started, 4,
        "the expired jobs were given up, so the next round started new ones"
    );
}

const SEARCH_DEADLINE: chrono::Duration = chrono::Duration::minutes(1);

/// A pass with a buy round that starts `searches` searches and polls them (together, on one
/// backoff) twice as many times as there are searches before `clock` moves past their
/// deadline; the pass then gives them up and ends. The real-time bounds only turn a hang into
/// a failure: polls come every `poll_max` (100 ms) while the deadline is ahead.
async fn pass_past_search_deadlines(
    w: &World,
    clock: &ManualClock,
    searches: u64,
) -> Vec<CampaignReport> {
    const PATIENCE: Duration = Duration::from_secs(60);
    let before = w.ledger();
    let pass = w.pass(true);
    tokio::pin!(pass);
    let polled = async {
        loop {
            let l = w.ledger();
            let started = l.searches_started - before.searches_started;
            if started == searches && l.polls_served - before.polls_served >= 2 * searches {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::select! {
        reports = &mut pass => panic!(
            "a 404 is not a rejection: the pass ended before each job was polled twice ({:?}): {reports:#?}",
            w.ledger().polls_served
        ),
        waited = tokio::time::timeout(PATIENCE, polled) => waited.unwrap_or_else(|_| panic!(
            "the pass did not start {searches} searches and poll them twice each: {:?}",
            w.ledger()
        )),
    }
    clock.advance(SEARCH_DEADLINE);
    tokio::time::timeout(PATIENCE, pass)
        .await
        .expect("the jobs are given up once their deadline passed")
}

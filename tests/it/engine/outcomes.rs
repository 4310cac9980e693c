//! Honest outcomes end to end (issue 12): a campaign whose donors carry their price under a
//! key nobody named, or whose account balance cannot pay, is `stalled` with the reason —
//! never `converged` — and buys nothing; `status`, the journal and the metric say so; `once`
//! exits 3 with the reason and leaves the ledger untouched; with the field named (or the
//! money there) the same campaign converges.

use linkrunner::daemon::gauges;
use linkrunner::effects::Engine;
use linkrunner::effects::pass::PassOutcome;
use linkrunner::market::{FieldMap, MarketClient};
use linkrunner::money::Money;
use linkrunner::store::StallReason;
use linkrunner::views::report::campaign_status;
use linkrunner_sandbox::shapes::PriceField;

use super::binary::{run, text};
use super::fixtures::ACME;
use super::support::{TICKET, TOKEN, TestDb, World, sandbox_config};
use crate::support::app::{self, Journal, fast_settings};

async fn engine_mapping(w: &World, field_map: &str) -> Engine<MarketClient> {
    let mut market = app::client_config(&w.sandbox.base_url(), TOKEN, TICKET);
    market.field_map = FieldMap::parse(field_map).expect("field map");
    let mut app = app::settings(Journal::Open(w.store().clone()), market);
    app.engine = fast_settings();
    app::build(app).await
}

/// ACME, but every donor of the sandbox is above its `max_link_price`: nothing to buy within
/// the caps, round after round.
fn acme_priced_out() -> String {
    ACME.replace("max_link_price: 150", "max_link_price: 20")
        .replace("price_rent_to: 150", "price_rent_to: 20")
}

pub async fn donors_priced_under_an_unknown_key_stall_as_no_readable_price_until_mapped(
    db: TestDb,
) {
    let mut cfg = sandbox_config();
    cfg.shape.price = PriceField::Unknown;
    let mut w = World::new(db, cfg).await;
    w.write_campaign("acme-shoes", ACME);

    let reports = w.pass(true).await;

    let acme = &reports[0];
    assert_eq!(acme.outcome, PassOutcome::Stalled, "{reports:#?}");
    assert_eq!(acme.reason, Some(StallReason::NoReadablePrice));
    let detail = acme.detail.as_deref().unwrap_or_default();
    assert!(
        detail.starts_with("no donor had a readable price (")
            && detail.contains("--field-map price="),
        "{detail}"
    );
    assert!(w.ledger().purchases.is_empty(), "nothing was bought");
    let status = campaign_status(w.store(), "acme-shoes", chrono::Utc::now())
        .await
        .unwrap();
    let stalled = status.stalled.expect("status shows the stall");
    assert_eq!(stalled.reason.as_str(), "no_readable_price");

    w.engine = engine_mapping(&w, "price=costPerMonth").await;
    let mapped = w.pass(true).await;

    assert_eq!(mapped[0].outcome, PassOutcome::Converged, "{mapped:#?}");
    assert_eq!(mapped[0].bought, 3);
    assert_eq!(w.ledger().purchases.len(), 3);
    let status = campaign_status(w.store(), "acme-shoes", chrono::Utc::now())
        .await
        .unwrap();
    assert!(
        status.stalled.is_none(),
        "a converged round clears the stall"
    );
    w.assert_invariants().await;
}

pub async fn a_balance_too_low_stalls_as_insufficient_balance_with_the_metric_set(db: TestDb) {
    let mut cfg = sandbox_config();
    cfg.initial_balance = Money::from_kopecks(17_63);
    let w = World::new(db, cfg).await;
    w.write_campaign("acme-shoes", ACME);

    let reports = w.pass(true).await;
    let present = linkrunner::views::overview::FileFact::Present { paused: false };
    gauges::refresh_campaign(&w.engine, "acme-shoes", present).await;

    let acme = &reports[0];
    assert_eq!(acme.outcome, PassOutcome::Stalled, "{reports:#?}");
    assert_eq!(acme.reason, Some(StallReason::InsufficientBalance));
    let detail = acme.detail.as_deref().unwrap_or_default();
    assert!(
        detail.starts_with("insufficient balance") && detail.contains("17.63 RUB left"),
        "{detail}"
    );
    let ledger = w.ledger();
    assert!(
        ledger.purchases.is_empty(),
        "the marketplace bought nothing"
    );
    assert_eq!(ledger.balance, Money::from_kopecks(17_63));
    let r = w.recorded("acme-shoes").await;
    assert_eq!(
        r.budget.committed,
        Money::from_rubles(1000),
        "only the autobuyer's budget is committed: refused purchases released theirs"
    );
    let metrics = w.engine.metrics().render();
    assert!(
        metrics.contains(
            r#"linkrunner_campaign_stalled{campaign="acme-shoes",reason="insufficient_balance"} 1"#
        ),
        "{metrics}"
    );
    assert!(
        metrics.contains(
            r#"linkrunner_campaign_stalled{campaign="acme-shoes",reason="no_readable_price"} 0"#
        ),
        "{metrics}"
    );
    w.assert_invariants().await;
}

pub async fn rounds_that_find_nothing_within_the_caps_converge_until_three_in_a_row(db: TestDb) {
    let w = World::new(db, sandbox_config()).await;
    w.write_campaign("acme-shoes", &acme_priced_out());

    let first = w.pass(true).await;
    let second = w.pass(true).await;
    let third = w.pass(true).await;
    let reconcile = w.pass(false).await;

    assert_eq!(first[0].outcome, PassOutcome::Converged, "{first:#?}");
    assert_eq!(second[0].outcome, PassOutcome::Converged, "{second:#?}");
    assert_eq!(third[0].outcome, PassOutcome::Stalled, "{third:#?}");
    assert_eq!(third[0].reason, Some(StallReason::NothingBought));
    assert!(w.ledger().purchases.is_empty());
    assert_eq!(reconcile[0].outcome, PassOutcome::Converged);
    let r = w.recorded("acme-shoes").await;
    let stall = r.stall.expect("recorded");
    assert_eq!(
        (stall.reason, stall.rounds_without_purchase),
        (Some(StallReason::NothingBought), 3),
        "a pass without a buy round leaves the judgment as it was"
    );
}

pub async fn once_exits_3_with_the_reason_and_buys_nothing_then_converges_with_the_field_named(
    db: TestDb,
) {
    let mut cfg = sandbox_config();
    cfg.shape.price = PriceField::Unknown;
    let w = World::new(db, cfg).await;
    w.write_campaign("acme-shoes", ACME);

    let stalled = run(&w, &["once"]).await;
    let status = run(&w, &["status", "--format", "json"]).await;

    assert_eq!(stalled.status.code(), Some(3), "{}", text(&stalled));
    let line = String::from_utf8_lossy(&stalled.stdout);
    assert!(
        line.contains("acme-shoes: stalled [no_readable_price]")
            && line.contains("--field-map price="),
        "{}",
        text(&stalled)
    );
    assert!(w.ledger().purchases.is_empty(), "the ledger is untouched");
    let json: serde_json::Value = serde_json::from_slice(&status.stdout).expect("json");
    assert_eq!(
        json[0]["stalled"]["reason"],
        "no_readable_price",
        "{}",
        text(&status)
    );

    let converged = run(&w, &["--field-map", "price=costPerMonth", "once"]).await;

    assert_eq!(converged.status.code(), Some(0), "{}", text(&converged));
    assert_eq!(w.ledger().purchases.len(), 3);
    w.assert_invariants().await;
}

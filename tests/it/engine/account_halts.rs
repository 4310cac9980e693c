//! Halts per marketplace account (issue 34): one deployment, two accounts on two sandboxes
//! (the default one, and `b`). A 401 on `b` halts `b` alone: the default account keeps buying,
//! its successful reads never lift `b`'s halt, and only `b`'s credentials working again do.
//! An operator's `halt --account` stops that account alone.

use linkrunner::app::AccountSettings;
use linkrunner::effects::Engine;
use linkrunner::effects::pass::{CampaignReport, PassOutcome};
use linkrunner::market::MarketClient;
use linkrunner::store::{HaltKind, HaltScope};
use linkrunner_sandbox::SandboxHandle;

use super::fixtures::{ACME, DUNE};
use super::support::{TICKET, TOKEN, TestDb, World, pass_with, sandbox_config};
use crate::support::app::{self, Journal};
use crate::support::sandbox;

const WRONG_TOKEN: &str = "a-token-account-b-revoked";

/// The default account's world (acme-shoes on its sandbox) and account `b`'s sandbox, where
/// dune-maps spends (`account: b`).
async fn two_accounts(db: TestDb) -> (World, SandboxHandle) {
    let w = World::new(db, sandbox_config()).await;
    let b = sandbox::start(sandbox_config()).await;
    w.write_campaign("acme-shoes", ACME);
    w.write_campaign(
        "dune-maps",
        &DUNE.replace("name: dune-maps\n", "name: dune-maps\naccount: b\n"),
    );
    (w, b)
}

/// An engine serving both accounts: the default one with the right token, `b` with `b_token`.
async fn engine(w: &World, b: &SandboxHandle, b_token: &str) -> Engine<MarketClient> {
    let market = app::client_config(&w.sandbox.base_url(), TOKEN, TICKET);
    let mut settings = app::settings(Journal::Open(w.store().clone()), market);
    settings.accounts.push(AccountSettings {
        id: "b".into(),
        market: app::client_config(&b.base_url(), b_token, TICKET),
        unpaged_list: None,
    });
    app::build(settings).await
}

fn report<'r>(reports: &'r [CampaignReport], name: &str) -> &'r CampaignReport {
    reports
        .iter()
        .find(|r| r.campaign == name)
        .unwrap_or_else(|| panic!("{name} in {reports:#?}"))
}

async fn scopes(w: &World) -> Vec<(HaltScope, HaltKind)> {
    let halts = w.store().halts().await.unwrap();
    halts.into_iter().map(|h| (h.scope, h.kind)).collect()
}

/// The gauge's sample line (its HELP line also begins `linkrunner_credentials_rejected 1`).
fn credentials_rejected(e: &Engine<MarketClient>) -> bool {
    e.metrics()
        .render()
        .lines()
        .any(|l| l == "linkrunner_credentials_rejected 1")
}

pub async fn a_401_on_one_account_halts_that_account_only(db: TestDb) {
    let (w, b) = two_accounts(db).await;
    let rejected = engine(&w, &b, WRONG_TOKEN).await;

    // Act: a buy round with b's token refused, then another.
    let first = pass_with(&rejected, &w.campaigns(), true).await;
    let halted = scopes(&w).await;
    let bought_first = w.ledger().purchases.len();
    let second = pass_with(&rejected, &w.campaigns(), true).await;

    // Assert: b halted, b alone, and nothing of dune reached b's marketplace.
    let b_halt = (HaltScope::account("b"), HaltKind::Automatic);
    assert_eq!(halted, vec![b_halt.clone()], "{first:#?}");
    for reports in [&first, &second] {
        let dune = report(reports, "dune-maps");
        assert_eq!(dune.outcome, PassOutcome::SpendingStopped, "{reports:#?}");
        assert_eq!(dune.account, "b");
        let acme = report(reports, "acme-shoes");
        assert_ne!(acme.outcome, PassOutcome::SpendingStopped, "{reports:#?}");
    }
    let ledger_b = b.ledger();
    assert!(ledger_b.projects.is_empty() && ledger_b.purchases.is_empty());
    // The default account kept buying in the round after b's halt was recorded, and its
    // working reads did not lift b's halt.
    assert!(
        w.ledger().purchases.len() > bought_first,
        "acme bought after b halted: {bought_first} before, {:?}",
        w.ledger().purchases.len()
    );
    assert_eq!(scopes(&w).await, vec![b_halt]);
    assert!(
        credentials_rejected(&rejected),
        "the gauge says an account is rejected"
    );

    // Act: b's credentials fixed (a new client with the right token).
    let fixed = engine(&w, &b, TOKEN).await;
    pass_with(&fixed, &w.campaigns(), true).await;
    let reports = pass_with(&fixed, &w.campaigns(), true).await;

    // Assert: b's halt lifted by b's own read, and dune buys on b's marketplace only.
    assert_eq!(scopes(&w).await, vec![], "{reports:#?}");
    assert!(!credentials_rejected(&fixed));
    let ledger_b = b.ledger();
    assert_eq!(ledger_b.projects.len(), 1, "dune's project, in b");
    assert!(!ledger_b.purchases.is_empty(), "dune bought in b");
    let ledger_a = w.ledger();
    assert_eq!(
        ledger_a.projects.len(),
        1,
        "acme's project alone in the default account"
    );
}

pub async fn halt_account_stops_that_account_only(db: TestDb) {
    let (w, b) = two_accounts(db).await;
    let e = engine(&w, &b, TOKEN).await;
    let now = chrono::Utc::now();
    w.store()
        .operator_halt_scope(&HaltScope::account("b"), "ops", "audit of b", now)
        .await
        .unwrap();

    let first = pass_with(&e, &w.campaigns(), true).await;
    let second = pass_with(&e, &w.campaigns(), true).await;

    for reports in [&first, &second] {
        assert_eq!(
            report(reports, "dune-maps").outcome,
            PassOutcome::SpendingStopped,
            "{reports:#?}"
        );
        assert_ne!(
            report(reports, "acme-shoes").outcome,
            PassOutcome::SpendingStopped
        );
    }
    assert!(b.ledger().purchases.is_empty(), "nothing bought in b");
    assert!(!w.ledger().purchases.is_empty(), "acme kept buying");

    // `resume --account b` lifts it; b buys.
    let lifted = w
        .store()
        .operator_resume_scope(&HaltScope::account("b"), "ops", "audited", now)
        .await
        .unwrap();
    assert!(lifted);
    pass_with(&e, &w.campaigns(), true).await;
    pass_with(&e, &w.campaigns(), true).await;
    assert!(!b.ledger().purchases.is_empty(), "dune bought in b");
}

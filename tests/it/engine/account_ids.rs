//! Issue 34: what an account owns stays in that account. Two accounts of one deployment on two
//! sandboxes (two marketplaces whose ids start at the same numbers, so the two projects, their
//! URLs and the donor pages the searches offer have the same ids) each run a campaign for the
//! same site: neither is refused for the other's domain or ids, each marketplace's ledger shows
//! only its own campaign's purchases, none twice, and the journal counts each campaign exactly
//! what its own marketplace holds.

use std::collections::{BTreeSet, HashSet};

use linkrunner::app::AccountSettings;
use linkrunner::decide::recorded::Recorded;
use linkrunner::effects::Engine;
use linkrunner::effects::pass::{CampaignReport, PassOutcome};
use linkrunner::market::MarketClient;
use linkrunner::store::Store;
use linkrunner::views::story::{self, Subject};
use linkrunner_sandbox::{Ledger, SandboxHandle};

use super::fixtures::ACME;
use super::support::{TICKET, TOKEN, TestDb, pass_with, sandbox_config};
use crate::support::app::{self, Journal};
use crate::support::{campaigns, init_logs, ledger, sandbox};

const TOKEN_B: &str = "engine-test-token-b";

/// ACME's buy rounds alone (no filter, no autobuyer: every link is a purchase call), as
/// `name` in `account` (none: the default account).
fn shop(name: &str, account: Option<&str>) -> String {
    let rounds = &ACME[..ACME.find("filters:").expect("ACME has filters")];
    let named = rounds.replace("name: acme-shoes", &format!("name: {name}"));
    match account {
        Some(a) => named.replace("domain:", &format!("account: {a}\ndomain:")),
        None => named,
    }
}

async fn recorded(store: &Store, campaign: &str) -> Recorded {
    let today = chrono::Utc::now().date_naive();
    Recorded::load(store, campaign, today)
        .await
        .expect("journal")
}

/// The (URL id, page) pairs the ledger's purchase calls bought.
fn pages(l: &Ledger) -> BTreeSet<(i64, i64)> {
    l.purchases.iter().map(|p| (p.url_id, p.page_id)).collect()
}

/// The journal holds for `campaign` exactly the links `l` sold and the money they commit.
async fn assert_journal_matches(store: &Store, campaign: &str, l: &Ledger) {
    let r = recorded(store, campaign).await;
    let held: BTreeSet<(i64, i64)> = r.held.iter().map(|h| (h.url_id, h.page_id)).collect();
    assert_eq!(
        held,
        pages(l),
        "{campaign}: held links as its marketplace sold them"
    );
    assert_eq!(r.held.len(), l.purchases.len(), "{campaign}");
    assert!(r.foreign.is_empty(), "{campaign}: no link it did not buy");
    let projects: HashSet<i64> = l.projects.iter().map(|p| p.id).collect();
    assert_eq!(
        r.budget.committed,
        ledger::commitment(l, &projects),
        "{campaign}"
    );
}

/// The default account on sandbox A and `client-b` on sandbox B (same defaults, so the same
/// ids and the same inventory), one engine serving both on `db`.
async fn two_accounts(db: &TestDb) -> (Engine<MarketClient>, SandboxHandle, SandboxHandle) {
    init_logs();
    let (market_a, market_b) = (
        sandbox::start(sandbox_config()).await,
        sandbox::start({
            let mut cfg = sandbox::config(TOKEN_B, TICKET, 1);
            cfg.inventory_size = sandbox_config().inventory_size;
            cfg
        })
        .await,
    );
    let engine = serving(db, &market_a, &market_b, "client-b").await;
    (engine, market_a, market_b)
}

/// One engine on `db`: the default account on `a`, and `b` as the account `b_id`.
async fn serving(
    db: &TestDb,
    a: &SandboxHandle,
    b: &SandboxHandle,
    b_id: &str,
) -> Engine<MarketClient> {
    let mut settings = app::settings(
        Journal::Open(db.store.clone()),
        app::client_config(&a.base_url(), TOKEN, TICKET),
    );
    settings.accounts.push(AccountSettings {
        id: b_id.into(),
        market: app::client_config(&b.base_url(), TOKEN_B, TICKET),
        unpaged_list: None,
    });
    app::build(settings).await
}

pub async fn two_accounts_with_coinciding_ids_each_buy_for_their_own_urls_only(db: TestDb) {
    // Arrange: one campaign for one site in each account.
    let (engine, market_a, market_b) = two_accounts(&db).await;
    let dir = tempfile::tempdir().expect("campaign dir");
    campaigns::write(dir.path(), "shop-a.yaml", &shop("shop-a", None));
    let mut reports = pass_with(&engine, &campaigns::load(dir.path()), true).await;

    // Act: shop-b joins once shop-a's project (and domain) is recorded; two buy rounds each
    // (the second meets the pages the first bought), then passes.
    campaigns::write(dir.path(), "shop-b.yaml", &shop("shop-b", Some("client-b")));
    let files = campaigns::load(dir.path());
    for buy_round in [true, false, true, false] {
        reports.extend(pass_with(&engine, &files, buy_round).await);
    }

    // Assert: nothing refused for the other account's domain or ids.
    for r in &reports {
        assert!(
            !matches!(r.outcome, PassOutcome::Blocked | PassOutcome::Failed),
            "{r:?}"
        );
    }
    let (a, b) = (market_a.ledger(), market_b.ledger());
    assert_eq!((a.projects.len(), b.projects.len()), (1, 1));
    assert_eq!(
        a.projects[0].id, b.projects[0].id,
        "the case under test: the two accounts' projects have one id"
    );
    // Each marketplace sold its own campaign the same pages (same ids, same inventory):
    // without the account in the purchase key, the second account's would all be refused.
    assert!(!a.purchases.is_empty(), "{a:?}");
    assert_eq!(
        pages(&a),
        pages(&b),
        "both accounts bought the pages with coinciding ids"
    );
    for l in [&a, &b] {
        ledger::assert_no_duplicate_purchase(l);
        assert!(l.purchases.iter().all(|p| p.autobuyer_id.is_none()));
    }
    assert_journal_matches(&db.store, "shop-a", &a).await;
    assert_journal_matches(&db.store, "shop-b", &b).await;
    let key = recorded(&db.store, "shop-b").await.purchases[0]
        .natural_key
        .clone();
    assert!(key.starts_with("purchase:account:client-b:url:"), "{key}");
    // A link id both marketplaces gave is not guessed at by `explain`: it names both.
    let link = a.purchases[0].link_id;
    assert!(
        b.purchases.iter().any(|p| p.link_id == link),
        "coinciding link ids"
    );
    let asked = story::explain(&db.store, Subject::Link(link)).await;
    let said = asked.expect_err("two accounts' links").to_string();
    assert!(
        said.contains("(campaign shop-a)") && said.contains("(campaign shop-b)"),
        "{said}"
    );
}

/// A rename stays within its account: `renamed_from` naming a campaign of the default account
/// in a file of `client-b` is blocked, and nothing of the old campaign's project reaches the
/// other account's marketplace (its ids would name another project there).
pub async fn a_rename_to_another_account_is_blocked_and_sends_nothing(db: TestDb) {
    // Arrange: shop-a bought in the default account.
    let (engine, market_a, market_b) = two_accounts(&db).await;
    let dir = tempfile::tempdir().expect("campaign dir");
    campaigns::write(dir.path(), "shop-a.yaml", &shop("shop-a", None));
    pass_with(&engine, &campaigns::load(dir.path()), true).await;
    let (a_before, b_before) = (market_a.ledger(), market_b.ledger());
    assert!(!a_before.purchases.is_empty());

    // Act: its file becomes shop-c, renamed from shop-a, in `client-b`.
    std::fs::remove_file(dir.path().join("shop-a.yaml")).expect("remove");
    let moved = shop("shop-c", Some("client-b")).replace(
        "account: client-b\n",
        "account: client-b\nrenamed_from: shop-a\n",
    );
    campaigns::write(dir.path(), "shop-c.yaml", &moved);
    let reports = pass_with(&engine, &campaigns::load(dir.path()), true).await;

    // Assert: blocked with the way out; neither marketplace was sent anything that changes.
    let outcomes: Vec<(&str, PassOutcome)> = reports
        .iter()
        .map(|r| (r.campaign.as_str(), r.outcome))
        .collect();
    assert!(
        outcomes.contains(&("shop-c", PassOutcome::Blocked)),
        "{reports:?}"
    );
    let why = reports
        .iter()
        .find_map(|r| r.detail.clone().filter(|_| r.campaign == "shop-c"))
        .unwrap_or_default();
    assert!(
        why.contains("campaign shop-a spends in account `default` and this file names `client-b`"),
        "{why}"
    );
    let (a, b) = (market_a.ledger(), market_b.ledger());
    assert_eq!(
        ledger::changing_calls(&b),
        ledger::changing_calls(&b_before)
    );
    assert!(b.projects.is_empty() && b.purchases.is_empty(), "{b:?}");
    assert_eq!(
        a.purchases, a_before.purchases,
        "nothing bought in shop-a's project"
    );
    let names = db.store.campaigns().campaign_names().await.expect("names");
    assert!(
        names.contains(&"shop-a".to_string()),
        "shop-a's record stays: {names:?}"
    );
}

/// Renaming an account's `id` in the accounts file makes it another account (docs/operating.md,
/// "Running for several accounts"): the campaign recorded under the old id is held, whether its
/// file keeps the old id (no longer served) or names the new one (a move of a campaign that
/// holds a project), and the marketplace behind both ids is sent nothing that changes.
pub async fn an_account_renamed_in_the_accounts_file_holds_its_campaigns(db: TestDb) {
    // Arrange: shop-b bought in `client-b`.
    let (engine, market_a, market_b) = two_accounts(&db).await;
    let dir = tempfile::tempdir().expect("campaign dir");
    campaigns::write(dir.path(), "shop-b.yaml", &shop("shop-b", Some("client-b")));
    pass_with(&engine, &campaigns::load(dir.path()), true).await;
    let before = market_b.ledger();
    assert!(!before.purchases.is_empty(), "{before:?}");
    drop(engine);

    // Act: the deployment restarts with `client-b` renamed `client-c` (the same marketplace
    // and credentials); first with the file as it was, then with the file renamed too.
    let renamed = serving(&db, &market_a, &market_b, "client-c").await;
    let kept = pass_with(&renamed, &campaigns::load(dir.path()), true).await;
    campaigns::write(dir.path(), "shop-b.yaml", &shop("shop-b", Some("client-c")));
    let moved = pass_with(&renamed, &campaigns::load(dir.path()), true).await;

    // Assert: held both times, each saying why and the way out; nothing more sent to B.
    let said = |reports: &[CampaignReport]| {
        let r = reports
            .iter()
            .find(|r| r.campaign == "shop-b")
            .expect("shop-b's report");
        assert_eq!(r.outcome, PassOutcome::Blocked, "{reports:?}");
        r.detail.clone().unwrap_or_default()
    };
    let why = said(&kept);
    assert!(
        why.contains("spends in account `client-b`, which this deployment does not serve"),
        "{why}"
    );
    let why = said(&moved);
    assert!(
        why.contains("moves campaign shop-b from account `client-b` to `client-c`"),
        "{why}"
    );
    let after = market_b.ledger();
    assert_eq!(
        ledger::changing_calls(&after),
        ledger::changing_calls(&before)
    );
    assert_eq!(after.purchases, before.purchases);
}

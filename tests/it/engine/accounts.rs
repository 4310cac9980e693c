//! Two marketplace accounts in one deployment (issue 34), through the real binary: `once`
//! with an accounts file listing account `b` on a second sandbox (its own token, ticket,
//! inventory and ids). Each campaign's purchases land in its own
//! account's sandbox only, and B's cap in the file stops B's campaign while A's, under no
//! account cap, buys everything it wants. Asserted on both sandboxes' ledgers and on the
//! journal's per-account commitment.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use linkrunner::money::Money;
use linkrunner_sandbox::Ledger;

use super::binary::{run, text};
use super::support::{TestDb, World, priced_config};
use crate::support::{campaigns, ledger, sandbox};

const TOKEN_B: &str = "engine-test-token-b";
const TICKET_B: &str = "engine-test-ticket-b";

/// A campaign of `account` (none: the default) that wants four links at 100 RUB at once.
fn campaign(name: &str, account: Option<&str>) -> String {
    let simple = campaigns::simple(name, "0 9 * * *", 10_000).replace("per_run: 2", "per_run: 4");
    match account {
        Some(id) => format!("account: {id}\n{simple}"),
        None => simple,
    }
}

/// The projects of `ledger` on `https://NAME.example`.
fn projects(ledger: &Ledger, name: &str) -> HashSet<i64> {
    let domain = format!("https://{name}.example");
    ledger
        .projects
        .iter()
        .filter(|p| p.domain.trim_end_matches('/') == domain)
        .map(|p| p.id)
        .collect()
}

fn domains(ledger: &Ledger) -> Vec<String> {
    ledger.projects.iter().map(|p| p.domain.clone()).collect()
}

/// The accounts file: account `b` on `sandbox_b`, its token and ticket in files, capped at
/// `cap_rub` a month.
fn accounts_file(dir: &Path, sandbox_b: &str, cap_rub: u32) -> PathBuf {
    let (token, ticket) = (dir.join("b-token"), dir.join("b-ticket"));
    std::fs::write(&token, format!("{TOKEN_B}\n")).unwrap();
    std::fs::write(&ticket, TICKET_B).unwrap();
    let path = dir.join("accounts.yaml");
    let text = format!(
        "accounts:\n  - id: b\n    base_url: {sandbox_b}\n    token_file: {}\n    ticket_file: {}\n    rate_limit: 200\n    monthly_cap: {cap_rub}\n",
        token.display(),
        ticket.display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// `once --account-file FILE`; the test fails unless it exits 0. Returns what it printed.
async fn once(w: &World, file: &Path) -> String {
    let out = run(w, &["once", "--account-file", file.to_str().unwrap()]).await;
    assert!(out.status.success(), "{}", text(&out));
    text(&out)
}

pub async fn two_accounts_buy_each_in_its_own_marketplace_and_a_cap_on_one_stops_only_it(
    db: TestDb,
) {
    // Arrange: account A is the command line's sandbox; account B a second one with its own
    // credentials, in the accounts file; links rent at 100 RUB in both.
    let w = World::new(db, priced_config(30, 100)).await;
    let mut cfg_b = sandbox::config(TOKEN_B, TICKET_B, 1);
    let cfg_a = priced_config(30, 100);
    (cfg_b.inventory_size, cfg_b.price_min, cfg_b.price_max) =
        (cfg_a.inventory_size, cfg_a.price_min, cfg_a.price_max);
    cfg_b.seed = 2;
    let sandbox_b = sandbox::start(cfg_b).await;
    // B's ids start past a project of the team's own, so they do not coincide with A's: the
    // journal's keys by marketplace id are not scoped by account yet (issue 34, ownership).
    sandbox_b.seed_in_use("https://team.example").unwrap();
    let secrets = tempfile::tempdir().unwrap();
    w.write_campaign("alpha", &campaign("alpha", None));
    w.write_campaign("bravo", &campaign("bravo", Some("b")));

    // Act: one pass with room for B's round, then B's cap lowered to what it holds.
    let roomy = accounts_file(secrets.path(), &sandbox_b.base_url(), 10_000);
    let first = once(&w, &roomy).await;
    let (a1, b1) = (w.ledger(), sandbox_b.ledger());
    let capped = accounts_file(secrets.path(), &sandbox_b.base_url(), 400);
    let second = once(&w, &capped).await;
    let out = format!("{first}{second}");

    // Assert: each marketplace saw only its own account's campaign.
    let (a, b) = (w.ledger(), sandbox_b.ledger());
    assert_eq!(domains(&a), ["https://alpha.example"], "{out}");
    assert_eq!(
        domains(&b),
        ["https://team.example", "https://bravo.example"],
        "{out}"
    );
    let (pa, pb) = (projects(&a, "alpha"), projects(&b, "bravo"));
    let team = projects(&b, "team");
    let of = |l: &Ledger, ps: &HashSet<i64>| {
        l.purchases
            .iter()
            .filter(|p| ps.contains(&p.project_id))
            .count()
    };
    assert_eq!(of(&a, &pa), a.purchases.len(), "{out}");
    assert_eq!(of(&b, &pb) + of(&b, &team), b.purchases.len(), "{out}");
    ledger::assert_no_duplicate_purchase(&a);
    ledger::assert_no_duplicate_purchase(&b);
    // The first pass bought both rounds whole, each in its own marketplace.
    assert_eq!(
        ledger::commitment(&a1, &pa),
        Money::from_rubles(400),
        "{out}"
    );
    assert_eq!(
        ledger::commitment(&b1, &pb),
        Money::from_rubles(400),
        "{out}"
    );
    // At its cap, B bought nothing more; A, under no account cap, kept buying.
    assert_eq!((of(&b1, &pb), of(&b, &pb)), (4, 4), "{out}");
    assert!(of(&a, &pa) > of(&a1, &pa), "{out}");
    let journal = w.db.store.campaigns();
    let (ja, jb) = (
        journal.account_budget("default").await.unwrap(),
        journal.account_budget("b").await.unwrap(),
    );
    assert_eq!((ja.cap, ja.committed), (None, ledger::commitment(&a, &pa)));
    assert_eq!(
        (jb.cap, jb.committed),
        (Some(Money::from_rubles(400)), Money::from_rubles(400))
    );
}

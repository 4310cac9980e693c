//! Two `linkrunner run` processes on one PostgreSQL journal and a sandbox that serves two
//! accounts (issue 34): the daemons divide the accounts (each works one, through its account
//! lease), every campaign buys in its own account only, and when the daemon working one
//! account is SIGKILLed the other takes that account over once its lease expires — with no
//! purchase twice and no account's rate limit exceeded.

use std::path::Path;
use std::time::Duration;

use linkrunner_sandbox::{Faults, Ledger, SandboxAccount, SandboxHandle};

use super::support::{TICKET, TOKEN, command_on};
use crate::support::binary::Daemon;
use crate::support::campaigns;
use crate::support::db::TestDb;
use crate::support::sandbox;
use crate::support::wait::within;

const B: &str = "client-b";
const B_TOKEN: &str = "client-b-token";
const B_TICKET: &str = "client-b-ticket";
/// Each account's limit at the sandbox; each daemon sends at most `--rate-limit` 4 a second.
/// Two daemons sending for one account would pass it.
const SANDBOX_LIMIT: u32 = 6;

/// A sandbox serving the default account and `client-b`, each limited to 6 calls a second.
async fn two_account_sandbox() -> SandboxHandle {
    let mut cfg = sandbox::config(TOKEN, TICKET, 0);
    cfg.faults = Faults {
        latency_ms: 10,
        rate_limit: Some(SANDBOX_LIMIT),
        ..Faults::default()
    };
    let mut b = SandboxAccount::new(B, B_TOKEN, B_TICKET);
    b.rate_limit = Some(SANDBOX_LIMIT);
    sandbox::start(cfg.with_account(b)).await
}

/// The accounts file: `client-b` on the same sandbox, with its own secrets.
fn accounts_file(dir: &Path, sandbox: &SandboxHandle) -> std::path::PathBuf {
    std::fs::write(dir.join("b-token"), B_TOKEN).unwrap();
    std::fs::write(dir.join("b-ticket"), B_TICKET).unwrap();
    let file = dir.join("accounts.yaml");
    let text = format!(
        "accounts:\n  - id: {B}\n    base_url: {}\n    token_file: {}\n    ticket_file: {}\n    rate_limit: 4\n",
        sandbox.base_url(),
        dir.join("b-token").display(),
        dir.join("b-ticket").display()
    );
    std::fs::write(&file, text).unwrap();
    file
}

async fn start(db: &TestDb, campaigns: &Path, sandbox: &SandboxHandle, accounts: &Path) -> Daemon {
    let mut cmd = command_on(&db.url, campaigns, sandbox);
    cmd.env("LINKRUNNER_RECONCILE_INTERVAL", "3600")
        .env("LINKRUNNER_ACCOUNT_FILE", accounts)
        .env("LINKRUNNER_LEASE_TTL", "5");
    let mut d = Daemon::run(
        cmd,
        &[
            "--round-every",
            "1",
            "--rate-limit",
            "4",
            "--shutdown-grace",
            "5",
        ],
    )
    .await;
    d.ready().await;
    d
}

/// `linkrunner_accounts_worked` of a daemon; `None` when it did not answer.
async fn worked(d: &Daemon) -> Option<u32> {
    let body = d.metrics_body().await;
    body.lines()
        .find_map(|l| l.strip_prefix("linkrunner_accounts_worked "))
        .and_then(|v| v.trim().parse().ok())
}

fn ledgers(sandbox: &SandboxHandle) -> (Ledger, Ledger) {
    (sandbox.ledger(), sandbox.ledger_of(B).expect("client-b"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_daemons_divide_the_accounts_and_one_takes_over_when_the_other_is_killed() {
    // Arrange: a campaign in each account, a round every second, two daemons.
    crate::support::init_logs();
    let db = TestDb::postgres().await;
    let dir = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    campaigns::write(
        dir.path(),
        "home-a.yaml",
        &campaigns::simple("home-a", "0 9 * * *", 5000),
    );
    let b_campaign = format!(
        "account: {B}\n{}",
        campaigns::simple("away-b", "0 9 * * *", 5000)
    );
    campaigns::write(dir.path(), "away-b.yaml", &b_campaign);
    let sandbox = two_account_sandbox().await;
    let accounts = accounts_file(files.path(), &sandbox);
    let one = start(&db, dir.path(), &sandbox, &accounts).await;
    let two = start(&db, dir.path(), &sandbox, &accounts).await;

    // Act 1: the daemons settle on one account each, and both accounts buy.
    within(Duration::from_secs(30), "one account each", || async {
        (worked(&one).await == Some(1) && worked(&two).await == Some(1)).then_some(())
    })
    .await;
    within(Duration::from_secs(40), "both accounts buying", || async {
        let (a, b) = ledgers(&sandbox);
        (a.purchases.len() >= 2 && b.purchases.len() >= 2).then_some(())
    })
    .await;
    let before = ledgers(&sandbox);

    // Act 2: SIGKILL the first daemon; the second takes its account over.
    one.signal("KILL");
    within(
        Duration::from_secs(40),
        "the survivor works both accounts",
        || async { (worked(&two).await == Some(2)).then_some(()) },
    )
    .await;
    within(
        Duration::from_secs(40),
        "both accounts buying again",
        || async {
            let (a, b) = ledgers(&sandbox);
            (a.purchases.len() > before.0.purchases.len() + 1
                && b.purchases.len() > before.1.purchases.len() + 1)
                .then_some(())
        },
    )
    .await;
    drop(two);

    // Assert: each account bought for its own campaign only, nothing twice, no 429.
    let (a, b) = ledgers(&sandbox);
    let domains =
        |l: &Ledger| -> Vec<String> { l.projects.iter().map(|p| p.domain.clone()).collect() };
    assert_eq!(
        domains(&a),
        ["https://home-a.example"],
        "default account's projects"
    );
    assert_eq!(
        domains(&b),
        ["https://away-b.example"],
        "client-b's projects"
    );
    for (name, l) in [("default", &a), (B, &b)] {
        assert_eq!(l.duplicate_purchases, 0, "{name} bought a page twice");
        assert_eq!(l.rate_limited, 0, "{name}'s rate limit was exceeded");
        let projects: Vec<i64> = l.projects.iter().map(|p| p.id).collect();
        assert!(
            l.purchases.iter().all(|p| projects.contains(&p.project_id)),
            "{name} holds a purchase of another account's project"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_restarted_after_a_sigkill_works_its_accounts_at_once_not_after_the_lease() {
    // Arrange: one daemon with the default lease time (120 s) works both accounts.
    crate::support::init_logs();
    let db = TestDb::postgres().await;
    let dir = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    campaigns::write(
        dir.path(),
        "home-a.yaml",
        &campaigns::simple("home-a", "0 9 * * *", 5000),
    );
    let sandbox = two_account_sandbox().await;
    let accounts = accounts_file(files.path(), &sandbox);
    let start_one = || {
        let mut cmd = command_on(&db.url, dir.path(), &sandbox);
        cmd.env("LINKRUNNER_RECONCILE_INTERVAL", "3600")
            .env("LINKRUNNER_ACCOUNT_FILE", &accounts);
        Daemon::run(cmd, &["--round-every", "1", "--rate-limit", "4"])
    };
    let mut first = start_one().await;
    first.ready().await;
    within(
        Duration::from_secs(30),
        "the first daemon works both",
        || async { (worked(&first).await == Some(2)).then_some(()) },
    )
    .await;

    // Act: SIGKILL it (its leases stay in the journal for 120 s) and start another.
    first.signal("KILL");
    let _ = first.exit_within(Duration::from_secs(10)).await;
    let bought = sandbox.ledger().purchases.len();
    let mut second = start_one().await;
    second.ready().await;

    // Assert: the new daemon sees the holder gone from this host and works both accounts
    // within seconds, and buys.
    within(
        Duration::from_secs(20),
        "the restarted daemon works both",
        || async { (worked(&second).await == Some(2)).then_some(()) },
    )
    .await;
    within(Duration::from_secs(30), "buying again", || async {
        (sandbox.ledger().purchases.len() > bought).then_some(())
    })
    .await;
    assert_eq!(sandbox.ledger().duplicate_purchases, 0);
}

//! Two `linkrunner run` processes on one PostgreSQL journal and a sandbox that serves two
//! accounts (issue 34): the daemons divide the accounts (each works one, through its account
//! lease), every campaign buys in its own account only, and when the daemon working one
//! account is SIGKILLed the other takes that account over once its lease expires — with no
//! purchase twice and no account's rate limit exceeded. Each daemon holds only the campaigns
//! of the accounts it works, and another account's campaign is never taken for a removed one.

use std::path::{Path, PathBuf};
use std::time::Duration;

use linkrunner_sandbox::{Faults, Ledger, SandboxAccount, SandboxHandle};
use tempfile::TempDir;

use super::support::{TICKET, TOKEN, command_on, with_autobuyer};
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

/// One test's journal, campaign directory (holding `home-a`, in the default account), accounts
/// file and two-account sandbox.
struct World {
    db: TestDb,
    dir: TempDir,
    _files: TempDir,
    sandbox: SandboxHandle,
    accounts: PathBuf,
}

async fn world() -> World {
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
    World {
        db,
        dir,
        _files: files,
        sandbox,
        accounts,
    }
}

impl World {
    /// A ready daemon on this world, a round a second at 4 calls a second. `lease_ttl` (seconds)
    /// shortens the account lease from its default (120 s) so that a survivor takes a killed
    /// daemon's account over within the test, and the shutdown grace with it.
    async fn start(&self, lease_ttl: Option<&str>) -> Daemon {
        let mut cmd = command_on(&self.db.url, self.dir.path(), &self.sandbox);
        cmd.env("LINKRUNNER_RECONCILE_INTERVAL", "3600")
            .env("LINKRUNNER_ACCOUNT_FILE", &self.accounts);
        let mut args = vec!["--round-every", "1", "--rate-limit", "4"];
        if let Some(ttl) = lease_ttl {
            cmd.env("LINKRUNNER_LEASE_TTL", ttl);
            args.extend(["--shutdown-grace", ttl]);
        }
        let mut d = Daemon::run(cmd, &args).await;
        d.ready().await;
        d
    }
}

/// `linkrunner_accounts_worked` of a daemon; `None` when it did not answer.
async fn worked(d: &Daemon) -> Option<u32> {
    gauge(d, "linkrunner_accounts_worked").await
}

/// `linkrunner_campaigns_loaded` of a daemon: the campaigns it holds.
async fn loaded(d: &Daemon) -> Option<u32> {
    gauge(d, "linkrunner_campaigns_loaded").await
}

async fn gauge(d: &Daemon, name: &str) -> Option<u32> {
    let body = d.metrics_body().await;
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

fn ledgers(sandbox: &SandboxHandle) -> (Ledger, Ledger) {
    (sandbox.ledger(), sandbox.ledger_of(B).expect("client-b"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_daemons_divide_the_accounts_and_one_takes_over_when_the_other_is_killed() {
    // Arrange: a campaign in each account (b's with a running autobuyer, so a removal would
    // show on its ledger), a round every second, two daemons.
    let w = world().await;
    let b_campaign = format!("account: {B}\n{}", with_autobuyer("away-b", "0 9 * * *"));
    campaigns::write(w.dir.path(), "away-b.yaml", &b_campaign);
    let one = w.start(Some("5")).await;
    let two = w.start(Some("5")).await;
    let sandbox = &w.sandbox;

    // Act 1: the daemons settle on one account each, and both accounts buy.
    within(Duration::from_secs(30), "one account each", || async {
        (worked(&one).await == Some(1) && worked(&two).await == Some(1)).then_some(())
    })
    .await;
    within(
        Duration::from_secs(20),
        "each holds one campaign",
        || async { (loaded(&one).await == Some(1) && loaded(&two).await == Some(1)).then_some(()) },
    )
    .await;
    within(Duration::from_secs(40), "both accounts buying", || async {
        let (a, b) = ledgers(sandbox);
        (a.purchases.len() >= 2 && b.purchases.len() >= 2).then_some(())
    })
    .await;
    let before = ledgers(sandbox);

    // Act 2: SIGKILL the first daemon; the second takes its account over.
    one.signal("KILL");
    within(
        Duration::from_secs(40),
        "the survivor works both accounts",
        || async { (worked(&two).await == Some(2)).then_some(()) },
    )
    .await;
    within(
        Duration::from_secs(20),
        "the survivor holds both campaigns",
        || async { (loaded(&two).await == Some(2)).then_some(()) },
    )
    .await;
    within(
        Duration::from_secs(40),
        "both accounts buying again",
        || async {
            let (a, b) = ledgers(sandbox);
            (a.purchases.len() > before.0.purchases.len() + 1
                && b.purchases.len() > before.1.purchases.len() + 1)
                .then_some(())
        },
    )
    .await;
    drop(two);

    // Assert: each account bought for its own campaign only, nothing twice, no 429.
    let (a, b) = ledgers(sandbox);
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
        assert_eq!(
            l.requests.get("stop_autobuyers"),
            None,
            "{name}'s autobuyers were stopped: a campaign held elsewhere taken for removed"
        );
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
    let w = world().await;
    let sandbox = &w.sandbox;
    let mut first = w.start(None).await;
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
    let second = w.start(None).await;

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

//! Notifications (issue 33) against a webhook receiver on loopback: each event a person must
//! act on is told once — by two replicas on one PostgreSQL journal, and after a restart —
//! naming the campaign, the reason and the command, and told again when it recurs; a
//! receiver that hangs or answers 500 changes nothing in the passes (the sandbox's ledger
//! shows the purchases a run without notifications makes) and is tried a bounded number of
//! times.

use std::path::{Path, PathBuf};
use std::time::Duration;

use linkrunner::daemon::run::DaemonOptions;
use linkrunner::notify::parse_notify_file;
use linkrunner::store::{HaltScope, Store};
use linkrunner_sandbox::SandboxHandle;

use super::support::{TOKEN, TICKET, campaign_yaml, get, run_binary, series, start_sandbox, within, write};
use crate::support::app::{self, InProcess, Journal};
use crate::support::db::TestDb;
use crate::support::receiver::{Answer, Receiver};

/// A campaign that buys two links a round until `total` links are bought.
fn capped(name: &str, total: u32) -> String {
    campaign_yaml(name, "0 9 * * *", 3000).replace("total_links: 500", &format!("total_links: {total}"))
}

fn notify_file(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("notify.yaml");
    std::fs::write(&path, text).expect("notify file");
    path
}

async fn halt(store: &Store, campaign: &str, reason: &str) {
    store
        .set_halt(&HaltScope::campaign(campaign), reason, chrono::Utc::now())
        .await
        .expect("set halt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_event_is_told_once_by_two_replicas_and_after_a_restart() {
    // Arrange: a campaign that reaches its total links cap, two replicas on PostgreSQL, each
    // looking at the journal every second and telling a generic and a Slack endpoint.
    crate::support::init_logs();
    let db = TestDb::postgres().await;
    let campaigns = tempfile::tempdir().unwrap();
    let conf = tempfile::tempdir().unwrap();
    write(campaigns.path(), "tell-a.yaml", &capped("tell-a", 2));
    let sandbox = start_sandbox(0).await;
    let receiver = Receiver::start(Answer::Status(200)).await;
    let file = notify_file(
        conf.path(),
        &format!(
            "interval_seconds: 1\nendpoints:\n  - name: ops\n    address: {}\n  - name: chat\n    format: slack\n    address: {}\n",
            receiver.url("hook/ops"),
            receiver.url("hook/chat")
        ),
    );
    let file = file.to_str().unwrap();
    let args = ["--round-every", "1", "--shutdown-grace", "10", "--notify-file", file];
    let mut one = run_binary(&db.url, campaigns.path(), &sandbox, &args).await;
    let mut two = run_binary(&db.url, campaigns.path(), &sandbox, &args).await;
    one.ready().await;
    two.ready().await;
    let cap = "cap_reached:total_links:tell-a";
    let waiting = "state:waiting_for_operator:tell-a";

    // Act: the cap is reached by buying; an operator's attention is needed; time passes for
    // many looks of both replicas; one replica restarts and looks again.
    within(Duration::from_secs(40), "the cap told", || async {
        (!receiver.with("key", cap).is_empty()).then_some(())
    })
    .await;
    halt(&db.store, "tell-a", "an operator must look at intent 7").await;
    within(Duration::from_secs(20), "the wait told", || async {
        (!receiver.with("key", waiting).is_empty()).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (_, one_err) = one.stop().await;
    let mut three = run_binary(&db.url, campaigns.path(), &sandbox, &args).await;
    three.ready().await;
    tokio::time::sleep(Duration::from_secs(3)).await;

    // Assert: each event once per endpoint, naming the campaign, the reason and the command.
    let told = receiver.with("key", cap);
    assert_eq!(told.len(), 1, "the cap told once: {:?}", receiver.received());
    assert_eq!(told[0]["event"], "cap_reached");
    assert_eq!(told[0]["campaign"], "tell-a");
    assert!(told[0]["reason"].as_str().unwrap().contains("total_links"));
    assert!(told[0]["command"].as_str().unwrap().contains("budget.total_links"));
    let told = receiver.with("key", waiting);
    assert_eq!(told.len(), 1, "the wait told once: {:?}", receiver.received());
    assert!(told[0]["reason"].as_str().unwrap().contains("intent 7"));
    assert!(told[0]["command"].as_str().unwrap().contains("linkrunner status tell-a"));
    let chat: Vec<String> = receiver
        .received()
        .into_iter()
        .filter(|(path, _)| path == "/hook/chat")
        .map(|(_, b)| b["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(chat.len(), 2, "one Slack message per event: {chat:?}");
    assert!(chat.iter().all(|t| t.contains("campaign tell-a") && t.contains("To resolve: ")));
    assert_eq!(sandbox.ledger().purchases.len(), 2);
    assert_eq!(sandbox.ledger().duplicate_purchases, 0);
    assert!(!String::from_utf8_lossy(&one_err).contains(&receiver.url("hook")));

    // Act and assert: the condition clears, then recurs: told again, once.
    db.store.clear_halt(&HaltScope::campaign("tell-a")).await.unwrap();
    within(Duration::from_secs(20), "the wait's claim cleared", || async {
        let claims = db.store.notices().await.ok()?;
        (!claims.iter().any(|n| n.key == waiting)).then_some(())
    })
    .await;
    halt(&db.store, "tell-a", "an operator must look again").await;
    within(Duration::from_secs(20), "the recurrence told", || async {
        (receiver.with("key", waiting).len() == 2).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(receiver.with("key", waiting).len(), 2);
    assert_eq!(receiver.with("key", cap).len(), 1);
    two.stop().await;
    three.stop().await;
}

/// The daemon in this process on a fresh SQLite journal and sandbox, buying every second,
/// with `calm-b` halted before it starts; notifications as `notify` says.
async fn calm_run(notify: Option<String>) -> (InProcess, SandboxHandle, TestDb, tempfile::TempDir) {
    let db = TestDb::sqlite().await;
    let campaigns = tempfile::tempdir().unwrap();
    write(campaigns.path(), "calm-a.yaml", &capped("calm-a", 4));
    write(campaigns.path(), "calm-b.yaml", &capped("calm-b", 4));
    halt(&db.store, "calm-b", "an operator must look at calm-b").await;
    let sandbox = start_sandbox(0).await;
    let market = app::client_config(&sandbox.base_url(), TOKEN, TICKET);
    let mut settings = app::settings(Journal::Url(db.url.clone()), market);
    settings.daemon = DaemonOptions {
        campaigns_dir: campaigns.path().to_path_buf(),
        reconcile_interval: Duration::from_secs(3600),
        shutdown_grace: Duration::from_secs(10),
        round_every: Some(Duration::from_secs(1)),
        watch: false,
        signals: false,
    };
    settings.notify = notify.map(|t| parse_notify_file(t.as_bytes()).expect("notify file"));
    (InProcess::start(settings).await, sandbox, db, campaigns)
}

async fn four_purchases(sandbox: &SandboxHandle) {
    within(Duration::from_secs(40), "four links bought", || async {
        (sandbox.ledger().purchases.len() >= 4).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_hangs_or_fails_changes_nothing_in_the_passes_and_is_tried_a_bounded_number_of_times() {
    crate::support::init_logs();
    // Arrange: the same campaigns without notifications, for the ledger to compare with.
    let (plain, plain_market, _plain_db, _d) = calm_run(None).await;
    four_purchases(&plain_market).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    plain.stop().await;
    let failing = Receiver::start(Answer::Status(500)).await;
    let hanging = Receiver::start(Answer::Hang).await;
    let notify = format!(
        "interval_seconds: 1\nendpoints:\n  - name: failing\n    format: slack\n    address: {}\n    retries: 2\n    timeout_seconds: 1\n  - name: hanging\n    address: {}\n    retries: 1\n    timeout_seconds: 1\n",
        failing.url("hook"),
        hanging.url("hook")
    );

    // Act: the same run, telling a receiver that answers 500 and one that never answers.
    let (d, market, _db, _d2) = calm_run(Some(notify)).await;
    four_purchases(&market).await;
    let metrics = |d: &InProcess| {
        let url = format!("{}/metrics", d.base);
        async move { get(&url).await.1 }
    };
    within(Duration::from_secs(30), "both endpoints gave up on the wait", || async {
        let body = metrics(&d).await;
        let slack = series(&body, r#"linkrunner_notifications_failed_total{event="waiting_for_operator",format="slack"}"#)?;
        let generic = series(&body, r#"linkrunner_notifications_failed_total{event="waiting_for_operator",format="generic"}"#)?;
        (slack >= 1.0 && generic >= 1.0).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let body = metrics(&d).await;
    d.stop().await;

    // Assert: the same purchases as without notifications, nothing bought twice, calm-b
    // (halted) nothing; the failing receiver got the wait 1 + 2 times, the hanging one 1 + 1.
    let (with, without) = (market.ledger(), plain_market.ledger());
    assert_eq!(with.purchases.len(), without.purchases.len());
    assert_eq!(with.purchases.len(), 4);
    assert_eq!(with.duplicate_purchases, 0);
    assert_eq!(with.projects.len(), without.projects.len());
    let key = "state:waiting_for_operator:calm-b";
    let tries = failing
        .received()
        .into_iter()
        .filter(|(_, b)| b["text"].as_str().is_some_and(|t| t.contains("campaign calm-b")))
        .count();
    assert_eq!(tries, 3, "1 try and 2 retries: {:?}", failing.received());
    assert_eq!(hanging.with("key", key).len(), 2, "1 try and 1 retry");
    assert_eq!(
        series(&body, r#"linkrunner_notifications_sent_total{event="waiting_for_operator",format="slack"}"#),
        Some(0.0)
    );
}

//! Notifications (issue 33) against a webhook receiver on loopback: each event a person must
//! act on is told once — by two replicas on one PostgreSQL journal, and after a restart —
//! naming the campaign, the reason and the command, and a new one is told when the condition
//! changes; a receiver that hangs or answers 500 changes nothing in the passes (the sandbox's
//! ledger shows the purchases a run without notifications makes) and is tried a bounded
//! number of times. The conditions are real ones (caps reached by buying): a halt a test sets
//! by hand is lifted by the next pass, which has nothing waiting for an operator.

use std::path::{Path, PathBuf};
use std::time::Duration;

use linkrunner::daemon::run::DaemonOptions;
use linkrunner::notify::parse_notify_file;
use linkrunner_sandbox::SandboxHandle;

use super::support::{TICKET, TOKEN, run_binary, start_sandbox, with_autobuyer};
use crate::support::app::{self, InProcess, Journal};
use crate::support::campaigns;
use crate::support::db::TestDb;
use crate::support::http::get;
use crate::support::http::series;
use crate::support::ledger::careless_autobuyers_buy_held_pages;
use crate::support::receiver::{Answer, Receiver};
use crate::support::wait::within;

/// A campaign that buys two links a round until `total` links are bought.
fn capped(name: &str, total: u32) -> String {
    campaigns::simple(name, "0 9 * * *", 3000)
        .replace("total_links: 500", &format!("total_links: {total}"))
        .replace("daily_links: 100", &format!("daily_links: {total}"))
}

fn notify_file(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("notify.yaml");
    std::fs::write(&path, text).expect("notify file");
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_event_is_told_once_by_two_replicas_and_after_a_restart() {
    // Arrange: a campaign that reaches its total links cap, two replicas on PostgreSQL, each
    // looking at the journal every second and telling a generic and a Slack endpoint.
    crate::support::init_logs();
    let db = TestDb::postgres().await;
    let campaigns = tempfile::tempdir().unwrap();
    let conf = tempfile::tempdir().unwrap();
    campaigns::write(campaigns.path(), "tell-a.yaml", &capped("tell-a", 2));
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
    let args = [
        "--round-every",
        "1",
        "--shutdown-grace",
        "10",
        "--notify-file",
        file,
    ];
    let mut one = run_binary(&db.url, campaigns.path(), &sandbox, &args).await;
    let mut two = run_binary(&db.url, campaigns.path(), &sandbox, &args).await;
    one.ready().await;
    two.ready().await;
    let cap = "cap_reached:total_links:tell-a:2";

    // Act: the cap is reached by buying; time passes for many looks of both replicas; one
    // replica restarts and looks again.
    within(Duration::from_secs(40), "the cap told", || async {
        (!receiver.with("key", cap).is_empty()).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (_, one_err) = one.stop().await;
    let mut three = run_binary(&db.url, campaigns.path(), &sandbox, &args).await;
    three.ready().await;
    tokio::time::sleep(Duration::from_secs(3)).await;

    // Assert: told once per endpoint, naming the campaign, the reason and the command.
    let told = receiver.with("key", cap);
    assert_eq!(told.len(), 1, "told once: {:?}", receiver.received());
    assert_eq!(told[0]["event"], "cap_reached");
    assert_eq!(told[0]["campaign"], "tell-a");
    assert!(told[0]["reason"].as_str().unwrap().contains("total_links"));
    assert!(
        told[0]["command"]
            .as_str()
            .unwrap()
            .contains("budget.total_links")
    );
    let chat = |r: &Receiver| -> Vec<String> {
        r.received()
            .into_iter()
            .filter(|(path, _)| path == "/hook/chat")
            .map(|(_, b)| b["text"].as_str().unwrap().to_string())
            .collect()
    };
    let texts = chat(&receiver);
    assert_eq!(texts.len(), 1, "one Slack message: {texts:?}");
    assert!(texts[0].contains("campaign tell-a") && texts[0].contains("budget.total_links"));
    assert_eq!(receiver.received().len(), 2, "nothing else was told");
    assert_eq!(sandbox.ledger().purchases.len(), 2);
    assert!(!String::from_utf8_lossy(&one_err).contains(&receiver.url("hook")));

    // Act and assert: an operator raises the cap; the campaign buys up to the new one, which
    // is a new event, told once; the old claim is cleared.
    campaigns::write(campaigns.path(), "tell-a.yaml", &capped("tell-a", 4));
    let raised = "cap_reached:total_links:tell-a:4";
    within(Duration::from_secs(40), "the raised cap told", || async {
        (!receiver.with("key", raised).is_empty()).then_some(())
    })
    .await;
    within(Duration::from_secs(20), "the old claim cleared", || async {
        let claims = db.store.notices().await.ok()?;
        let keys: Vec<_> = claims.iter().map(|n| n.key.as_str()).collect();
        (keys == [raised]).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(receiver.with("key", raised).len(), 1);
    assert_eq!(receiver.with("key", cap).len(), 1);
    assert_eq!(chat(&receiver).len(), 2);
    assert_eq!(sandbox.ledger().purchases.len(), 4);
    assert_eq!(sandbox.ledger().duplicate_purchases, 0);
    two.stop().await;
    three.stop().await;
}

/// The daemon in this process on a fresh SQLite journal and sandbox, buying every second:
/// `calm-b` reaches its cap of 2 links at its first round, `calm-a` buys on to 6.
/// Notifications as `notify` says.
async fn calm_run(notify: Option<String>) -> (InProcess, SandboxHandle, TestDb, tempfile::TempDir) {
    let files = [
        ("calm-a", capped("calm-a", 6)),
        ("calm-b", capped("calm-b", 2)),
    ];
    run_told(&files, notify).await
}

/// The daemon in this process on a fresh SQLite journal and sandbox, buying every second, on
/// the campaign `files` (name, YAML). Notifications as `notify` says.
async fn run_told(
    files: &[(&str, String)],
    notify: Option<String>,
) -> (InProcess, SandboxHandle, TestDb, tempfile::TempDir) {
    let db = TestDb::sqlite().await;
    let campaigns = tempfile::tempdir().unwrap();
    for (name, yaml) in files {
        campaigns::write(campaigns.path(), &format!("{name}.yaml"), yaml);
    }
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
        ..DaemonOptions::default()
    };
    settings.notify = notify.map(|t| parse_notify_file(t.as_bytes()).expect("notify file"));
    (InProcess::start(settings).await, sandbox, db, campaigns)
}

async fn eight_purchases(sandbox: &SandboxHandle) {
    within(Duration::from_secs(40), "eight links bought", || async {
        (sandbox.ledger().purchases.len() >= 8).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_hangs_or_fails_changes_nothing_in_the_passes_and_is_tried_a_bounded_number_of_times()
 {
    crate::support::init_logs();
    // Arrange: the same campaigns without notifications, for the ledger to compare with.
    let (plain, plain_market, _plain_db, _d) = calm_run(None).await;
    eight_purchases(&plain_market).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    plain.stop().await;
    let failing = Receiver::start(Answer::Status(500)).await;
    let hanging = Receiver::start(Answer::Hang).await;
    let notify = format!(
        "interval_seconds: 1\nendpoints:\n  - name: failing\n    format: slack\n    address: {}\n    retries: 2\n    timeout_seconds: 1\n  - name: hanging\n    address: {}\n    retries: 1\n    timeout_seconds: 1\n",
        failing.url("hook"),
        hanging.url("hook")
    );

    // Act: the same run, telling a receiver that answers 500 and one that never answers, from
    // calm-b's cap (reached at the first round) while calm-a still buys.
    let (d, market, _db, _d2) = calm_run(Some(notify)).await;
    eight_purchases(&market).await;
    let metrics_url = format!("{}/metrics", d.base);
    let failed = |format: &'static str| {
        let url = metrics_url.clone();
        async move {
            let body = get(&url).await.1;
            series(
                &body,
                &format!(
                    r#"linkrunner_notifications_failed_total{{event="cap_reached",format="{format}"}}"#
                ),
            )
        }
    };
    within(
        Duration::from_secs(30),
        "both endpoints gave up on both caps",
        || async {
            (failed("slack").await? >= 2.0 && failed("generic").await? >= 2.0).then_some(())
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let body = get(&metrics_url).await.1;
    d.stop().await;

    // Assert: the same purchases as without notifications, nothing bought twice; the
    // failing receiver got calm-b's cap 1 + 2 times, the hanging one 1 + 1, and no more.
    let (with, without) = (market.ledger(), plain_market.ledger());
    assert_eq!(with.purchases.len(), without.purchases.len());
    assert_eq!(with.purchases.len(), 8);
    assert_eq!(with.duplicate_purchases, 0);
    assert_eq!(with.projects.len(), without.projects.len());
    let tries = failing
        .received()
        .into_iter()
        .filter(|(_, b)| {
            b["text"]
                .as_str()
                .is_some_and(|t| t.contains("campaign calm-b"))
        })
        .count();
    assert_eq!(tries, 3, "1 try and 2 retries: {:?}", failing.received());
    assert_eq!(
        hanging
            .with("key", "cap_reached:total_links:calm-b:2")
            .len(),
        2,
        "1 try and 1 retry"
    );
    assert_eq!(
        series(
            &body,
            r#"linkrunner_notifications_sent_total{event="cap_reached",format="slack"}"#
        ),
        Some(0.0)
    );
    assert_eq!(
        series(
            &body,
            r#"linkrunner_notifications_failed_total{event="cap_reached",format="slack"}"#
        ),
        Some(2.0),
        "one failure per cap, after its retries"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_held_twice_is_told_once_with_both_links_the_page_the_url_and_the_campaign() {
    // Arrange: a campaign buying every second beside its running autobuyer, told to a
    // receiver every second.
    crate::support::init_logs();
    let receiver = Receiver::start(Answer::Status(200)).await;
    let notify = format!(
        "interval_seconds: 1\nendpoints:\n  - name: ops\n    address: {}\n",
        receiver.url("hook")
    );
    let files = [("twice-a", with_autobuyer("twice-a", "0 9 * * *"))];
    let (d, sandbox, db, _dir) = run_told(&files, Some(notify)).await;
    within(Duration::from_secs(40), "links bought", || async {
        (sandbox.ledger().purchases.len() >= 4).then_some(())
    })
    .await;

    // Act: a careless autobuyer buys pages the project already holds for its URL.
    let doubles = careless_autobuyers_buy_held_pages(&sandbox, 3);
    let ledger = sandbox.ledger();
    let told = || receiver.with("event", "page_held_twice");
    within(
        Duration::from_secs(30),
        "every page held twice told",
        || async { (told().len() >= doubles.len()).then_some(()) },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    d.stop().await;

    // Assert: one message per page, naming the campaign, the URL, the page and both links
    // as the sandbox's ledger has them.
    let told = told();
    assert_eq!(told.len(), doubles.len(), "once per page: {told:?}");
    let url = "https://twice-a.example/page";
    let url_id = db
        .store
        .campaigns()
        .remote_ids("twice-a")
        .await
        .unwrap()
        .urls[url];
    for (u, page) in &doubles {
        assert_eq!(*u, url_id);
        let mut links: Vec<String> = ledger
            .purchases
            .iter()
            .filter(|p| (p.url_id, p.page_id) == (*u, *page))
            .map(|p| p.link_id.to_string())
            .collect();
        links.sort_by_key(|l| l.parse::<i64>().unwrap());
        let reason = format!(
            "page {page} holds {} links for {url} (URL id {u} of project",
            links.len()
        );
        let e = told
            .iter()
            .find(|e| e["reason"].as_str().unwrap().starts_with(&reason))
            .unwrap_or_else(|| panic!("{reason}: {told:?}"));
        assert_eq!(e["campaign"], "twice-a");
        let command = format!("withdraw one of links {}", links.join(", "));
        assert!(e["command"].as_str().unwrap().starts_with(&command), "{e}");
    }
}

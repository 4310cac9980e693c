//! Secret canary: the binary runs at trace level with a unique token and ticket through
//! injected marketplace faults; neither secret shows — raw, percent-encoded or base64 — in
//! stdout, stderr (logs and any panic), `/metrics`, `/readyz`, `/api/v1/...`, `status`
//! output, or the bytes of the journal database.

use std::time::Duration;

use linkrunner_sandbox::{Faults, Op};

use super::support::*;
use crate::support::db::TestDb;
use crate::support::http::http_get;
use crate::support::init_logs;
use crate::support::sandbox;
use crate::support::wait::within;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canary_secrets_appear_in_no_output_log_endpoint_or_database_dump() {
    init_logs();
    let canary = Canary::new();
    let mut cfg = sandbox_config(&canary);
    cfg.faults = Faults {
        error_rate: 0.2,
        error_ops: Some([Op::AddTexts, Op::SearchResult, Op::ListLinks].into()),
        latency_ms: 20,
        drop_after_commit_rate: 0.5,
        drop_ops: Some([Op::BuyLinks].into()),
        ..Faults::default()
    };
    let sandbox = sandbox::start(cfg).await;
    let campaigns = campaign_dir("* * * * *");
    let journal = TestDb::sqlite().await;
    let db_file = journal.sqlite_file().expect("a SQLite journal");
    let db_url = journal.url.clone();
    let store = journal.store.clone();
    seed_past_round(&store).await;

    let daemon = start_binary(&db_url, campaigns.path(), &sandbox, &canary).await;
    within(
        Duration::from_secs(45),
        "a finished buy round with purchases",
        || async {
            let round = store.rounds().last_round(CAMPAIGN).await.ok().flatten()?;
            let done = round.finished_at.is_some() && round.detail != "seed";
            (done && !sandbox.ledger().purchases.is_empty()).then_some(())
        },
    )
    .await;
    let mut seen: Vec<(String, Vec<u8>)> = Vec::new();
    for path in [
        "/metrics",
        "/readyz",
        "/api/v1/campaigns",
        "/api/v1/campaigns/fault-shoes",
    ] {
        let (_, body) = http_get(daemon.addr, path).await.expect("endpoint answers");
        seen.push((path.to_string(), body.into_bytes()));
    }
    let (stdout, stderr) = daemon.stop().await;
    for format in ["json", "text"] {
        let out = linkrunner(&db_url, campaigns.path(), &sandbox, &canary)
            .args(["status", "--format", format])
            .output()
            .expect("status runs");
        assert!(out.status.success(), "status --format {format}: {out:?}");
        seen.push((format!("status --format {format} (stdout)"), out.stdout));
        seen.push((format!("status --format {format} (stderr)"), out.stderr));
    }
    store.close().await;
    seen.extend(run_and_journal(stdout, &stderr, &db_file));

    let leaks: Vec<_> = seen
        .iter()
        .map(|(what, bytes)| (what, canary.found_in(bytes)))
        .filter(|(_, found)| !found.is_empty())
        .collect();
    assert!(leaks.is_empty(), "secrets leaked: {leaks:?}");
    let stderr = String::from_utf8_lossy(&stderr);
    assert!(
        stderr.contains("TRACE") && stderr.contains("Placement.createPlacementsRent"),
        "the run logged at trace level and reached purchases"
    );
    assert!(
        seen.iter().any(|(w, b)| w == "/api/v1/campaigns" && String::from_utf8_lossy(b).contains(CAMPAIGN)),
        "the status API showed the campaign"
    );
}

/// The notify file's addresses are secrets too: the marketplace rejects the credentials (a
/// global halt, which stands while it does), the receiver fails (so the failure is logged
/// after its retries), the logs are at trace level; the address shows in no output, log,
/// endpoint or the journal's bytes, while the receiver did get the event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notify_address_appears_in_no_output_log_endpoint_or_database_dump() {
    use crate::support::binary;
    use crate::support::receiver::{Answer, Receiver};
    use linkrunner_sandbox::SandboxConfig;

    init_logs();
    let canary = Canary::new();
    let secret = format!("Notify{}", canary.token);
    let receiver = Receiver::start(Answer::Status(500)).await;
    let address = receiver.url(&format!("hook/{secret}"));
    let conf = tempfile::tempdir().unwrap();
    let file = conf.path().join("notify.json");
    std::fs::write(
        &file,
        format!(
            r#"{{"interval_seconds": 1, "endpoints": [{{"name": "ops", "address": "{address}", "retries": 1, "timeout_seconds": 2}}]}}"#
        ),
    )
    .unwrap();
    // A marketplace that knows other credentials: every call is a 401.
    let sandbox = sandbox::start(SandboxConfig::new("not-the-canary", "not-the-canary")).await;
    let campaigns = campaign_dir("0 9 * * *");
    let journal = TestDb::sqlite().await;
    let db_file = journal.sqlite_file().expect("a SQLite journal");
    let db_url = journal.url.clone();
    let store = journal.store.clone();

    let args = [
        "--reconcile-interval",
        "5",
        "--shutdown-grace",
        "10",
        "--notify-file",
        file.to_str().unwrap(),
    ];
    let daemon = binary::Daemon::run(
        linkrunner(&db_url, campaigns.path(), &sandbox, &canary),
        &args,
    )
    .await;
    within(Duration::from_secs(30), "the halt tried twice", || async {
        (receiver.received().len() >= 2).then_some(())
    })
    .await;
    within(Duration::from_secs(20), "the failure counted", || async {
        let (_, body) = http_get(daemon.addr, "/metrics").await?;
        body.contains(r#"linkrunner_notifications_failed_total{event="halted",format="generic"} 1"#)
            .then_some(())
    })
    .await;
    let mut seen: Vec<(String, Vec<u8>)> = Vec::new();
    for path in ["/metrics", "/api/v1/campaigns", "/api/v1/state"] {
        let (_, body) = http_get(daemon.addr, path).await.expect("endpoint answers");
        seen.push((path.to_string(), body.into_bytes()));
    }
    let (stdout, stderr) = daemon.stop().await;
    store.close().await;
    seen.extend(run_and_journal(stdout, &stderr, &db_file));

    let leaks: Vec<_> = seen
        .iter()
        .filter(|(_, bytes)| bytes.windows(secret.len()).any(|w| w == secret.as_bytes()))
        .map(|(what, _)| what)
        .collect();
    assert!(
        leaks.is_empty(),
        "the notify address leaked into: {leaks:?}"
    );
    let stderr = String::from_utf8_lossy(&stderr);
    assert!(
        stderr.contains("notification not delivered") && stderr.contains("TRACE"),
        "the run logged the failure at trace level"
    );
    let (path, body) = &receiver.received()[0];
    assert_eq!(path, &format!("/hook/{secret}"));
    assert_eq!(body["event"], "halted");
    assert!(
        body["reason"]
            .as_str()
            .unwrap()
            .contains("credentials rejected")
    );
}

/// What `linkrunner run` printed and the journal's bytes, named for a leak message.
fn run_and_journal(
    stdout: Vec<u8>,
    stderr: &[u8],
    db_file: &std::path::Path,
) -> [(String, Vec<u8>); 3] {
    [
        ("run stdout".into(), stdout),
        ("run stderr".into(), stderr.to_vec()),
        ("the journal database".into(), sqlite_bytes(db_file)),
    ]
}

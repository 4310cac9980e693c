//! Secret canary: the binary runs at trace level with a unique token and ticket through
//! injected marketplace faults; neither secret shows — raw, percent-encoded or base64 — in
//! stdout, stderr (logs and any panic), `/metrics`, `/readyz`, `/api/v1/...`, `status`
//! output, or the bytes of the journal database.

use std::time::Duration;

use linkrunner_sandbox::{Faults, Op};

use super::support::*;

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
    let sandbox = start_sandbox(cfg).await;
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
    seen.push(("run stdout".into(), stdout));
    seen.push(("run stderr".into(), stderr.clone()));
    seen.push(("the journal database".into(), sqlite_bytes(&db_file)));

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

//! `linkrunner probe` against every variant of the sandbox: for each value of each `Shape`
//! dimension (and a sandbox that takes only the bare token), the probe — first without a
//! project, then on the project a reconciliation created — must suggest the settings with
//! which a buy pass converges and buys per_run links, checked on the sandbox's ledger. The
//! binary test then does what an operator does: probe, once, probe --project, once with the
//! printed flags.

use std::process::Output;
use std::sync::Arc;
use std::time::Duration;

use linkrunner::cli::probe::checks::{self as probe, ProbeOptions, ProbeReport};
use linkrunner::effects::Engine;
use linkrunner::effects::pass::PassOutcome;
use linkrunner::market::{AuthScheme, FieldMap, MarketClient};
use linkrunner::metrics::Metrics;
use linkrunner_sandbox::SandboxAuth;
use linkrunner_sandbox::SandboxConfig;
use linkrunner_sandbox::shapes::Shape;

use super::binary::{run, text};
use super::fixtures::ACME;
use super::support::{TICKET, TOKEN, TestDb, World, sandbox_config};
use crate::support::app::{self, Journal, fast_settings};

fn market(w: &World, scheme: AuthScheme, field_map: &str) -> linkrunner::market::ClientConfig {
    let mut c = app::client_config(&w.sandbox.base_url(), TOKEN, TICKET);
    c.auth_scheme = scheme;
    c.field_map = FieldMap::parse(field_map).expect("the probe's field map parses");
    c
}

async fn engine(w: &World, scheme: AuthScheme, field_map: &str) -> Engine<MarketClient> {
    let mut app = app::settings(
        Journal::Open(w.store().clone()),
        market(w, scheme, field_map),
    );
    app.engine = fast_settings();
    app::build(app).await
}

async fn run_probe(w: &World, scheme: AuthScheme, project: Option<(i64, i64)>) -> ProbeReport {
    let opts = ProbeOptions {
        project: project.map(|p| p.0),
        url_id: project.map(|p| p.1),
        poll_every: Duration::from_millis(20),
        wait: Duration::from_secs(10),
    };
    probe::probe(market(w, scheme, ""), &opts, Arc::new(Metrics::new()))
        .await
        .expect("the probe runs")
}

fn scheme(name: &str) -> AuthScheme {
    match name {
        "raw" => AuthScheme::Raw,
        _ => AuthScheme::Bearer,
    }
}

/// Probe, reconcile (creates the project, buys nothing), probe the project, then a buy pass
/// with exactly the suggested settings. Returns a description of what went wrong, if anything.
async fn probe_then_buy(cfg: SandboxConfig, label: &str) -> Result<(), String> {
    let mut w = World::new(TestDb::sqlite().await, cfg).await;
    w.write_campaign("acme-shoes", ACME);
    let first = run_probe(&w, AuthScheme::Bearer, None).await;
    if !first.problems.is_empty() {
        return Err(format!("{label}: probe without project: {first:#?}"));
    }
    let auth = scheme(first.settings.auth_scheme);
    w.engine = engine(&w, auth, "").await;
    w.pass(false).await;
    let r = w.recorded("acme-shoes").await;
    let project = r
        .ids
        .project
        .as_ref()
        .ok_or(format!("{label}: no project"))?
        .project_id;
    let url_id = *r
        .ids
        .urls
        .values()
        .next()
        .ok_or(format!("{label}: no url"))?;

    let found = run_probe(&w, AuthScheme::Bearer, Some((project, url_id))).await;
    if !found.problems.is_empty() || found.search.as_ref().is_none_or(|s| !s.ready) {
        return Err(format!("{label}: probe on the project: {found:#?}"));
    }
    w.engine = engine(
        &w,
        scheme(found.settings.auth_scheme),
        &found.settings.field_map,
    )
    .await;
    let before = w.ledger().purchases.len();
    if before != 0 {
        return Err(format!("{label}: the probe bought something"));
    }
    let reports = w.pass(true).await;
    let bought = w.ledger().purchases.len();
    if reports[0].outcome != PassOutcome::Converged || bought != 3 {
        return Err(format!(
            "{label}: with {:?} the buy pass ended {:?} and bought {bought}: {reports:#?}",
            found.settings.flags, reports[0].outcome
        ));
    }
    w.assert_invariants().await;
    Ok(())
}

pub async fn probe_suggests_settings_that_converge_on_every_sandbox_variant(_db: TestDb) {
    let mut failures = Vec::new();
    for (key, values) in Shape::dimensions() {
        for value in values {
            let mut cfg = sandbox_config();
            cfg.shape = format!("{key}={value}").parse().expect("shape");
            if let Err(e) = probe_then_buy(cfg, &format!("--shape {key}={value}")).await {
                failures.push(e);
            }
        }
    }
    let mut raw = sandbox_config();
    raw.auth_scheme = SandboxAuth::Raw;
    raw.shape = "price=unknown,pending=http404,links=data_items"
        .parse()
        .expect("shape");
    if let Err(e) = probe_then_buy(raw, "raw auth, price=unknown").await {
        failures.push(e);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The flags after "settings to use:" in probe's text output.
fn printed_flags(o: &Output) -> Vec<String> {
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("settings to use: "))
        .unwrap_or_else(|| panic!("no settings line: {}", text(o)));
    line.split_whitespace().map(str::to_string).collect()
}

pub async fn the_probe_command_prints_flags_that_once_then_converges_with(db: TestDb) {
    let mut cfg = sandbox_config();
    cfg.auth_scheme = SandboxAuth::Raw;
    cfg.shape = "price=nested,pending=http404".parse().expect("shape");
    let w = World::new(db, cfg).await;
    w.write_campaign("acme-shoes", ACME);

    let first = run(&w, &["probe"]).await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let auth = printed_flags(&first);
    assert_eq!(auth, ["--auth-scheme", "raw"], "{}", text(&first));
    let mut once: Vec<&str> = auth.iter().map(String::as_str).collect();
    once.push("once");
    let stalled = run(&w, &once).await;
    assert_eq!(stalled.status.code(), Some(3), "{}", text(&stalled));
    let project = w
        .recorded("acme-shoes")
        .await
        .ids
        .project
        .unwrap()
        .project_id
        .to_string();
    let report = w.dir.path().join("probe-report.json");
    let report_arg = report.to_str().unwrap();

    let second = run(
        &w,
        &[
            "--auth-scheme",
            "raw",
            "probe",
            "--project",
            &project,
            "--poll-ms",
            "20",
            "--report",
            report_arg,
        ],
    )
    .await;

    assert_eq!(second.status.code(), Some(0), "{}", text(&second));
    let flags = printed_flags(&second);
    assert_eq!(
        flags,
        ["--auth-scheme", "raw", "--field-map", "price=prices.rent"],
        "{}",
        text(&second)
    );
    let out = String::from_utf8_lossy(&second.stdout);
    assert!(
        out.contains("pending form: 'not found' (HTTP 404)"),
        "{out}"
    );
    let saved = std::fs::read_to_string(&report).expect("report written");
    assert!(
        !saved.contains(TOKEN) && !saved.contains(TICKET),
        "the report is redacted"
    );
    assert!(
        saved.contains("\"price_field_found\": \"prices.rent\""),
        "{saved}"
    );
    assert!(
        w.ledger().purchases.is_empty(),
        "probe and the stalled once bought nothing"
    );

    let mut args: Vec<&str> = flags.iter().map(String::as_str).collect();
    args.push("once");
    let converged = run(&w, &args).await;

    assert_eq!(converged.status.code(), Some(0), "{}", text(&converged));
    assert_eq!(w.ledger().purchases.len(), 3);
    w.assert_invariants().await;
}

//! Hostile strings from the marketplace: a purchase refused with an error body full of ESC
//! sequences (colour, window title, screen clear), NUL, BEL, CR, tab, a C1 CSI, BIDI
//! overrides and a spreadsheet formula. The real binary runs a pass through a proxy that
//! serves it; then every surface that shows it — the binary's human and JSON logs, `once`'s
//! output, `status`, `history` (text and CSV), `report` (CSV), `explain`, and the status page — must carry
//! none of those characters as they are, and still show the text (escaped).

use std::process::{Command, Output};

use linkrunner::domain::shown;
use linkrunner::store::{IntentFilter, IntentKind};

use super::hostile_market::{Hostile, start_proxy};
use super::support::*;
use crate::support::binary::{self, Target};
use crate::support::db::TestDb;
use crate::support::http::http_get;
use crate::support::http::serve_journal;
use crate::support::sandbox;

/// What the marketplace says, as JSON escapes (the client decodes them to the raw characters).
pub fn error_body() -> String {
    let message = r#"=HYPERLINK(\"http://evil.example\") \u001b[31mRED\u001b[0m \u001b]0;pwned\u0007 \u001b[2J nul:\u0000: cr:\rFORGED\u2028 tab:\t+1 c1:\u009b31m bidi:\u202eevil\u202c\u2066iso\u2069"#;
    format!(r#"{{"isError":true,"message":"{message}","errors":["{message}"]}}"#)
}

/// A marker of the message that survives escaping: the text must still be shown.
const MARKER: &str = "RED";

/// Characters no surface may carry as they are (line feeds are layout; tabs are kept in
/// laid-out text and harmless).
fn raw_hostile(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| c != '\n' && c != '\t' && shown::is_unsafe(c))
        .collect()
}

fn assert_safe(surface: &str, text: &str) {
    let raw = raw_hostile(text);
    assert!(
        raw.is_empty(),
        "{surface} carries raw {raw:?}:\n{}",
        text.escape_debug()
    );
}

fn assert_shown(surface: &str, text: &str) {
    assert_safe(surface, text);
    assert!(
        text.contains(MARKER),
        "{surface} does not show the marketplace's message at all:\n{text}"
    );
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_marketplace_strings_are_escaped_on_every_surface() {
    let canary = Canary::new();
    let sandbox = sandbox::start(sandbox_config(&canary)).await;
    let proxy = start_proxy(sandbox.base_url(), Hostile::EscapeText).await;
    let dir = campaign_dir("0 9 * * *");
    let db = TestDb::sqlite().await;
    let via = format!("http://{}", proxy.addr);
    let cmd = || -> Command {
        let mut c = binary::command_on(&Target {
            db_url: &db.url,
            campaigns: dir.path(),
            market: &via,
            token: &canary.token,
            ticket: &canary.ticket,
        });
        binary::set_engine(&mut c, &settings());
        c.env("LINKRUNNER_LOG", "debug");
        c
    };

    // A pass with human logs, then one with JSON logs and JSON output.
    let (stdout, stderr) = text(&cmd().arg("once").output().expect("once runs"));
    assert_safe("once (text)", &stdout);
    assert_shown("the human log", &stderr);
    let out = cmd()
        .args(["--log-format", "json", "once", "--format", "json"])
        .output()
        .expect("once runs");
    let (stdout, stderr) = text(&out);
    assert_safe("once --format json", &stdout);
    assert_shown("the JSON log", &stderr);
    for line in stderr.lines().filter(|l| l.starts_with('{')) {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("a JSON log line does not parse ({e}): {line}"));
    }
    assert!(
        proxy
            .hostile_served
            .load(std::sync::atomic::Ordering::SeqCst)
            > 0,
        "the hostile answer was served"
    );

    let refused = db
        .store
        .intents()
        .find_intents(IntentFilter {
            campaign: Some(CAMPAIGN.into()),
            states: vec![],
            kind: Some(IntentKind::Purchase),
        })
        .await
        .expect("journal")
        .into_iter()
        .find(|i| i.error.as_deref().is_some_and(|e| e.contains(MARKER)))
        .expect("a purchase recorded with the marketplace's message");
    let month = chrono::Utc::now().format("%Y-%m").to_string();
    let runs: [(&str, Vec<String>); 7] = [
        ("status", vec!["status".into()]),
        (
            "status --format json",
            vec!["status".into(), "--format".into(), "json".into()],
        ),
        ("history", vec!["history".into()]),
        (
            "history --format csv",
            vec!["history".into(), "--format".into(), "csv".into()],
        ),
        (
            "report --format csv",
            vec![
                "report".into(),
                "--month".into(),
                month,
                "--format".into(),
                "csv".into(),
            ],
        ),
        (
            "explain",
            vec!["explain".into(), format!("intent:{}", refused.id)],
        ),
        (
            "explain --format json",
            vec![
                "explain".into(),
                format!("intent:{}", refused.id),
                "--format".into(),
                "json".into(),
            ],
        ),
    ];
    for (surface, args) in runs {
        let out = cmd().args(&args).output().expect("runs");
        let (stdout, stderr) = text(&out);
        assert_safe(surface, &stdout);
        assert_safe(&format!("{surface} (stderr)"), &stderr);
        if surface == "explain" {
            assert_shown(surface, &stdout);
        }
        if surface.starts_with("report") {
            assert!(out.status.success(), "{surface}: {stderr}");
            assert!(stdout.starts_with("month,campaign,"), "{surface}: {stdout}");
        }
        if surface.contains("csv") {
            for field in stdout.lines().flat_map(|l| l.split(',')) {
                let f = field.trim_start_matches('"');
                assert!(
                    !f.starts_with(['=', '+', '@', '\t', '\r']),
                    "a CSV field a spreadsheet reads as a formula: {field:?}"
                );
            }
        }
    }

    let page = status_page(&db).await;
    assert_safe("the status page", &page);
}

async fn status_page(db: &TestDb) -> String {
    let (addr, stop) = serve_journal(&db.store, linkrunner::clock::system()).await;
    let (code, body) = http_get(addr, "/").await.expect("the page answers");
    stop.cancel();
    assert_eq!(code, 200, "{body}");
    body
}

use std::path::{Path, PathBuf};

use chrono::TimeZone as _;

use super::*;

fn write(path: &Path, value: &str) {
    std::fs::write(path, value).unwrap();
}

/// A provider that reads its token and ticket from files in a new temporary folder, written
/// first with `token` and `ticket`: the folder (kept while the test runs), the token file's
/// path (to change or remove it) and the provider.
fn provider_on_files(
    token: &str,
    ticket: &str,
) -> (tempfile::TempDir, PathBuf, CredentialProvider) {
    let dir = tempfile::tempdir().unwrap();
    let (tok, tkt) = (dir.path().join("tok"), dir.path().join("tkt"));
    write(&tok, token);
    write(&tkt, ticket);
    let source = CredentialSource::Given {
        token: SecretOrigin::File(tok.clone()),
        ticket: SecretOrigin::File(tkt),
    };
    let provider = CredentialProvider::new(
        source,
        AuthScheme::Bearer,
        {
            let _ = rustls::crypto::ring::default_provider().install_default();
            reqwest::Client::new()
        },
        BaseUrl::parse("http://127.0.0.1:9").unwrap(),
        Arc::new(Metrics::new()),
        linkrunner_domain::clock::system(),
    )
    .unwrap();
    (dir, tok, provider)
}

fn bearer(s: &Snapshot) -> String {
    s.headers()[reqwest::header::AUTHORIZATION]
        .to_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_changed_token_file_is_used_after_a_rejection_and_redacted() {
    let (_dir, tok, p) = provider_on_files("tok-one\n", "tkt-one\n");
    let first = p.current("op").await.unwrap();
    assert_eq!(bearer(&first), "Bearer tok-one");

    write(&tok, "tok-two\n");
    let changed = p.after_rejection(first.generation, "op").await.unwrap();

    let now = p.current("op").await.unwrap();
    assert!(changed);
    assert_eq!(bearer(&now), "Bearer tok-two");
    assert_eq!(now.generation, first.generation + 1);
    assert_eq!(
        p.redactor().text("tok-two tok-one"),
        "[REDACTED] [REDACTED]"
    );
}

#[tokio::test]
async fn an_unchanged_file_after_a_rejection_reports_no_change() {
    let (_dir, _, p) = provider_on_files("tok-one", "tkt-one");
    let first = p.current("op").await.unwrap();
    assert!(!p.after_rejection(first.generation, "op").await.unwrap());
}

#[tokio::test]
async fn a_file_that_becomes_unreadable_keeps_the_last_values_and_says_it_fails() {
    let (_dir, tok, p) = provider_on_files("tok-one", "tkt-one");
    std::fs::remove_file(&tok).unwrap();

    p.maintain(true).await;

    assert_eq!(bearer(&p.current("op").await.unwrap()), "Bearer tok-one");
    assert_eq!(p.metrics.credentials.refresh_failing.get(), 1);
    write(&tok, "tok-one");
    p.maintain(true).await;
    assert_eq!(p.metrics.credentials.refresh_failing.get(), 0);
}

#[test]
fn the_refresh_margin_is_a_quarter_of_the_lifetime_within_bounds() {
    let t0 = Utc.with_ymd_and_hms(2026, 11, 22, 0, 0, 0).unwrap();
    let s = chrono::Duration::seconds;
    assert_eq!(refresh_margin(t0, t0 + s(3600)), s(300));
    assert_eq!(refresh_margin(t0, t0 + s(600)), s(150));
    assert_eq!(refresh_margin(t0, t0 + s(3)), s(1));
    assert_eq!(
        refresh_margin(t0, t0 + s(1)),
        chrono::Duration::milliseconds(500)
    );
}

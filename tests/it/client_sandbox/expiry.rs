//! Credentials that expire: the client re-reads rotated token files before it reports a
//! 401, sends a rejected call once more only with other credentials, and with the built-in
//! login obtains a new token before the old one expires — each checked on the sandbox's
//! ledger and its authentication counters.

use std::path::Path;
use std::time::Duration;

use linkrunner::market::{
    ClientConfig, CredentialSource, LoginSettings, Market, MarketClient, MarketError, SecretOrigin,
    op,
};
use linkrunner_sandbox::{Op, SandboxConfig, SandboxHandle, SandboxLogin};

use super::support::{DOMAIN, TICKET, TOKEN, client_with, sandbox_config};
use crate::support::sandbox;

const LOGIN: &str = "acme-buyer";
const API_KEY: &str = "key-cs-5c3d-secret";

fn files(token: &Path, ticket: &Path) -> impl FnOnce(&mut ClientConfig) {
    let source = CredentialSource::Given {
        token: SecretOrigin::File(token.to_path_buf()),
        ticket: SecretOrigin::File(ticket.to_path_buf()),
    };
    move |c| c.credentials = source
}

/// A client for `sandbox` reading its token and ticket from files in a fresh directory,
/// which hold the suite's credentials; the directory and the client.
fn reading_files(sandbox: &SandboxHandle) -> (tempfile::TempDir, MarketClient) {
    let dir = tempfile::tempdir().unwrap();
    let (tok, tkt) = (dir.path().join("token"), dir.path().join("ticket"));
    std::fs::write(&tok, TOKEN).unwrap();
    std::fs::write(&tkt, TICKET).unwrap();
    let market = client_with(&sandbox.base_url(), files(&tok, &tkt));
    (dir, market)
}

fn login_with(key: &str) -> impl FnOnce(&mut ClientConfig) {
    let settings = LoginSettings::new(LOGIN, linkrunner::market::credentials::fixed(key));
    move |c| c.credentials = CredentialSource::Login(settings)
}

fn expiring(ttl: Duration) -> SandboxConfig {
    let mut cfg = sandbox_config();
    cfg.token_ttl = Some(ttl);
    cfg.login = Some(SandboxLogin::new(LOGIN, API_KEY));
    cfg
}

#[tokio::test]
async fn a_change_rejected_for_an_expired_token_is_sent_once_more_with_the_rotated_file() {
    // Arrange: the token in the file expires after a second; a refresher then writes a new
    // one, but the client last read the file before that.
    let sandbox = sandbox::start(expiring(Duration::from_secs(1))).await;
    let (dir, market) = reading_files(&sandbox);
    let tok = dir.path().join("token");
    market.create_project(DOMAIN).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    std::fs::write(&tok, format!("{}\n", sandbox.issue_token())).unwrap();

    // Act: within the file poll interval, so the first attempt carries the expired token.
    let second = market.create_project("https://other.example").await;

    // Assert: one 401, one project created by the second attempt, nothing created twice.
    second.expect("the call succeeds with the re-read token");
    let ledger = sandbox.ledger();
    assert_eq!(ledger.projects.len(), 2);
    assert_eq!(ledger.requests_of(Op::AddProject, "unauthorized"), 1);
    assert_eq!(ledger.requests_of(Op::AddProject, "ok"), 2);
    assert_eq!(sandbox.auth_stats().expired, 1);
}

#[tokio::test]
async fn a_rejection_with_an_unchanged_file_is_reported_after_one_attempt() {
    let sandbox = sandbox::start(expiring(Duration::from_millis(300))).await;
    let (_dir, market) = reading_files(&sandbox);
    tokio::time::sleep(Duration::from_millis(400)).await;

    let result = market.create_project(DOMAIN).await;

    assert!(
        matches!(result, Err(MarketError::Unauthorized { status: 401, .. })),
        "{result:?}"
    );
    let ledger = sandbox.ledger();
    assert!(ledger.projects.is_empty());
    assert_eq!(ledger.requests_of(Op::AddProject, "unauthorized"), 1);
}

#[tokio::test]
async fn the_built_in_login_replaces_each_token_before_it_expires() {
    // Arrange: tokens live two seconds.
    let sandbox = sandbox::start(expiring(Duration::from_secs(2))).await;
    let market = client_with(&sandbox.base_url(), login_with(API_KEY));
    let project = market.create_project(DOMAIN).await.unwrap();

    // Act: reads for three token lifetimes and more.
    let until = tokio::time::Instant::now() + Duration::from_millis(7500);
    let mut reads = 0;
    while tokio::time::Instant::now() < until {
        market.list_links(project.project_id).await.unwrap();
        reads += 1;
        tokio::time::sleep(Duration::from_millis(150)).await;
    }

    // Assert: a new token at least every lifetime, and no request ever carried an expired one.
    let auth = sandbox.auth_stats();
    assert!(auth.tokens_issued >= 4, "{auth:?} after {reads} reads");
    assert_eq!(auth.expired, 0, "{auth:?}");
    assert_eq!(auth.logins_refused, 0);
    let ledger = sandbox.ledger();
    assert_eq!(ledger.requests_of(Op::ListLinks, "unauthorized"), 0);
}

#[tokio::test]
async fn a_refused_login_is_a_credentials_rejection_that_names_the_login() {
    let sandbox = sandbox::start(expiring(Duration::from_secs(60))).await;
    let market = client_with(&sandbox.base_url(), login_with("not-the-key"));

    let result = market.create_project(DOMAIN).await;

    match result {
        Err(MarketError::Unauthorized { op: o, status: 401 }) => assert_eq!(o, op::LOGIN),
        other => panic!("expected the login refused, got {other:?}"),
    }
    assert!(sandbox.ledger().projects.is_empty());
    assert_eq!(sandbox.auth_stats().logins_refused, 1);
}

#[tokio::test]
async fn a_token_the_marketplace_revokes_early_is_replaced_by_one_new_login() {
    // Arrange: the sandbox forgets every token it issued (a server-side logout); the client
    // still holds one that has not expired by its `exp`. (Not by restarting the sandbox on
    // its port: with tests in parallel another test's listener could take the port first.)
    let sandbox = sandbox::start(expiring(Duration::from_secs(60))).await;
    let market = client_with(&sandbox.base_url(), login_with(API_KEY));
    market.create_project(DOMAIN).await.unwrap();
    sandbox.revoke_issued_tokens();

    // Act
    let again = market.create_project("https://other.example").await;

    // Assert: one 401, one login more, the second project made once.
    again.expect("a new login, then the call");
    let ledger = sandbox.ledger();
    assert_eq!(ledger.requests_of(Op::AddProject, "unauthorized"), 1);
    assert_eq!(ledger.projects.len(), 2);
    assert_eq!(sandbox.auth_stats().logins, 2);
}

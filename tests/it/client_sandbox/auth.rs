//! Credentials: the sandbox's accepted `Authorization` forms (`SandboxAuth`) against the
//! client's `AuthScheme`, a wrong token (401) and a wrong ticket (403). A refused call is
//! `Unauthorized`, executed nothing and is never retried — not even a read.

use linkrunner::market::AuthScheme;
use linkrunner::market::{Executed, Market, MarketError};
use linkrunner_sandbox::{Op, SandboxAuth};

use super::support::{DOMAIN, TICKET, TOKEN, client_with, sandbox_config};
use crate::support::market::credentials;
use crate::support::sandbox;

const ACCEPTED: [(SandboxAuth, AuthScheme); 4] = [
    (SandboxAuth::Bearer, AuthScheme::Bearer),
    (SandboxAuth::Raw, AuthScheme::Raw),
    (SandboxAuth::Either, AuthScheme::Bearer),
    (SandboxAuth::Either, AuthScheme::Raw),
];
const MISMATCHED: [(SandboxAuth, AuthScheme); 2] = [
    (SandboxAuth::Bearer, AuthScheme::Raw),
    (SandboxAuth::Raw, AuthScheme::Bearer),
];

/// What `create_project` answered, how many projects the sandbox holds, and how many
/// requests it counted with each outcome.
struct Seen {
    result: Result<i64, MarketError>,
    projects: usize,
    unauthorized: u64,
    forbidden: u64,
}

async fn create_project_with(
    server: SandboxAuth,
    client: AuthScheme,
    token: &str,
    ticket: &str,
) -> Seen {
    let mut cfg = sandbox_config();
    cfg.auth_scheme = server;
    let sandbox = sandbox::start(cfg).await;
    let market = client_with(&sandbox.base_url(), |c| {
        c.auth_scheme = client;
        c.credentials = credentials(token, ticket).into();
    });

    let result = market.create_project(DOMAIN).await.map(|p| p.project_id);

    let ledger = sandbox.ledger();
    Seen {
        result,
        projects: ledger.projects.len(),
        unauthorized: ledger.requests_of(Op::AddProject, "unauthorized"),
        forbidden: ledger.requests_of(Op::AddProject, "forbidden"),
    }
}

/// Asserts an `Unauthorized` answer with `status`, nothing created, one request counted.
fn assert_refused(seen: &Seen, status: u16, case: &str) {
    match &seen.result {
        Err(e @ MarketError::Unauthorized { status: s, .. }) => {
            assert_eq!(*s, status, "{case}: {e}");
            assert_eq!(e.executed(), Executed::No, "{case}");
        }
        other => panic!("{case}: expected Unauthorized ({status}), got {other:?}"),
    }
    assert_eq!(seen.projects, 0, "{case}");
    let (unauthorized, forbidden) = if status == 401 { (1, 0) } else { (0, 1) };
    assert_eq!(
        (seen.unauthorized, seen.forbidden),
        (unauthorized, forbidden),
        "{case}"
    );
}

#[tokio::test]
async fn the_right_token_and_ticket_in_an_accepted_form_are_let_in() {
    for (server, client) in ACCEPTED {
        let seen = create_project_with(server, client, TOKEN, TICKET).await;

        let case = format!("sandbox {server:?}, client {client:?}");
        assert!(seen.result.is_ok(), "{case}: {:?}", seen.result);
        assert_eq!(seen.projects, 1, "{case}");
    }
}

#[tokio::test]
async fn a_token_in_a_form_the_sandbox_does_not_accept_is_unauthorized_401() {
    for (server, client) in MISMATCHED {
        let seen = create_project_with(server, client, TOKEN, TICKET).await;

        assert_refused(
            &seen,
            401,
            &format!("sandbox {server:?}, client {client:?}"),
        );
    }
}

#[tokio::test]
async fn a_wrong_token_is_unauthorized_401_under_every_scheme() {
    for (server, client) in ACCEPTED.into_iter().chain(MISMATCHED) {
        let seen = create_project_with(server, client, "tok-wrong", TICKET).await;

        assert_refused(
            &seen,
            401,
            &format!("sandbox {server:?}, client {client:?}"),
        );
    }
}

#[tokio::test]
async fn a_wrong_ticket_is_unauthorized_403_under_every_accepted_scheme() {
    for (server, client) in ACCEPTED {
        let seen = create_project_with(server, client, TOKEN, "tkt-wrong").await;

        assert_refused(
            &seen,
            403,
            &format!("sandbox {server:?}, client {client:?}"),
        );
    }
}

#[tokio::test]
async fn a_read_with_a_wrong_token_is_not_retried() {
    let sandbox = sandbox::start(sandbox_config()).await;
    let market = client_with(&sandbox.base_url(), |c| {
        c.credentials = credentials("tok-wrong", TICKET).into();
    });

    let err = market.list_links(1001).await.unwrap_err();

    assert!(
        matches!(err, MarketError::Unauthorized { status: 401, .. }),
        "{err:?}"
    );
    assert_eq!(
        sandbox.ledger().requests_of(Op::ListLinks, "unauthorized"),
        1
    );
}

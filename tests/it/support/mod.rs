//! What every suite of this binary shares, one way each:
//!
//! | module | gives |
//! |---|---|
//! | [`db`] | a fresh journal per test on either backend ([`db::TestDb`]), `on_both_backends!`, raw reads of a journal by URL |
//! | [`pg_cluster`] | a throwaway PostgreSQL cluster a test may stop, restart and dump |
//! | [`sandbox`] | the in-process sandbox marketplace on port 0, its configuration |
//! | [`ledger`] | the sandbox's ledger read for money assertions: requests by operation, commitment, no page bought twice |
//! | [`campaigns`] | campaign files: written, loaded back, the plain campaign |
//! | [`market`] | the marketplace client built directly: credentials, fast limits |
//! | [`app`] | the application built by `App::build` (the engine, or the daemon in-process), the fast settings |
//! | [`binary`] | the real `linkrunner` as a child process, every setting in its environment |
//! | [`http`] | HTTP to what a test serves (bare requests, a client, Prometheus series), the HTTP side served alone |
//! | [`receiver`] | a webhook receiver on loopback (notifications), answering as told |
//! | [`wait`] | polling with a deadline |
//!
//! Each suite's own `support.rs` keeps what only that suite needs (its fixtures, its
//! invariants, its worlds), built on these; nothing here knows a suite.

pub mod app;
pub mod binary;
pub mod campaigns;
#[macro_use]
pub mod db;
pub mod http;
pub mod ledger;
pub mod market;
pub mod pg_cluster;
pub mod receiver;
pub mod sandbox;
pub mod wait;

/// With `TEST_LOG=1`, the tests' logs (the engine's at debug) go to the test output; once per
/// process, whichever test comes first.
pub fn init_logs() {
    if std::env::var_os("TEST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter("info,linkrunner=debug")
            .with_test_writer()
            .try_init();
    }
}

/// Whether `TEST_LOG` asks for logs (the binary's too).
pub fn test_log() -> bool {
    std::env::var_os("TEST_LOG").is_some()
}

/// A loopback port nothing listens on right now, for a child process to listen on.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

/// Every form a secret could take in output: raw, percent-encoded, base64 (plain and
/// URL-safe, alone and as a Bearer header).
pub fn secret_forms(secret: &str) -> Vec<String> {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let b64url = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    vec![
        secret.to_string(),
        percent_encoding::utf8_percent_encode(secret, percent_encoding::NON_ALPHANUMERIC)
            .to_string(),
        b64.encode(secret),
        b64url.encode(secret),
        b64.encode(format!("Bearer {secret}")),
    ]
}

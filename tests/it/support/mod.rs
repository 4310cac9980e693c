//! What every suite of this binary shares, one way each:
//!
//! | module | gives |
//! |---|---|
//! | [`db`] | a fresh journal per test on either backend ([`db::TestDb`]), `on_both_backends!` |
//! | [`pg_cluster`] | a throwaway PostgreSQL cluster a test may stop, restart and dump |
//! | [`sandbox`] | the in-process sandbox marketplace on port 0 |
//! | [`app`] | the application built by `App::build` (the engine, or the daemon in-process), the fast settings |
//! | [`binary`] | the real `linkrunner` as a child process, every setting in its environment |
//! | [`receiver`] | a webhook receiver on loopback (notifications), answering as told |
//! | [`wait`] | polling with a deadline |
//!
//! Each suite's own `support.rs` keeps what only that suite needs (its fixtures, its
//! invariants, its worlds), built on these.

pub mod app;
pub mod binary;
#[macro_use]
pub mod db;
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

/// A bare HTTP/1.0 GET on loopback: `(status, body)`, `None` if nothing answered within 5 s.
/// No client library and no pooling, so it works against a server in any state.
pub async fn http_get(addr: std::net::SocketAddr, path: &str) -> Option<(u16, String)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let io = async {
        let mut s = tokio::net::TcpStream::connect(addr).await.ok()?;
        let req = format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n");
        s.write_all(req.as_bytes()).await.ok()?;
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).await.ok()?;
        let text = String::from_utf8_lossy(&buf).to_string();
        let status = text.split(' ').nth(1)?.parse().ok()?;
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string())?;
        Some((status, body))
    };
    tokio::time::timeout(std::time::Duration::from_secs(5), io)
        .await
        .ok()
        .flatten()
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

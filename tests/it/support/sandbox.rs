//! The sandbox marketplace in this process, on a loopback port of its own; its ledger is what
//! the money assertions read.

use linkrunner_sandbox as sandbox;
use linkrunner_sandbox::{SandboxConfig, SandboxHandle};
use tokio::net::TcpListener;

/// Starts a sandbox with `cfg` on `127.0.0.1:0`. Also installs the TLS provider the tests'
/// own `reqwest` clients need (the marketplace client installs its own).
pub async fn start(cfg: SandboxConfig) -> SandboxHandle {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the sandbox");
    sandbox::spawn(cfg, listener).await.expect("sandbox starts")
}

/// The sandbox's strict defaults for these credentials, with searches ready after
/// `ready_after_polls` pending answers.
pub fn config(token: &str, ticket: &str, ready_after_polls: u32) -> SandboxConfig {
    let mut cfg = SandboxConfig::new(token, ticket);
    cfg.search_ready_after_polls = ready_after_polls;
    cfg
}

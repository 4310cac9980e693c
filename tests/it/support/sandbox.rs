//! The sandbox marketplace in this process, on a loopback port of its own; its ledger is what
//! the money assertions read.

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use linkrunner::clock::ManualClock;
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

/// Makes `cfg`'s link list lag `lag_ms` behind purchases on a manual clock (set to 2025-03-01
/// 10:00 UTC), which it returns so a test moves time across the lag without sleeping.
pub fn lagging(cfg: &mut SandboxConfig, lag_ms: u64) -> Arc<ManualClock> {
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2025, 3, 1, 10, 0, 0).unwrap());
    cfg.clock = clock.clone();
    cfg.behaviour.list_lag_ms = lag_ms;
    clock
}

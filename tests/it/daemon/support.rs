//! The daemon under test: in-process (the shared [`InProcess`] daemon with a manual clock)
//! or as the real binary (for signals and replicas), always against an in-process sandbox
//! marketplace whose ledger the tests read.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use linkrunner::clock::ManualClock;
use linkrunner::daemon::run::DaemonOptions;
use linkrunner_sandbox::{Faults, SandboxConfig, SandboxHandle};
use sqlx::Connection;

use crate::support::app::{self, InProcess, Journal};
use crate::support::binary::{self, Target};
use crate::support::db::TestDb;
pub use crate::support::wait::{PATIENCE, within};
use crate::support::{init_logs, sandbox};

pub const TOKEN: &str = "daemon-test-token";
pub const TICKET: &str = "daemon-test-ticket";

/// The in-process daemon; the real one is [`run_binary`]'s.
pub type Daemon = InProcess;

/// 2026-11-22 at `h:m:s` UTC.
pub fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 22, h, m, s).unwrap()
}

/// A valid campaign file that buys `per_run` links per round on `schedule`.
pub fn campaign_yaml(name: &str, schedule: &str, monthly: u32) -> String {
    format!(
        r##"name: {name}
domain: https://{name}.example
urls:
  - url: https://{name}.example/page
    texts:
      - "Buy #a#{name}#/a# now"
      - "#a#{name} shop#/a#"
budget:
  monthly: {monthly}
  max_link_price: 300
  daily_links: 100
  total_links: 500
buy:
  schedule: "{schedule}"
  link_type_id: 1
  per_run: 2
  search:
    price_rent_from: 10
    price_rent_to: 300
"##
    )
}

pub fn write(dir: &Path, file: &str, text: &str) {
    std::fs::write(dir.join(file), text).expect("write campaign file");
}

/// A sandbox that answers searches at the first poll, with an optional latency per call.
pub async fn start_sandbox(latency_ms: u64) -> SandboxHandle {
    let mut cfg = SandboxConfig::new(TOKEN, TICKET);
    cfg.search_ready_after_polls = 0;
    cfg.faults = Faults {
        latency_ms,
        ..Faults::default()
    };
    sandbox::start(cfg).await
}

/// What an in-process daemon runs against: a campaign directory, a journal, a sandbox and
/// the clock the daemon reads. Outlives each daemon, so a test can restart one on it.
pub struct World {
    pub dir: tempfile::TempDir,
    pub db_url: String,
    pub sandbox: SandboxHandle,
    pub clock: Arc<ManualClock>,
    _db: TestDb,
}

impl World {
    pub async fn new(start: DateTime<Utc>) -> World {
        init_logs();
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join("campaigns")).expect("campaigns dir");
        let db = TestDb::sqlite().await;
        World {
            dir,
            db_url: db.url.clone(),
            sandbox: start_sandbox(0).await,
            clock: ManualClock::new(start),
            _db: db,
        }
    }

    pub fn campaigns(&self) -> PathBuf {
        self.dir.path().join("campaigns")
    }

    pub fn write(&self, file: &str, text: &str) {
        write(&self.campaigns(), file, text);
    }

    /// Starts a daemon that watches the campaign directory but installs no signal handlers.
    pub async fn start(&self) -> Daemon {
        self.start_on(&self.db_url).await
    }

    /// The same, on another journal.
    pub async fn start_on(&self, db_url: &str) -> Daemon {
        let market = app::client_config(&self.sandbox.base_url(), TOKEN, TICKET);
        let mut settings = app::settings(Journal::Url(db_url.to_string()), market);
        settings.clock = self.clock.clone();
        settings.daemon = DaemonOptions {
            campaigns_dir: self.campaigns(),
            reconcile_interval: Duration::from_secs(3600),
            shutdown_grace: Duration::from_secs(10),
            round_every: None,
            watch: true,
            signals: false,
            ..DaemonOptions::default()
        };
        InProcess::start(settings).await
    }
}

pub fn http() -> reqwest::Client {
    // The TLS provider the client needs: a test that starts no sandbox (which installs it)
    // would otherwise fail when run alone.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

/// `(status, body)`; status 0 when nothing answered.
pub async fn get(url: &str) -> (u16, String) {
    request(reqwest::Method::GET, url).await
}

pub async fn request(method: reqwest::Method, url: &str) -> (u16, String) {
    match http().request(method, url).send().await {
        Ok(r) => {
            let status = r.status().as_u16();
            (status, r.text().await.unwrap_or_default())
        }
        Err(_) => (0, String::new()),
    }
}

/// The value of one series in a Prometheus text body, e.g.
/// `linkrunner_reloads_total{outcome="failed"}`.
pub fn series(body: &str, name_and_labels: &str) -> Option<f64> {
    body.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(name_and_labels)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

/// Rounds recorded for `campaign`, oldest first: slot, holder that claimed it, state.
/// Empty while the journal does not exist yet.
pub async fn rounds(db_url: &str, campaign: &str) -> Vec<(DateTime<Utc>, String, String)> {
    sqlx::any::install_default_drivers();
    let url = if db_url.starts_with("sqlite:") {
        format!("{db_url}?mode=ro")
    } else {
        db_url.to_string()
    };
    let Ok(mut conn) = sqlx::AnyConnection::connect(&url).await else {
        return Vec::new(); // not created yet
    };
    let rows: Vec<(i64, String, String)> =
        sqlx::query_as("SELECT slot, holder, state FROM rounds WHERE campaign = $1 ORDER BY slot")
            .bind(campaign)
            .fetch_all(&mut conn)
            .await
            .expect("rounds query");
    conn.close().await.ok();
    rows.into_iter()
        .map(|(ms, h, s)| (DateTime::from_timestamp_millis(ms).unwrap(), h, s))
        .collect()
}

/// Intent counts by state for one kind, read straight from the journal (empty while it does
/// not exist yet).
pub async fn intent_states(db_url: &str, kind: &str) -> Vec<(String, i64)> {
    sqlx::any::install_default_drivers();
    let Ok(mut conn) = sqlx::AnyConnection::connect(db_url).await else {
        return Vec::new(); // not created yet
    };
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT state, COUNT(*) FROM intents WHERE kind = $1 GROUP BY state ORDER BY state",
    )
    .bind(kind)
    .fetch_all(&mut conn)
    .await
    .expect("intents query");
    conn.close().await.ok();
    rows
}

/// The real `linkrunner run` on `db_url` and `campaigns`, against `sandbox`, with the fast
/// settings; `extra` goes after `run`. Returns once `/healthz` answers.
pub async fn run_binary(
    db_url: &str,
    campaigns: &Path,
    sandbox: &SandboxHandle,
    extra: &[&str],
) -> binary::Daemon {
    let mut cmd = command_on(db_url, campaigns, sandbox);
    cmd.env("LINKRUNNER_RECONCILE_INTERVAL", "3600");
    binary::Daemon::run(cmd, extra).await
}

/// `linkrunner` (no command yet) on `db_url` and `campaigns`, against `sandbox` with this
/// suite's token and ticket.
pub fn command_on(
    db_url: &str,
    campaigns: &Path,
    sandbox: &SandboxHandle,
) -> std::process::Command {
    binary::command_on(&Target {
        db_url,
        campaigns,
        market: &sandbox.base_url(),
        token: TOKEN,
        ticket: TICKET,
    })
}

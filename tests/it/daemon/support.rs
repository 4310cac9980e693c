//! The daemon under test: in-process (the shared [`InProcess`] daemon with a manual clock)
//! or as the real binary (for signals and replicas), always against an in-process sandbox
//! marketplace whose ledger the tests read.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use linkrunner::clock::ManualClock;
use linkrunner::daemon::run::{DaemonOptions, Event};
use linkrunner_sandbox::{Faults, SandboxHandle};

use crate::support::app::{self, AppSettings, InProcess, Journal};
use crate::support::binary::{self, Target};
use crate::support::campaigns;
use crate::support::db::TestDb;
use crate::support::{init_logs, sandbox};

pub const TOKEN: &str = "daemon-test-token";
pub const TICKET: &str = "daemon-test-ticket";

/// The in-process daemon; the real one is [`run_binary`]'s.
pub type Daemon = InProcess;

/// 2026-11-22 at `h:m:s` UTC.
pub fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 22, h, m, s).unwrap()
}

/// [`campaigns::simple`] on `schedule` with a running autobuyer, so a stop shows on the
/// ledger.
pub fn with_autobuyer(name: &str, schedule: &str) -> String {
    campaigns::simple(name, schedule, 5000)
        + &format!(
            r#"filters:
  - name: {name}-cheap
    price_article_from: 0
    price_article_to: 500
    price_rent_from: 10
    price_rent_to: 80
autobuyers:
  - name: {name}-auto
    filter: {name}-cheap
    auto_approve: false
    state: running
    urls:
      - url: https://{name}.example/page
        monthly_budget: 1000
        total_links_limit: 20
        daily_links_limit: 1
"#
        )
}

/// A campaign directory with one [`with_autobuyer`] file (daily 09:00 rounds) per name.
pub fn with_autobuyers(names: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in names {
        let file = format!("{name}.yaml");
        campaigns::write(dir.path(), &file, &with_autobuyer(name, "0 9 * * *"));
    }
    dir
}

/// `name` with a daily 09:00 round and a running autobuyer of 500 RUB, one link a day.
pub fn with_a_small_autobuyer(name: &str) -> String {
    let mut yaml = campaigns::simple(name, "0 9 * * *", 100_000);
    yaml.push_str(&format!(
        "filters:\n  - name: cheap\n    price_rent_from: 10\n    price_rent_to: 300\n\
         autobuyers:\n  - name: auto\n    filter: cheap\n    auto_approve: false\n    state: running\n    urls:\n\
         \x20     - url: https://{name}.example/page\n        monthly_budget: 500\n        total_links_limit: 5\n        daily_links_limit: 1\n"
    ));
    yaml
}

/// A sandbox that answers searches at the first poll, with an optional latency per call.
pub async fn start_sandbox(latency_ms: u64) -> SandboxHandle {
    let mut cfg = sandbox::config(TOKEN, TICKET, 0);
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
        campaigns::write(&self.campaigns(), file, text);
    }

    /// Starts a daemon that watches the campaign directory but installs no signal handlers.
    pub async fn start(&self) -> Daemon {
        self.start_on(&self.db_url).await
    }

    /// [`World::start`], returning once the daemon reconciled its campaigns a first time.
    pub async fn start_reconciled(&self) -> Daemon {
        let mut daemon = self.start().await;
        daemon
            .next_event(|e| matches!(e, Event::Reconciled(_)).then_some(()))
            .await;
        daemon
    }

    /// The same, on another journal.
    pub async fn start_on(&self, db_url: &str) -> Daemon {
        InProcess::start(self.settings(db_url)).await
    }

    /// What [`World::start_on`] starts with: this world's sandbox, clock and campaign
    /// directory, watched, reconciled hourly; a test changes the fields it is about.
    pub fn settings(&self, db_url: &str) -> AppSettings {
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
        settings
    }
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

//! The daemon under test: in-process (`daemon::run::run` with a manual clock, an event channel
//! and a shutdown token) or as the real binary (for signals and replicas), always against an
//! in-process sandbox marketplace whose ledger the tests read.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use linkrunner::clock::ManualClock;
use linkrunner::daemon::run::{DaemonOptions, Event, run};
use linkrunner::engine::{Engine, EngineSettings};
use linkrunner::market::{ClientConfig, Credentials, MarketClient};
use linkrunner::metrics::Metrics;
use linkrunner::sandbox::{self, Faults, SandboxConfig, SandboxHandle};
use linkrunner::store::Store;
use sqlx::Connection;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub const TOKEN: &str = "daemon-test-token";
pub const TICKET: &str = "daemon-test-ticket";

/// How long any "eventually" in these tests may take before it counts as a failure.
pub const PATIENCE: Duration = Duration::from_secs(20);

pub fn log_enabled() -> bool {
    std::env::var_os("TEST_LOG").is_some()
}

pub fn init_logs() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    if log_enabled() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter("info,linkrunner=debug")
            .with_test_writer()
            .try_init();
    }
}

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
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind sandbox");
    sandbox::spawn(cfg, listener).await.expect("sandbox starts")
}

pub fn fast_settings() -> EngineSettings {
    EngineSettings {
        poll_initial: Duration::from_millis(10),
        poll_max: Duration::from_millis(50),
        settle_grace: chrono::Duration::seconds(1),
        ..EngineSettings::default()
    }
}

/// A fresh journal: a SQLite file in `dir`.
pub fn sqlite_url(dir: &Path) -> String {
    format!("sqlite://{}/journal.db", dir.display())
}

pub async fn open_store(url: &str, metrics: &Arc<Metrics>) -> Store {
    let mut store = Store::connect(url).await.expect("journal connects");
    store.migrate().await.expect("journal migrates");
    store.set_metrics(metrics.clone());
    store
}

/// What an in-process daemon runs against: a campaign directory, a journal, a sandbox and
/// the clock the daemon reads. Outlives each daemon, so a test can restart one on it.
pub struct World {
    pub dir: tempfile::TempDir,
    pub db_url: String,
    pub sandbox: SandboxHandle,
    pub clock: Arc<ManualClock>,
}

impl World {
    pub async fn new(start: DateTime<Utc>) -> World {
        init_logs();
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join("campaigns")).expect("campaigns dir");
        let db_url = sqlite_url(dir.path());
        World {
            dir,
            db_url,
            sandbox: start_sandbox(0).await,
            clock: ManualClock::new(start),
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
        Daemon::start(self, &self.db_url).await
    }
}

/// A daemon running in this process.
pub struct Daemon {
    pub base: String,
    pub events: mpsc::UnboundedReceiver<Event>,
    shutdown: CancellationToken,
    task: JoinHandle<anyhow::Result<()>>,
}

impl Daemon {
    pub async fn start(world: &World, db_url: &str) -> Daemon {
        let metrics = Arc::new(Metrics::new());
        let store = open_store(db_url, &metrics).await;
        let credentials =
            Credentials::new(TOKEN.to_string().into(), TICKET.to_string().into()).unwrap();
        let mut config = ClientConfig::new(&world.sandbox.base_url(), credentials).unwrap();
        config.rate_limit = std::num::NonZeroU32::new(200).unwrap();
        config.max_concurrency = 8;
        let market = MarketClient::new(config, metrics.clone()).unwrap();
        let engine = Engine::new(
            Arc::new(market),
            store,
            world.clock.clone(),
            metrics.clone(),
            fast_settings(),
        );
        let opts = DaemonOptions {
            campaigns_dir: world.campaigns(),
            reconcile_interval: Duration::from_secs(3600),
            shutdown_grace: Duration::from_secs(10),
            round_every: None,
            watch: true,
            signals: false,
        };
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let shutdown = CancellationToken::new();
        let (tx, events) = mpsc::unbounded_channel();
        let task = tokio::spawn(run(engine, opts, listener, shutdown.clone(), Some(tx)));
        Daemon {
            base,
            events,
            shutdown,
            task,
        }
    }

    pub fn is_running(&self) -> bool {
        !self.task.is_finished()
    }

    /// Stops the daemon as SIGTERM would, and waits for it.
    pub async fn stop(self) {
        self.shutdown.cancel();
        tokio::time::timeout(PATIENCE, self.task)
            .await
            .expect("daemon stops within the patience")
            .expect("daemon task did not panic")
            .expect("daemon ended without error");
    }

    /// The first event that `pick` accepts; earlier events are dropped.
    pub async fn next_event<T>(&mut self, mut pick: impl FnMut(&Event) -> Option<T>) -> T {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Ok(Some(e)) => {
                    if let Some(t) = pick(&e) {
                        return t;
                    }
                }
                Ok(None) => panic!("the daemon stopped sending events"),
                Err(_) => panic!("no such event within {PATIENCE:?}"),
            }
        }
    }

    /// Every event that arrived so far, without waiting.
    pub fn drain_events(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        while let Ok(e) = self.events.try_recv() {
            out.push(e);
        }
        out
    }

    /// The buy round of `campaign` that finished next: its slot and links bought.
    pub async fn next_round(&mut self, campaign: &str) -> (DateTime<Utc>, u32) {
        self.next_event(|e| match e {
            Event::Round { slot, report } if report.campaign == campaign => {
                Some((*slot, report.bought))
            }
            _ => None,
        })
        .await
    }

    pub async fn metrics_body(&self) -> String {
        let (status, body) = get(&format!("{}/metrics", self.base)).await;
        assert_eq!(status, 200, "{body}");
        body
    }
}

/// Polls `check` every 50 ms until it returns `Some`, or panics after `within`.
pub async fn eventually<T, F, Fut>(what: &str, within: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + within;
    loop {
        if let Some(t) = check().await {
            return t;
        }
        assert!(Instant::now() < deadline, "not within {within:?}: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub fn http() -> reqwest::Client {
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

/// A fresh database on the test PostgreSQL server, dropped afterwards.
pub struct PgDb {
    pub url: String,
    admin: String,
    name: String,
}

impl PgDb {
    pub async fn create() -> PgDb {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let admin = std::env::var("LINKRUNNER_TEST_DATABASE_URL")
            .or_else(|_| std::env::var("DATABASE_URL"))
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_string());
        let name = format!(
            "lr_daemon_{}_{}_{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::SeqCst),
            Utc::now().timestamp_micros() % 1_000_000
        );
        let mut conn = sqlx::PgConnection::connect(&admin)
            .await
            .expect("PostgreSQL admin URL reachable");
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut conn)
            .await
            .expect("create test database");
        conn.close().await.ok();
        let mut url = url::Url::parse(&admin).expect("admin URL");
        url.set_path(&name);
        PgDb {
            url: url.to_string(),
            admin,
            name,
        }
    }
}

impl Drop for PgDb {
    fn drop(&mut self) {
        let (admin, name) = (self.admin.clone(), self.name.clone());
        let drop_db = async move {
            if let Ok(mut conn) = sqlx::PgConnection::connect(&admin).await {
                let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
                let _ = sqlx::query(sqlx::AssertSqlSafe(sql))
                    .execute(&mut conn)
                    .await;
            }
        };
        let _ = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map(|rt| rt.block_on(drop_db))
        })
        .join();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The binary cargo built for this test run. `LINKRUNNER_TEST_BIN` overrides it, for
/// machines where several checkouts share one target directory and so one
/// `target/debug/linkrunner`: copy your own build aside and point the tests at it.
pub fn binary_path() -> PathBuf {
    std::env::var_os("LINKRUNNER_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_linkrunner")))
}

/// The real `linkrunner run`, killed if a test ends while it still runs.
pub struct Binary {
    child: Child,
    pub base: String,
}

impl Binary {
    /// `linkrunner run` on `db_url` and `campaigns`, against `sandbox`, with fast engine
    /// settings; `extra` goes after `run`. Returns once `/healthz` answers.
    pub async fn run(
        db_url: &str,
        campaigns: &Path,
        sandbox: &SandboxHandle,
        extra: &[&str],
    ) -> Binary {
        let port = free_port();
        let listen = format!("127.0.0.1:{port}");
        let mut cmd = Command::new(binary_path());
        cmd.arg("--database-url")
            .arg(db_url)
            .arg("--campaigns")
            .arg(campaigns)
            .arg("--api-base-url")
            .arg(sandbox.base_url())
            .args(["--rate-limit", "200", "--max-concurrency", "8"])
            .args(["run", "--listen", &listen])
            .args(["--poll-initial-ms", "10", "--poll-max-ms", "50"])
            .args(["--settle-grace", "1", "--reconcile-interval", "3600"])
            .args(extra)
            .env_remove("NOTIFY_SOCKET")
            .env("LINKRUNNER_API_TOKEN", TOKEN)
            .env("LINKRUNNER_AUTH_TICKET", TICKET)
            .env(
                "LINKRUNNER_LOG",
                if log_enabled() { "info" } else { "warn" },
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        if !log_enabled() {
            cmd.stderr(Stdio::null());
        }
        let child = cmd.spawn().expect("linkrunner binary starts");
        let mut b = Binary {
            child,
            base: format!("http://{listen}"),
        };
        b.wait_for("/healthz").await;
        b
    }

    /// Waits until `path` answers 200; a process that exits first fails the test at once.
    async fn wait_for(&mut self, path: &str) {
        let url = format!("{}{path}", self.base);
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                panic!("linkrunner run exited early: {s} (TEST_LOG=1 shows why)");
            }
            if get(&url).await.0 == 200 {
                return;
            }
            assert!(Instant::now() < deadline, "{url} did not answer 200");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.pid().to_string())
            .status()
            .expect("kill runs")
            .success();
        assert!(ok, "kill -{sig} {} failed", self.pid());
    }

    /// Waits for the process to exit; `None` if it is still running after `within`.
    pub async fn exit_within(&mut self, within: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                return Some(s);
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until `/readyz` answers 200.
    pub async fn ready(&mut self) {
        self.wait_for("/readyz").await;
    }

    pub async fn metrics_body(&self) -> String {
        get(&format!("{}/metrics", self.base)).await.1
    }
}

impl Drop for Binary {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

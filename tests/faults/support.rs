//! What every fault test needs: a throwaway PostgreSQL cluster it may stop and restart, a
//! canary-credentialed sandbox, a campaign directory, the daemon in-process or as the binary,
//! polling with a deadline, and the ledger invariants checked after every scenario.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use chrono::{TimeZone, Utc};
use linkrunner::daemon::run::{DaemonOptions, run};
use linkrunner::engine::{Engine, EngineSettings};
use linkrunner::market::{ClientConfig, Credentials, MarketClient};
use linkrunner::metrics::Metrics;
use linkrunner::money::Money;
use linkrunner::sandbox::{self, Ledger, SandboxConfig, SandboxHandle};
use linkrunner::store::{IntentFilter, IntentKind, IntentState, RoundOutcome, Store};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub const CAMPAIGN: &str = "fault-shoes";
pub const MONTHLY_RUB: i64 = 1000;
pub const TOTAL_LINKS: usize = 12;
pub const DAILY_LINKS: usize = 12;

/// A campaign whose monthly cap binds before its link caps (12 links x up to 150 RUB > 1000).
pub fn campaign_yaml(schedule: &str) -> String {
    format!(
        r##"name: {CAMPAIGN}
domain: https://shoes.example
urls:
  - url: https://shoes.example/running
    texts:
      - "Best #a#running shoes#/a# in town"
budget:
  monthly: {MONTHLY_RUB}
  max_link_price: 150
  daily_links: {DAILY_LINKS}
  total_links: {TOTAL_LINKS}
buy:
  schedule: "{schedule}"
  link_type_id: 1
  per_run: 2
  order: cheapest
  search: {{ price_rent_from: 10, price_rent_to: 150 }}
"##
    )
}

pub fn campaign_dir(schedule: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("campaign dir");
    std::fs::write(dir.path().join("shoes.yaml"), campaign_yaml(schedule)).expect("write campaign");
    dir
}

pub fn init_logs() {
    if std::env::var_os("TEST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter("debug")
            .with_test_writer()
            .try_init();
    }
}

/// A token and ticket unique to this run: they must never show anywhere.
pub struct Canary {
    pub token: String,
    pub ticket: String,
}

impl Canary {
    pub fn new() -> Canary {
        let n = std::process::id() as u64 * 1_000_003 + Utc::now().timestamp_micros() as u64;
        Canary {
            token: format!("CanaryTok{n:x}Zq"),
            ticket: format!("CanaryTkt{n:x}Wv"),
        }
    }

    /// Every form either secret could take: raw, percent-encoded, base64 (plain and URL-safe,
    /// alone and as a Bearer header).
    pub fn forms(&self) -> Vec<String> {
        let b64 = base64::engine::general_purpose::STANDARD;
        let b64url = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let mut out = Vec::new();
        for s in [&self.token, &self.ticket] {
            out.push(s.clone());
            out.push(
                percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC)
                    .to_string(),
            );
            out.push(b64.encode(s));
            out.push(b64url.encode(s));
            out.push(b64.encode(format!("Bearer {s}")));
        }
        out
    }

    /// The forms found in `haystack` (empty when clean).
    pub fn found_in(&self, haystack: &[u8]) -> Vec<String> {
        self.forms()
            .into_iter()
            .filter(|f| haystack.windows(f.len()).any(|w| w == f.as_bytes()))
            .collect()
    }
}

pub fn sandbox_config(c: &Canary) -> SandboxConfig {
    let mut cfg = SandboxConfig::new(&c.token, &c.ticket);
    cfg.search_ready_after_polls = 1;
    cfg.faults.latency_ms = 20;
    cfg
}

pub async fn start_sandbox(cfg: SandboxConfig) -> SandboxHandle {
    let l = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("sandbox port");
    sandbox::spawn(cfg, l).await.expect("sandbox starts")
}

/// Fast settings: short polls, a short lease and a short settle grace.
pub fn engine_settings() -> EngineSettings {
    EngineSettings {
        lease_ttl: chrono::Duration::seconds(5),
        poll_initial: Duration::from_millis(50),
        poll_max: Duration::from_millis(200),
        settle_grace: chrono::Duration::seconds(2),
        ..EngineSettings::default()
    }
}

pub fn market(base: &str, c: &Canary, metrics: &Arc<Metrics>) -> MarketClient {
    let creds =
        Credentials::new(c.token.clone().into(), c.ticket.clone().into()).expect("credentials");
    let mut cfg = ClientConfig::new(base, creds).expect("client config");
    cfg.rate_limit = std::num::NonZeroU32::new(200).expect("nonzero");
    cfg.request_timeout = Duration::from_secs(5);
    MarketClient::new(cfg, metrics.clone()).expect("client")
}

pub async fn migrated_store(url: &str) -> Store {
    let store = Store::connect(url).await.expect("store connects");
    store.migrate().await.expect("migrations run");
    store
}

/// The daemon (`linkrunner::daemon::run::run`) in this process, with buy rounds every second.
pub struct InProcess {
    pub http: SocketAddr,
    pub store: Store,
    shutdown: CancellationToken,
    task: JoinHandle<anyhow::Result<()>>,
}

impl InProcess {
    pub async fn start(db_url: &str, sandbox: &SandboxHandle, c: &Canary, dir: &Path) -> InProcess {
        let metrics = Arc::new(Metrics::new());
        let mut store = migrated_store(db_url).await;
        store.set_metrics(metrics.clone());
        let market = Arc::new(market(&sandbox.base_url(), c, &metrics));
        let engine = Engine::new(
            market,
            store.clone(),
            linkrunner::clock::system(),
            metrics,
            engine_settings(),
        );
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("http port");
        let http = listener.local_addr().expect("addr");
        let opts = DaemonOptions {
            campaigns_dir: dir.to_path_buf(),
            reconcile_interval: Duration::from_secs(2),
            shutdown_grace: Duration::from_secs(5),
            round_every: Some(Duration::from_secs(1)),
            watch: false,
            signals: false,
        };
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(run(engine, opts, listener, shutdown.clone(), None));
        InProcess {
            http,
            store,
            shutdown,
            task,
        }
    }

    pub fn is_running(&self) -> bool {
        !self.task.is_finished()
    }

    pub async fn stop(self) {
        self.shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(30), self.task)
            .await
            .expect("daemon stops within 30 s")
            .expect("daemon task joins")
            .expect("daemon returns Ok");
    }
}

/// Polls `f` every 50 ms until it returns `Some`, or panics naming `what` after `limit`.
pub async fn within<T, F, Fut>(limit: Duration, what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A bare HTTP/1.0 GET on loopback: (status, body). No client library, no pooling.
pub async fn http_get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
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
    tokio::time::timeout(Duration::from_secs(5), io)
        .await
        .ok()
        .flatten()
}

/// Records a finished round long ago, so the binary's first slot buys instead of being a
/// baseline (the daemon treats a campaign's first slot ever as a baseline).
pub async fn seed_past_round(store: &Store) {
    let long_ago = Utc.with_ymd_and_hms(2020, 1, 1, 0, 0, 0).unwrap();
    let caps = linkrunner::store::CampaignCaps {
        name: CAMPAIGN.into(),
        monthly_cap: Money::from_rubles(MONTHLY_RUB),
        daily_links: DAILY_LINKS as u32,
        total_links: TOTAL_LINKS as u32,
    };
    store
        .upsert_campaign(&caps, long_ago)
        .await
        .expect("record the campaign");
    assert!(
        store
            .claim_round(CAMPAIGN, long_ago, "seed", long_ago)
            .await
            .expect("claim seed round")
    );
    store
        .finish_round(CAMPAIGN, long_ago, RoundOutcome::Skipped, "seed", long_ago)
        .await
        .expect("finish seed round");
}

/// Purchase intents not yet settled (in flight or uncertain).
pub async fn unsettled_purchases(store: &Store) -> usize {
    let f = IntentFilter {
        campaign: Some(CAMPAIGN.into()),
        states: vec![IntentState::InFlight, IntentState::Uncertain],
        kind: Some(IntentKind::Purchase),
    };
    store
        .intents(f)
        .await
        .map(|v| v.len())
        .unwrap_or(usize::MAX)
}

/// The money invariants, checked against the sandbox's ledger and the journal:
/// no page bought twice, no cap exceeded, every purchase recorded as held, and nothing
/// recorded as held that the marketplace did not sell.
pub async fn assert_ledger_invariants(ledger: &Ledger, store: &Store) {
    assert_eq!(
        ledger.duplicate_purchases, 0,
        "duplicate purchases: {ledger:#?}"
    );
    let mut pages: Vec<i64> = ledger.purchases.iter().map(|p| p.page_id).collect();
    pages.sort_unstable();
    let before = pages.len();
    pages.dedup();
    assert_eq!(pages.len(), before, "a page was bought twice");
    let spend = ledger.purchases.iter().fold(Money::ZERO, |a, p| {
        a.checked_add(p.price).expect("no overflow")
    });
    assert!(
        spend <= Money::from_rubles(MONTHLY_RUB),
        "monthly cap exceeded: {spend:?}"
    );
    assert!(
        ledger.purchases.len() <= TOTAL_LINKS,
        "total links cap exceeded"
    );
    assert!(
        ledger.purchases.len() <= DAILY_LINKS,
        "daily links cap exceeded"
    );
    let mut held: Vec<i64> = store
        .held_links(CAMPAIGN)
        .await
        .expect("journal readable")
        .iter()
        .map(|h| h.page_id)
        .collect();
    held.sort_unstable();
    assert_eq!(
        held, pages,
        "the journal's held links differ from what was bought"
    );
}

/// The raw bytes of an SQLite database and its WAL: every stored string is in there verbatim.
pub fn sqlite_bytes(db_file: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    for suffix in ["", "-wal", "-journal"] {
        let mut p = db_file.as_os_str().to_owned();
        p.push(suffix);
        if let Ok(b) = std::fs::read(PathBuf::from(p)) {
            out.extend(b);
        }
    }
    out
}

/// A throwaway PostgreSQL cluster this test owns: it may stop, restart and kill connections.
pub struct PgCluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
}

/// The PostgreSQL server binaries: a versioned Debian directory, else whatever `pg_ctl` on
/// PATH resolves to (symlinks followed, so `pg_dump` sits beside it).
fn pg_bin() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path().join("bin")))
                .collect()
        })
        .unwrap_or_default();
    found.retain(|p| p.join("pg_ctl").exists() && p.join("pg_dump").exists());
    found.sort();
    if let Some(p) = found.pop() {
        return p;
    }
    let on_path = Command::new("sh")
        .args(["-c", "command -v pg_ctl"])
        .output()
        .expect("PostgreSQL server binaries installed (initdb, pg_ctl)");
    let pg_ctl = PathBuf::from(String::from_utf8_lossy(&on_path.stdout).trim());
    let real = std::fs::canonicalize(&pg_ctl).expect("pg_ctl on PATH");
    real.parent().expect("pg_ctl's directory").to_path_buf()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

impl PgCluster {
    /// initdb and start, as `nobody` when running as root (initdb refuses root).
    pub fn start() -> PgCluster {
        let dir = tempfile::tempdir().expect("cluster dir");
        let root = is_root();
        if root {
            let ok = Command::new("chown")
                .args(["-R", "nobody"])
                .arg(dir.path())
                .status()
                .expect("chown");
            assert!(ok.success());
        }
        let c = PgCluster {
            dir,
            bin: pg_bin(),
            port: free_port(),
        };
        let data = c.dir.path().join("data");
        let status = c
            .command("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "-A", "trust", "--no-sync"])
            .output()
            .expect("initdb runs");
        assert!(status.status.success(), "initdb: {status:?}");
        c.pg_ctl_start();
        c
    }

    fn command(&self, tool: &str) -> Command {
        if is_root() {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", "nobody", "--"]).arg(self.bin.join(tool));
            cmd
        } else {
            Command::new(self.bin.join(tool))
        }
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    pub fn pg_ctl_start(&self) {
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let out = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .arg("-l")
            .arg(self.dir.path().join("server.log"))
            .args(["-w", "-o", &opts, "start"])
            .output()
            .expect("pg_ctl start runs");
        assert!(out.status.success(), "pg_ctl start: {out:?}");
    }

    /// Stops the server; `immediate` is a crash (no checkpoint), `fast` a clean stop.
    pub fn pg_ctl_stop(&self, mode: &str) {
        let out = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-m", mode, "-w", "stop"])
            .output()
            .expect("pg_ctl stop runs");
        assert!(out.status.success(), "pg_ctl stop: {out:?}");
    }

    /// `pg_dump` of the daemon's database, as SQL text.
    pub fn dump(&self) -> Vec<u8> {
        let out = Command::new(self.bin.join("pg_dump"))
            .args([
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
                "-p",
                &self.port.to_string(),
            ])
            .arg("postgres")
            .output()
            .expect("pg_dump runs");
        assert!(out.status.success(), "pg_dump: {out:?}");
        out.stdout
    }

    /// Kills every other backend: the daemon's pooled connections die mid-query.
    pub async fn terminate_backends(&self) -> u64 {
        use sqlx::{Connection, Row};
        let mut conn = sqlx::PgConnection::connect(&self.url())
            .await
            .expect("admin connection");
        let row = sqlx::query(
            "SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity \
             WHERE pid <> pg_backend_pid() AND datname IS NOT NULL",
        )
        .fetch_one(&mut conn)
        .await
        .expect("terminate backends");
        let _ = conn.close().await;
        row.get::<i64, _>("n") as u64
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-m", "immediate", "stop"])
            .output();
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// `linkrunner run` as a child process: trace logs, canary credentials, output to files.
pub struct Binary {
    child: std::process::Child,
    pub http: SocketAddr,
    out: PathBuf,
    err: PathBuf,
    _dir: tempfile::TempDir,
}

pub fn linkrunner(db_url: &str, campaigns: &Path, sandbox: &SandboxHandle, c: &Canary) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_linkrunner"));
    cmd.arg("--database-url")
        .arg(db_url)
        .arg("--campaigns")
        .arg(campaigns)
        .env("LINKRUNNER_LOG", "trace")
        .env("LINKRUNNER_API_BASE_URL", sandbox.base_url())
        .env("LINKRUNNER_API_TOKEN", &c.token)
        .env("LINKRUNNER_AUTH_TICKET", &c.ticket)
        .env_remove("LINKRUNNER_API_TOKEN_FILE")
        .env_remove("LINKRUNNER_AUTH_TICKET_FILE")
        .env("RUST_BACKTRACE", "1");
    cmd
}

impl Binary {
    pub async fn start(
        db_url: &str,
        campaigns: &Path,
        sandbox: &SandboxHandle,
        c: &Canary,
    ) -> Binary {
        let dir = tempfile::tempdir().expect("output dir");
        let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
        let http: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().expect("addr");
        let child = linkrunner(db_url, campaigns, sandbox, c)
            .args([
                "run",
                "--listen",
                &http.to_string(),
                "--reconcile-interval",
                "5",
            ])
            .args([
                "--lease-ttl",
                "5",
                "--poll-initial-ms",
                "50",
                "--poll-max-ms",
                "200",
            ])
            .args(["--settle-grace", "2", "--shutdown-grace", "10"])
            .stdout(std::fs::File::create(&out).expect("stdout file"))
            .stderr(std::fs::File::create(&err).expect("stderr file"))
            .spawn()
            .expect("linkrunner run starts");
        let b = Binary {
            child,
            http,
            out,
            err,
            _dir: dir,
        };
        within(Duration::from_secs(20), "the daemon's /healthz", || async {
            http_get(b.http, "/healthz").await.filter(|r| r.0 == 200)
        })
        .await;
        b
    }

    pub fn signal(&self, sig: i32) {
        let pid = self.child.id() as i32;
        assert!(send_signal(pid, sig), "kill -{sig} {pid}");
    }

    /// SIGTERM, then waits for a clean exit; returns stdout and stderr.
    pub async fn stop(mut self) -> (Vec<u8>, Vec<u8>) {
        self.signal(libc::SIGTERM);
        let status = within(
            Duration::from_secs(30),
            "the daemon exits after SIGTERM",
            || {
                let s = self.child.try_wait().expect("try_wait");
                async move { s }
            },
        )
        .await;
        assert!(status.success(), "linkrunner run exited with {status}");
        let out = std::fs::read(&self.out).expect("stdout");
        let err = std::fs::read(&self.err).expect("stderr");
        (out, err)
    }
}

impl Drop for Binary {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// kill(1): `unsafe_code` is forbidden here too, so no `libc::kill`.
fn send_signal(pid: i32, sig: i32) -> bool {
    Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .is_ok_and(|s| s.success())
}

//! The rig of one kill case: a fresh journal (SQLite file or PostgreSQL database), the sandbox
//! in-process behind a trapping proxy, a campaign directory, and the real binary run against
//! them — killed with SIGKILL, restarted, and resolved as an operator would.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use linkrunner::sandbox::{self, Faults, SandboxConfig, SandboxHandle};
use linkrunner::store::{IntentKind, Store};
use serde_json::Value;
use sqlx::Connection;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

use super::proxy::{Proxy, Trap};

pub const TOKEN: &str = "kill-suite-token";
pub const TICKET: &str = "kill-suite-ticket";
/// The lease TTL the binary runs with: a killed holder's lease is free again this long after
/// its last renewal.
pub const LEASE_TTL: Duration = Duration::from_secs(1);
/// How long a run may take to reach the point it is killed at.
const REACH_DEADLINE: Duration = Duration::from_secs(60);
/// Restarts (`once`, or `resolve` then `once`) before a campaign must have converged.
const MAX_RESTARTS: usize = 8;
/// ... and the time they may take, waits for leases included.
const CONVERGE_DEADLINE: Duration = Duration::from_secs(90);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The journal database of one case; a PostgreSQL database is dropped afterwards.
pub struct Journal {
    pub url: String,
    pub store: Store,
    _dir: Option<tempfile::TempDir>,
    pg: Option<(String, String)>,
}

impl Journal {
    pub async fn new(backend: Backend) -> Journal {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let url = format!("sqlite://{}/journal.db", dir.path().display());
                let store = migrated(&url).await;
                Journal {
                    url,
                    store,
                    _dir: Some(dir),
                    pg: None,
                }
            }
            Backend::Postgres => Journal::postgres().await,
        }
    }

    async fn postgres() -> Journal {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let admin = admin_url();
        let name = format!(
            "lr_kill_{}_{}_{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::SeqCst),
            chrono::Utc::now().timestamp_micros() % 1_000_000
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
        let url = url.to_string();
        let store = migrated(&url).await;
        Journal {
            url,
            store,
            _dir: None,
            pg: Some((admin, name)),
        }
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        if let Some((admin, name)) = self.pg.take() {
            // Runs even when the test panicked; FORCE closes the test's own pool.
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
}

fn admin_url() -> String {
    std::env::var("LINKRUNNER_TEST_DATABASE_URL")
        .or_else(|_| std::env::var("DATABASE_URL"))
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_string())
}

async fn migrated(url: &str) -> Store {
    let store = Store::connect(url).await.expect("store connects");
    store.migrate().await.expect("migrations run");
    store
}

/// A private copy of the binary, taken once: another build in a shared target directory must
/// not swap it mid-suite. `LINKRUNNER_KILL_SUITE_BIN` names another binary to copy (e.g. one
/// saved right after `cargo build` when several checkouts share one target directory).
fn binary() -> &'static Path {
    static COPY: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = COPY.get_or_init(|| {
        let from = std::env::var_os("LINKRUNNER_KILL_SUITE_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_linkrunner")));
        let dir = tempfile::tempdir().expect("temp dir for the binary");
        let path = dir.path().join("linkrunner");
        std::fs::copy(&from, &path).expect("binary copied");
        (dir, path)
    });
    path
}

fn test_log() -> bool {
    std::env::var_os("TEST_LOG").is_some()
}

/// Everything one kill case runs against.
pub struct Rig {
    pub sandbox: SandboxHandle,
    pub proxy: Proxy,
    pub journal: Journal,
    campaigns: tempfile::TempDir,
}

impl Rig {
    /// A sandbox with `faults`, a fresh journal on `backend`, and `files` (name, YAML) as the
    /// campaign directory.
    pub async fn start(backend: Backend, files: &[(String, String)], faults: Faults) -> Rig {
        let mut cfg = SandboxConfig::new(TOKEN, TICKET);
        cfg.search_ready_after_polls = 1;
        cfg.faults = faults;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("sandbox binds a loopback port");
        let sandbox = sandbox::spawn(cfg, listener).await.expect("sandbox starts");
        let proxy = Proxy::start(sandbox.base_url()).await;
        let journal = Journal::new(backend).await;
        let campaigns = tempfile::tempdir().expect("campaign dir");
        for (name, yaml) in files {
            std::fs::write(campaigns.path().join(name), yaml).expect("campaign file written");
        }
        Rig {
            sandbox,
            proxy,
            journal,
            campaigns,
        }
    }

    /// The binary with this rig's settings, and short engine times.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(binary());
        cmd.args(args)
            .env_clear()
            .env("LINKRUNNER_DATABASE_URL", &self.journal.url)
            .env("LINKRUNNER_CAMPAIGNS", self.campaigns.path())
            .env("LINKRUNNER_API_BASE_URL", self.proxy.base_url())
            .env("LINKRUNNER_API_TOKEN", TOKEN)
            .env("LINKRUNNER_AUTH_TICKET", TICKET)
            .env("LINKRUNNER_RATE_LIMIT", "1000")
            .env("LINKRUNNER_REQUEST_TIMEOUT", "20")
            .env("LINKRUNNER_POLL_INITIAL_MS", "20")
            .env("LINKRUNNER_POLL_MAX_MS", "40")
            .env("LINKRUNNER_SETTLE_GRACE", "0")
            .env("LINKRUNNER_LEASE_TTL", LEASE_TTL.as_secs().to_string())
            .env(
                "LINKRUNNER_LOG",
                if test_log() {
                    "linkrunner=debug"
                } else {
                    "error"
                },
            )
            .stdin(Stdio::null())
            .kill_on_drop(true);
        cmd
    }

    /// Runs the binary to completion.
    pub async fn run(&self, args: &[&str]) -> Output {
        let out = self.command(args).output().await.expect("linkrunner runs");
        if test_log() {
            eprintln!(
                "linkrunner {args:?} -> {}\n{}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        out
    }

    /// `once` with `env` set, its stderr read line by line; `reached` fires at the fault point line.
    fn spawn_once(&self, env: &[(&str, &str)]) -> (Child, oneshot::Receiver<String>) {
        let mut cmd = self.command(&["once"]);
        cmd.envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("linkrunner once starts");
        let stderr = child.stderr.take().expect("stderr piped");
        let (tx, rx) = oneshot::channel();
        tokio::spawn(async move {
            let mut tx = Some(tx);
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if test_log() {
                    eprintln!("[once] {line}");
                }
                if line.starts_with("linkrunner-faultpoint-reached")
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(line);
                }
            }
        });
        (child, rx)
    }

    /// `once`, killed with SIGKILL where `LINKRUNNER_TEST_FAULTPOINT=point` stops it.
    pub async fn once_killed_at_faultpoint(&self, point: &str) {
        let (mut child, reached) = self.spawn_once(&[("LINKRUNNER_TEST_FAULTPOINT", point)]);
        let reached = tokio::time::timeout(REACH_DEADLINE, reached).await;
        kill(&mut child).await;
        match reached {
            Ok(Ok(line)) => assert!(line.ends_with(point), "stopped at {line}, wanted {point}"),
            _ => panic!("`once` ended or timed out without reaching fault point {point}"),
        }
    }

    /// `once`, killed with SIGKILL while the proxy holds its first `op` request as `trap` says.
    pub async fn once_killed_in_call(&self, op: sandbox::Op, trap: Trap) {
        let tripped = self.proxy.arm(op, trap);
        let (mut child, _) = self.spawn_once(&[]);
        let tripped = tokio::time::timeout(REACH_DEADLINE, tripped).await;
        kill(&mut child).await;
        assert!(
            matches!(tripped, Ok(Ok(()))),
            "`once` ended or timed out without sending a {op} request"
        );
    }

    /// `once`, killed with SIGKILL `after` it started; false if it had already exited.
    pub async fn once_killed_after(&self, after: Duration) -> bool {
        let (mut child, _) = self.spawn_once(&[]);
        tokio::time::sleep(after).await;
        let alive = child.try_wait().expect("child status").is_none();
        kill(&mut child).await;
        alive
    }

    /// Restarts `once` until `plan` has nothing left to do, resolving uncertain autobuyer
    /// creations from the sandbox's ledger as an operator would. A pass skipped because the
    /// killed process's lease has not expired yet is retried without counting as a restart.
    /// Panics if the campaigns never converge.
    pub async fn restart_until_converged(&self) {
        // A killed holder's lease must expire before another process may take the campaign.
        tokio::time::sleep(LEASE_TTL + Duration::from_millis(100)).await;
        let deadline = tokio::time::Instant::now() + CONVERGE_DEADLINE;
        let (mut restarts, mut last) = (0, String::new());
        while restarts < MAX_RESTARTS && tokio::time::Instant::now() < deadline {
            let once = self.run(&["once", "--format", "json"]).await;
            let plan = self.run(&["plan"]).await;
            if once.status.success() && plan.status.success() {
                return;
            }
            last = format!(
                "once: {}\n{}{}\nplan: {}\n{}{}",
                once.status,
                String::from_utf8_lossy(&once.stdout),
                String::from_utf8_lossy(&once.stderr),
                plan.status,
                String::from_utf8_lossy(&plan.stdout),
                String::from_utf8_lossy(&plan.stderr)
            );
            if skipped(&once) {
                tokio::time::sleep(Duration::from_millis(250)).await;
                continue;
            }
            restarts += 1;
            self.resolve_uncertain_autobuyers().await;
        }
        panic!("the campaigns did not converge after {restarts} restarts; last:\n{last}");
    }

    /// For each uncertain autobuyer creation `status` shows: `resolve --created ID` when the
    /// sandbox has an autobuyer of that name in the campaign's project, else `--not-created`.
    pub async fn resolve_uncertain_autobuyers(&self) {
        let out = self.run(&["status", "--format", "json"]).await;
        assert!(out.status.success(), "status fails: {out:?}");
        let all: Vec<Value> = serde_json::from_slice(&out.stdout).expect("status is JSON");
        for c in &all {
            let project = c["project_id"].as_i64();
            for u in c["uncertain"].as_array().into_iter().flatten() {
                if u["kind"] != IntentKind::CreateAutobuyer.as_str() {
                    continue;
                }
                let id = u["intent_id"].as_i64().expect("intent id");
                let name = self.autobuyer_name_of(id).await;
                let found = self
                    .sandbox
                    .ledger()
                    .autobuyers
                    .into_iter()
                    .find(|a| Some(a.project_id) == project && a.name == name);
                let id = id.to_string();
                let evidence = found.map(|a| a.id.to_string());
                let mut args = vec!["resolve", &id, "--reason", "checked the marketplace"];
                match &evidence {
                    Some(remote) => args.extend(["--created", remote]),
                    None => args.push("--not-created"),
                }
                let out = self.run(&args).await;
                assert!(out.status.success(), "resolve fails: {out:?}");
            }
        }
    }

    /// The autobuyer name an intent asked to create, from its journaled request.
    async fn autobuyer_name_of(&self, intent: i64) -> String {
        let all = self
            .journal
            .store
            .intents(Default::default())
            .await
            .expect("intents");
        let row = all
            .iter()
            .find(|i| i.id.0 == intent)
            .expect("the uncertain intent is journaled");
        row.request["name"]
            .as_str()
            .expect("autobuyer name")
            .to_string()
    }
}

/// Whether a campaign's pass was skipped because another process holds its lease.
fn skipped(once: &Output) -> bool {
    let reports: Vec<Value> = serde_json::from_slice(&once.stdout).unwrap_or_default();
    reports.iter().any(|r| r["outcome"] == "skipped")
}

async fn kill(child: &mut Child) {
    // `Child::kill` sends SIGKILL and reaps the process.
    child.kill().await.expect("SIGKILL delivered");
}

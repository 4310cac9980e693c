//! The real `linkrunner` as a child process. Every test that runs the binary builds its
//! command here: [`command`] for the commands that need nothing (`validate`, `schema`,
//! `sandbox`), [`command_on`] for one journal, campaign directory and marketplace with the
//! fast settings, all in the environment. Nothing of the test process's own environment
//! reaches the child (no token, database URL or `NOTIFY_SOCKET` from the developer's shell).
//! [`Daemon`] is `linkrunner run` until it is stopped.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use linkrunner::effects::EngineSettings;

use super::app::{MAX_CONCURRENCY, RATE_LIMIT, REQUEST_TIMEOUT, fast_settings};
use super::http::http_get;
use super::wait::{PATIENCE, poll_until, within};
use super::{free_port, test_log};

/// The binary under test: a private copy of cargo's build, taken once per run, so that a
/// build in a shared target directory cannot swap it mid-suite. `LINKRUNNER_TEST_BIN`
/// names another binary to copy (e.g. one saved right after `cargo build` when several
/// checkouts share one target directory).
pub fn path() -> &'static Path {
    static COPY: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = COPY.get_or_init(|| {
        let from = std::env::var_os("LINKRUNNER_TEST_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_linkrunner")));
        let dir = tempfile::tempdir().expect("temp dir for the binary");
        let path = dir.path().join("linkrunner");
        std::fs::copy(&from, &path).expect("binary copied");
        (dir, path)
    });
    path
}

/// `linkrunner` with an empty environment but its log level (`error`; `TEST_LOG=1` shows
/// the binary's info and debug logs) and backtraces on panic.
pub fn command() -> Command {
    let mut cmd = Command::new(path());
    cmd.env_clear()
        .env(
            "LINKRUNNER_LOG",
            if test_log() {
                "info,linkrunner=debug"
            } else {
                "error"
            },
        )
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null());
    cmd
}

/// What a child process runs against.
pub struct Target<'a> {
    pub db_url: &'a str,
    pub campaigns: &'a Path,
    /// The marketplace's base URL (the sandbox's, or a proxy's in front of it).
    pub market: &'a str,
    pub token: &'a str,
    pub ticket: &'a str,
}

/// `linkrunner` on `t`, with the client limits and the engine times of
/// [`super::app::client_config`] and [`fast_settings`].
pub fn command_on(t: &Target<'_>) -> Command {
    let mut cmd = command();
    cmd.env("LINKRUNNER_DATABASE_URL", t.db_url)
        .env("LINKRUNNER_CAMPAIGNS", t.campaigns)
        .env("LINKRUNNER_API_BASE_URL", t.market)
        .env("LINKRUNNER_API_TOKEN", t.token)
        .env("LINKRUNNER_AUTH_TICKET", t.ticket)
        .env("LINKRUNNER_RATE_LIMIT", RATE_LIMIT.to_string())
        .env("LINKRUNNER_MAX_CONCURRENCY", MAX_CONCURRENCY.to_string())
        .env(
            "LINKRUNNER_REQUEST_TIMEOUT",
            REQUEST_TIMEOUT.as_secs().to_string(),
        );
    set_engine(&mut cmd, &fast_settings());
    cmd
}

/// The binary's engine times, as the environment carries them (whole seconds for the
/// durations the command line takes in seconds).
pub fn set_engine(cmd: &mut Command, s: &EngineSettings) {
    let ms = |d: Duration| d.as_millis().to_string();
    cmd.env("LINKRUNNER_POLL_INITIAL_MS", ms(s.poll_initial))
        .env("LINKRUNNER_POLL_MAX_MS", ms(s.poll_max))
        .env(
            "LINKRUNNER_SETTLE_GRACE",
            s.settle_grace.num_seconds().to_string(),
        )
        .env(
            "LINKRUNNER_LEASE_TTL",
            s.lease_ttl.num_seconds().to_string(),
        )
        .env(
            "LINKRUNNER_SEARCH_DEADLINE",
            s.search_deadline.num_seconds().to_string(),
        );
}

/// Fails the test unless `out` (of any command) exited with success, showing `what` and its
/// stderr.
pub fn assert_success(out: &std::process::Output, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what}: {stderr}");
}

/// The same command for async tests; killed if the test drops it while it runs.
pub fn tokio(cmd: Command) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.kill_on_drop(true);
    cmd
}

/// `linkrunner run` as a child process: its stdout and stderr go to files (printed when it
/// is dropped, with `TEST_LOG=1`); killed if a test ends while it still runs.
pub struct Daemon {
    child: Child,
    pub addr: SocketAddr,
    out: PathBuf,
    err: PathBuf,
    _dir: tempfile::TempDir,
}

impl Daemon {
    /// `cmd run --listen 127.0.0.1:PORT ARGS`; returns once `/healthz` answers.
    pub async fn run(mut cmd: Command, args: &[&str]) -> Daemon {
        let dir = tempfile::tempdir().expect("output dir");
        let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().expect("addr");
        let child = cmd
            .args(["run", "--listen", &addr.to_string()])
            .args(args)
            .stdout(std::fs::File::create(&out).expect("stdout file"))
            .stderr(std::fs::File::create(&err).expect("stderr file"))
            .spawn()
            .expect("linkrunner run starts");
        let mut d = Daemon {
            child,
            addr,
            out,
            err,
            _dir: dir,
        };
        d.wait_for("/healthz").await;
        d
    }

    /// Waits until `path` answers 200; a process that exits first fails the test at once.
    pub async fn wait_for(&mut self, path: &str) {
        let what = format!("{path} answering 200");
        within(PATIENCE, &what, || {
            let exited = self.child.try_wait().expect("try_wait");
            let log = exited.map(|_| self.log_tail(20));
            let addr = self.addr;
            async move {
                if let (Some(s), Some(log)) = (exited, log) {
                    panic!("linkrunner run exited early: {s}; its log:\n{log}");
                }
                http_get(addr, path)
                    .await
                    .filter(|r| r.0 == 200)
                    .map(|_| ())
            }
        })
        .await
    }

    /// Waits until `/readyz` answers 200.
    pub async fn ready(&mut self) {
        self.wait_for("/readyz").await;
    }

    /// The `/metrics` body; empty if nothing answered.
    pub async fn metrics_body(&self) -> String {
        http_get(self.addr, "/metrics").await.unwrap_or_default().1
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `kill -SIG PID`, e.g. `signal("HUP")`.
    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.pid().to_string())
            .status()
            .expect("kill runs")
            .success();
        assert!(ok, "kill -{sig} {} failed", self.pid());
    }

    /// Waits for the process to exit; `None` if it still runs after `limit`.
    pub async fn exit_within(&mut self, limit: Duration) -> Option<ExitStatus> {
        poll_until(limit, || {
            let s = self.child.try_wait().expect("try_wait");
            async move { s }
        })
        .await
    }

    /// SIGTERM, then a clean exit within the patience; returns stdout and stderr.
    pub async fn stop(mut self) -> (Vec<u8>, Vec<u8>) {
        self.signal("TERM");
        let status = self.exit_within(PATIENCE).await;
        let status = status.expect("linkrunner run exits after SIGTERM");
        assert!(status.success(), "linkrunner run exited with {status}");
        let out = std::fs::read(&self.out).expect("stdout");
        let err = std::fs::read(&self.err).expect("stderr");
        (out, err)
    }

    /// The last `n` lines of stderr without trace and debug lines, for a failure message.
    pub fn log_tail(&self, n: usize) -> String {
        let text = std::fs::read_to_string(&self.err).unwrap_or_default();
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| !l.contains("TRACE") && !l.contains("DEBUG"))
            .collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if test_log() {
            let log = std::fs::read_to_string(&self.err).unwrap_or_default();
            eprintln!("linkrunner run (pid {}):\n{log}", self.child.id());
        }
    }
}

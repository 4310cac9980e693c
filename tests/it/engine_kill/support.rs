//! The rig of one kill case: a fresh journal (SQLite file or PostgreSQL database), the sandbox
//! in-process behind a trapping proxy, a campaign directory, and the real binary run against
//! them — killed with SIGKILL, restarted, and resolved as an operator would.

use std::process::{Output, Stdio};
use std::time::Duration;

use linkrunner::effects::EngineSettings;
use linkrunner::store::{IntentKind, IntentRow};
use linkrunner_sandbox as sandbox;
use linkrunner_sandbox::{Faults, SandboxHandle};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

use super::proxy::{Proxy, Trap};
use crate::support::app::fast_settings;
use crate::support::binary::{self, Target};
use crate::support::campaigns;
pub use crate::support::db::Backend;
use crate::support::db::TestDb;
use crate::support::test_log;

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

/// Everything one kill case runs against.
pub struct Rig {
    pub sandbox: SandboxHandle,
    pub proxy: Proxy,
    pub journal: TestDb,
    campaigns: tempfile::TempDir,
    /// The binary's lease TTL ([`LEASE_TTL`] unless a test needs a killed holder's lease to
    /// outlast the test).
    pub lease_ttl: Duration,
}

impl Rig {
    /// A sandbox with `faults`, a fresh journal on `backend`, and `files` (name, YAML) as the
    /// campaign directory.
    pub async fn start(backend: Backend, files: &[(String, String)], faults: Faults) -> Rig {
        let mut cfg = crate::support::sandbox::config(TOKEN, TICKET, 1);
        cfg.faults = faults;
        let sandbox = crate::support::sandbox::start(cfg).await;
        let proxy = Proxy::start(sandbox.base_url()).await;
        let journal = TestDb::new(backend).await;
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(n, y)| (n.as_str(), y.as_str()))
            .collect();
        let campaigns = campaigns::dir_with(&files);
        Rig {
            sandbox,
            proxy,
            journal,
            campaigns,
            lease_ttl: LEASE_TTL,
        }
    }

    /// Writes (or replaces) one campaign file.
    pub fn write_file(&self, name: &str, yaml: &str) {
        campaigns::write(self.campaigns.path(), name, yaml);
    }

    /// Removes one campaign file.
    pub fn remove_file(&self, name: &str) {
        std::fs::remove_file(self.campaigns.path().join(name)).expect("campaign file removed");
    }

    /// The binary with this rig's settings, the proxy as its marketplace, and a short lease.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = binary::command_on(&Target {
            db_url: &self.journal.url,
            campaigns: self.campaigns.path(),
            market: &self.proxy.base_url(),
            token: TOKEN,
            ticket: TICKET,
        });
        let lease_ttl = chrono::Duration::from_std(self.lease_ttl).expect("lease TTL");
        binary::set_engine(
            &mut cmd,
            &EngineSettings {
                lease_ttl,
                ..fast_settings()
            },
        );
        cmd.args(args);
        binary::tokio(cmd)
    }

    /// The first `once` reads the adopted account; then the operator's two words: `resolve
    /// adopt` (the plan was read) and `resolve list-complete --links N` (the list is whole,
    /// N links: `reason`).
    pub async fn adopt_and_vouch(&self, campaign: &str, links: u32, reason: &str) {
        self.run(&["once"]).await;
        let adopt = self
            .run(&["resolve", "adopt", campaign, "--reason", "plan read"])
            .await;
        assert!(adopt.status.success(), "{adopt:?}");
        let vouch = self
            .run(&[
                "resolve",
                "list-complete",
                campaign,
                "--links",
                &links.to_string(),
                "--reason",
                reason,
            ])
            .await;
        assert!(vouch.status.success(), "{vouch:?}");
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
    pub fn spawn_once(&self, env: &[(&str, &str)]) -> (Child, oneshot::Receiver<String>) {
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

    /// `run` on a free loopback port with `args`, its output discarded.
    pub fn spawn_run(&self, args: &[&str]) -> Child {
        self.spawn_run_listening(args).0
    }

    /// [`Rig::spawn_run`], and the address its HTTP endpoint (`/metrics`) listens on.
    pub fn spawn_run_listening(&self, args: &[&str]) -> (Child, std::net::SocketAddr) {
        let port = crate::support::free_port();
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let listen = addr.to_string();
        let mut all = vec!["run", "--listen", listen.as_str()];
        all.extend_from_slice(args);
        let mut cmd = self.command(&all);
        cmd.stdout(Stdio::null()).stderr(if test_log() {
            Stdio::inherit()
        } else {
            Stdio::null()
        });
        (cmd.spawn().expect("linkrunner run starts"), addr)
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
            self.resolve_what_waits_for_an_operator().await;
        }
        panic!("the campaigns did not converge after {restarts} restarts; last:\n{last}");
    }

    /// Resolves what `status` shows waiting for an operator, as an operator would from the
    /// marketplace (here the sandbox's ledger): an uncertain autobuyer creation is
    /// `--created ID` when the sandbox has an autobuyer of that name in the campaign's
    /// project, else `--not-created`; a free creation the engine stopped re-sending after
    /// `max_attempts` (several kills in a row can land in the same call) is `--not-created`,
    /// to be sent again, since a duplicate costs nothing; a purchase whose absence the link list
    /// cannot prove (status says so: no later purchase of ours is listed, e.g. once the
    /// campaign bought all its links) is `--created LINK_ID` when the sandbox sold that page
    /// for that URL, else `--not-created`.
    pub async fn resolve_what_waits_for_an_operator(&self) {
        let out = self.run(&["status", "--format", "json"]).await;
        assert!(out.status.success(), "status fails: {out:?}");
        let all: Vec<Value> = serde_json::from_slice(&out.stdout).expect("status is JSON");
        for c in &all {
            let project = c["project_id"].as_i64();
            for u in c["uncertain"].as_array().into_iter().flatten() {
                let id = u["intent_id"].as_i64().expect("intent id");
                let row = self.intent(id).await;
                let evidence = match row.kind {
                    IntentKind::CreateAutobuyer => self.autobuyer_created(&row, project),
                    IntentKind::CreateProject | IntentKind::AddTexts | IntentKind::CreateFilter
                        if row.attempts >= fast_settings().max_attempts =>
                    {
                        None
                    }
                    IntentKind::Purchase if proves_nothing(u) => self.purchase_sold(&row, project),
                    _ => continue,
                };
                let id = id.to_string();
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

    /// The link id of the purchase `row` asked for, if the sandbox sold it.
    fn purchase_sold(&self, row: &IntentRow, project: Option<i64>) -> Option<String> {
        let get = |k: &str| row.request[k].as_i64();
        let ledger = self.sandbox.ledger();
        let sold = ledger.purchases.into_iter().find(|p| {
            Some(p.project_id) == project
                && Some(p.page_id) == get("page_id")
                && Some(p.url_id) == get("url_id")
        });
        sold.map(|p| p.link_id.to_string())
    }

    /// The id of the autobuyer the sandbox holds under the name `row` asked to create.
    fn autobuyer_created(&self, row: &IntentRow, project: Option<i64>) -> Option<String> {
        let name = row.request["name"].as_str().expect("autobuyer name");
        let ledger = self.sandbox.ledger();
        let found = ledger.autobuyers.into_iter();
        let mut found = found.filter(|a| Some(a.project_id) == project && a.name == name);
        found.next().map(|a| a.id.to_string())
    }

    /// Every intent the journal holds.
    pub async fn intents(&self) -> Vec<IntentRow> {
        let all = self
            .journal
            .store
            .intents()
            .find_intents(Default::default());
        all.await.expect("intents")
    }

    /// An intent as the journal holds it.
    async fn intent(&self, id: i64) -> IntentRow {
        let all = self.intents().await;
        all.into_iter()
            .find(|i| i.id.0 == id)
            .expect("the uncertain intent is journaled")
    }
}

/// Whether `status` says the link list cannot settle this uncertain intent by itself yet.
fn proves_nothing(u: &Value) -> bool {
    u["error"]
        .as_str()
        .is_some_and(|e| e.contains("absence proves nothing"))
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

//! Target 7's world: one sandbox serving several accounts (each its own token, ticket and
//! rate limit), the accounts file that lists them for `linkrunner run` (`--account-file`,
//! issue 34), the campaigns spread over them, and `linkrunner run` processes sharing one
//! PostgreSQL journal, read from outside: the sandbox's per-account counts, each process's
//! `/metrics` and `/proc` figures.
//!
//! The accounts: the default account is the command line's (`--api-base-url`,
//! `--api-token-file`, `--auth-ticket-file`, `--rate-limit`), the others are the accounts
//! file's entries (`a01`, `a02`, …), each with the same `rate_limit` as the sandbox gives it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tokio::net::TcpListener;

use linkrunner_sandbox::{Faults, SandboxAccount, SandboxConfig, SandboxHandle};

use super::daemon::{Killed, exited, free_port, is_ok, metrics_body, series_value};
use super::fixture::{self, Scratch};
use super::procfs::Proc;

/// Reconciliation as often as `run` allows, so converged campaigns still ask for more calls
/// than the accounts' limits carry.
pub(crate) const RECONCILE_INTERVAL_S: u64 = 5;
/// Buy rounds every this many seconds (`run --round-every`): purchases happen in the window,
/// so the ledgers' duplicate check has something to check.
pub(crate) const ROUND_EVERY_S: u64 = 30;

/// What the world is made of.
#[derive(Debug, Clone)]
pub(crate) struct FleetSetup {
    pub(crate) accounts: usize,
    pub(crate) rate_limit: u32,
    pub(crate) per_account: usize,
    pub(crate) latency: Duration,
}

/// The sandbox, the files, and the account ids (the default first).
pub(crate) struct Fleet {
    dir: Scratch,
    pub(crate) sandbox: SandboxHandle,
    pub(crate) ids: Vec<String>,
    rate_limit: u32,
}

fn token(k: usize) -> String {
    format!("bench-token-{k:02}")
}

fn ticket(k: usize) -> String {
    format!("bench-ticket-{k:02}")
}

impl Fleet {
    pub(crate) async fn start(s: &FleetSetup) -> anyhow::Result<Fleet> {
        let dir = Scratch::new("accounts")?;
        let ids: Vec<String> = (0..s.accounts.max(1)).map(fixture::account_id).collect();
        let sandbox = linkrunner_sandbox::spawn(
            sandbox_config(s, ids.len()),
            TcpListener::bind("127.0.0.1:0").await?,
        )
        .await
        .context("starting the sandbox with several accounts")?;
        let fleet = Fleet {
            dir,
            sandbox,
            ids,
            rate_limit: s.rate_limit,
        };
        fleet.write_files(s)?;
        Ok(fleet)
    }

    fn campaigns(&self) -> PathBuf {
        self.dir.path().join("campaigns")
    }

    fn secret(&self, k: usize, what: &str) -> PathBuf {
        self.dir.path().join(format!("{}.{what}", self.ids[k]))
    }

    fn accounts_file(&self) -> PathBuf {
        self.dir.path().join("accounts.yaml")
    }

    fn write_files(&self, s: &FleetSetup) -> anyhow::Result<()> {
        std::fs::create_dir_all(self.campaigns())?;
        fixture::write_account_campaigns(
            &self.campaigns(),
            self.ids.len(),
            s.per_account,
            fixture::FAR_SCHEDULE,
        )?;
        for k in 0..self.ids.len() {
            std::fs::write(self.secret(k, "token"), token(k))?;
            std::fs::write(self.secret(k, "ticket"), ticket(k))?;
        }
        std::fs::write(self.accounts_file(), self.accounts_yaml())?;
        Ok(())
    }

    /// The accounts file: every account but the default one (the command line's).
    fn accounts_yaml(&self) -> String {
        let mut yaml = String::from("accounts:\n");
        for (k, id) in self.ids.iter().enumerate().skip(1) {
            yaml.push_str(&format!(
                "  - id: {id}\n    base_url: {}\n    token_file: {}\n    ticket_file: {}\n    rate_limit: {}\n",
                self.sandbox.base_url(),
                self.secret(k, "token").display(),
                self.secret(k, "ticket").display(),
                self.rate_limit
            ));
        }
        yaml
    }

    /// `linkrunner run` number `i` on `db_url`, with the defaults but the accounts, the
    /// campaign directory, a fast reconciliation and buy rounds every [`ROUND_EVERY_S`].
    pub(crate) fn spawn(&self, i: usize, db_url: &str) -> anyhow::Result<Daemon> {
        let port = free_port()?;
        let log = self.dir.path().join(format!("run-{i}.log"));
        let child = crate::linkrunner()?
            .arg("--database-url")
            .arg(db_url)
            .arg("--campaigns")
            .arg(self.campaigns())
            .arg("--api-base-url")
            .arg(self.sandbox.base_url())
            .arg("--api-token-file")
            .arg(self.secret(0, "token"))
            .arg("--auth-ticket-file")
            .arg(self.secret(0, "ticket"))
            .arg("--rate-limit")
            .arg(self.rate_limit.to_string())
            .arg("--account-file")
            .arg(self.accounts_file())
            .arg("run")
            .arg("--reconcile-interval")
            .arg(RECONCILE_INTERVAL_S.to_string())
            .arg("--round-every")
            .arg(ROUND_EVERY_S.to_string())
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .spawn()
            .context("starting linkrunner run")?;
        Ok(Daemon {
            child: Killed(child),
            port,
            log,
        })
    }

    /// Every account's calls so far, in the order of [`Fleet::ids`].
    pub(crate) fn calls(&self) -> Vec<u64> {
        self.ids
            .iter()
            .map(|id| self.sandbox.calls_of(id).unwrap_or(0))
            .collect()
    }
}

fn sandbox_config(s: &FleetSetup, accounts: usize) -> SandboxConfig {
    let mut sc = SandboxConfig::new(token(0), ticket(0));
    sc.search_ready_after_polls = 1;
    sc.faults = Faults {
        latency_ms: s.latency.as_millis() as u64,
        rate_limit: Some(s.rate_limit),
        ..Faults::default()
    };
    for k in 1..accounts {
        let mut a = SandboxAccount::new(fixture::account_id(k), token(k), ticket(k));
        a.rate_limit = Some(s.rate_limit);
        sc = sc.with_account(a);
    }
    sc
}

/// One `linkrunner run` process, killed when dropped.
pub(crate) struct Daemon {
    child: Killed,
    port: u16,
    log: PathBuf,
}

/// One process's figures at one moment.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reading {
    /// `linkrunner_accounts_worked`.
    pub(crate) worked: f64,
    /// `linkrunner_api_calls_total` summed per `account` label.
    pub(crate) calls_by_account: BTreeMap<String, f64>,
    pub(crate) cpu: Duration,
    pub(crate) rss: u64,
}

impl Daemon {
    fn pid(&self) -> Proc {
        Proc::Pid(self.child.0.id())
    }

    /// Until `/readyz` answers 200.
    pub(crate) async fn wait_ready(&mut self, limit: Duration) -> anyhow::Result<()> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(2))
            .build()?;
        let url = format!("http://127.0.0.1:{}/readyz", self.port);
        let started = Instant::now();
        while !is_ok(&http, &url).await {
            exited(&mut self.child.0).map_err(|e| e.context(self.log_tail()))?;
            anyhow::ensure!(
                started.elapsed() < limit,
                "`linkrunner run` not ready after {limit:?}\n{}",
                self.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    }

    /// Its figures now; an error when it exited.
    pub(crate) async fn read(&mut self) -> anyhow::Result<Reading> {
        exited(&mut self.child.0).map_err(|e| e.context(self.log_tail()))?;
        let body = metrics_body(self.port).await?;
        Ok(Reading {
            worked: series_value(&body, "linkrunner_accounts_worked"),
            calls_by_account: calls_by_account(&body),
            cpu: self.pid().cpu_time(),
            rss: self.pid().peak_rss(),
        })
    }

    /// The last lines of its log, for an error.
    pub(crate) fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        let tail = lines[lines.len().saturating_sub(8)..].join("\n");
        format!("the end of `linkrunner run`'s log:\n{tail}")
    }
}

/// `linkrunner_api_calls_total{account="…",…} N`, summed per account.
fn calls_by_account(body: &str) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for line in body.lines() {
        let Some(rest) = line.strip_prefix("linkrunner_api_calls_total{") else {
            continue;
        };
        let Some((labels, value)) = rest.rsplit_once("} ") else {
            continue;
        };
        let account = labels
            .split(',')
            .find_map(|l| l.strip_prefix("account=\""))
            .and_then(|v| v.strip_suffix('"'));
        if let (Some(account), Ok(v)) = (account, value.trim().parse::<f64>()) {
            *out.entry(account.to_string()).or_insert(0.0) += v;
        }
    }
    out
}

/// The system's load average over 1, 5 and 15 minutes, as `/proc/loadavg` shows it.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into())
}

/// The campaign directory of `fleet`, for a test.
#[cfg(test)]
fn campaigns_of(fleet: &Fleet) -> PathBuf {
    fleet.campaigns()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_summed_per_account_label() {
        let body = "# HELP x\nlinkrunner_api_calls_total{account=\"a01\",operation=\"list_links\",outcome=\"ok\"} 7\n\
                    linkrunner_api_calls_total{account=\"a01\",operation=\"buy\",outcome=\"ok\"} 3\n\
                    linkrunner_api_calls_total{account=\"default\",operation=\"buy\",outcome=\"rate_limited\"} 2\n\
                    linkrunner_api_calls_by_purpose_total{purpose=\"buy\"} 9\n";
        let by = calls_by_account(body);
        assert_eq!(by.get("a01"), Some(&10.0));
        assert_eq!(by.get("default"), Some(&2.0));
        assert_eq!(by.len(), 2);
    }

    #[tokio::test]
    async fn the_accounts_file_lists_every_account_but_the_default_and_campaigns_name_theirs() {
        let s = FleetSetup {
            accounts: 3,
            rate_limit: 10,
            per_account: 2,
            latency: Duration::ZERO,
        };
        let fleet = Fleet::start(&s).await.unwrap();
        let yaml = fleet.accounts_yaml();
        assert!(
            yaml.contains("id: a01") && yaml.contains("id: a02"),
            "{yaml}"
        );
        assert!(!yaml.contains("id: default"), "{yaml}");
        assert_eq!(yaml.matches("rate_limit: 10").count(), 2);
        let loaded = linkrunner::campaign::load_dir(&campaigns_of(&fleet));
        assert!(loaded.is_clean());
        let mut per: BTreeMap<String, usize> = BTreeMap::new();
        for c in &loaded.campaigns {
            *per.entry(c.campaign.account.clone()).or_default() += 1;
        }
        let want: BTreeMap<String, usize> = [("a01", 2), ("a02", 2), ("default", 2)]
            .map(|(a, n)| (a.to_string(), n))
            .into();
        assert_eq!(per, want);
        assert_eq!(fleet.sandbox.accounts(), vec!["default", "a01", "a02"]);
        fleet.sandbox.shutdown().await;
    }
}

//! What every fault test needs beyond the shared support: a canary-credentialed sandbox, a
//! campaign directory, the daemon in-process or as the binary with the suite's settings,
//! and the ledger invariants checked after every scenario. PostgreSQL clusters it may stop
//! and restart come from [`crate::support::pg_cluster`], the HTTP side served alone from
//! [`crate::support::http`].

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use linkrunner::daemon::run::DaemonOptions;
use linkrunner::effects::EngineSettings;
use linkrunner::money::Money;
use linkrunner::store::{IntentFilter, IntentKind, IntentState, RoundOutcome, Store};
use linkrunner_sandbox::{Ledger, SandboxConfig, SandboxHandle};

use crate::support::app::{self, InProcess, Journal, fast_settings};
use crate::support::binary::{self, Target};
use crate::support::campaigns;
use crate::support::http::http_get;
use crate::support::ledger;
use crate::support::wait::within;

pub const CAMPAIGN: &str = "fault-shoes";
pub const MONTHLY_RUB: i64 = 1000;
pub const TOTAL_LINKS: usize = 12;
pub const DAILY_LINKS: usize = 12;

/// A campaign whose monthly cap binds before its link caps (12 links x up to 150 RUB > 1000).
pub fn campaign_yaml(schedule: &str) -> String {
    let head = campaigns::head(
        CAMPAIGN,
        "https://shoes.example",
        "https://shoes.example/running",
        &["Best #a#running shoes#/a# in town"],
    );
    format!(
        r##"{head}budget:
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
    campaigns::dir_with(&[("shoes.yaml", &campaign_yaml(schedule))])
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
        [&self.token, &self.ticket]
            .into_iter()
            .flat_map(|s| crate::support::secret_forms(s))
            .collect()
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
    let mut cfg = crate::support::sandbox::config(&c.token, &c.ticket, 1);
    cfg.faults.latency_ms = 20;
    cfg
}

/// The fast settings, but a lease that outlives a slow call, a settle grace longer than the
/// sandbox's latency (a frozen daemon's purchase may still execute after its lease has
/// passed to the other daemon), and a search deadline a path-breaking job reaches.
pub fn settings() -> EngineSettings {
    EngineSettings {
        lease_ttl: chrono::Duration::seconds(5),
        settle_grace: chrono::Duration::seconds(2),
        search_deadline: chrono::Duration::seconds(5),
        ..fast_settings()
    }
}

/// The daemon in this process against `base` (the sandbox, or a hostile proxy in front of
/// it), with buy rounds every second.
pub async fn in_process(db_url: &str, base: &str, c: &Canary, dir: &Path) -> InProcess {
    let mut market = app::client_config(base, &c.token, &c.ticket);
    // An answer that never ends is cut by this timeout, well inside the scenario's deadline.
    market.request_timeout = Duration::from_secs(5);
    let mut app = app::settings(Journal::Url(db_url.to_string()), market);
    app.engine = settings();
    app.daemon = DaemonOptions {
        campaigns_dir: dir.to_path_buf(),
        reconcile_interval: Duration::from_secs(2),
        shutdown_grace: Duration::from_secs(5),
        round_every: Some(Duration::from_secs(1)),
        watch: false,
        signals: false,
        ..DaemonOptions::default()
    };
    InProcess::start(app).await
}

/// What a fault scenario starts from: fresh canary credentials, a sandbox for them, the
/// campaign buying on `schedule`, and the in-process daemon on `db_url`, once it bought a
/// first link.
pub async fn buying_in_process(
    db_url: &str,
    schedule: &str,
) -> (Canary, SandboxHandle, tempfile::TempDir, InProcess) {
    let canary = Canary::new();
    let sandbox = crate::support::sandbox::start(sandbox_config(&canary)).await;
    let dir = campaign_dir(schedule);
    let d = in_process(db_url, &sandbox.base_url(), &canary, dir.path()).await;
    first_purchase(&sandbox).await;
    (canary, sandbox, dir, d)
}

/// `linkrunner` on this journal, campaign directory and sandbox with the canary's
/// credentials and the suite's settings, logging at trace level.
pub fn linkrunner(db_url: &str, campaigns: &Path, sandbox: &SandboxHandle, c: &Canary) -> Command {
    let mut cmd = binary::command_on(&Target {
        db_url,
        campaigns,
        market: &sandbox.base_url(),
        token: &c.token,
        ticket: &c.ticket,
    });
    binary::set_engine(&mut cmd, &settings());
    cmd.env("LINKRUNNER_LOG", "trace");
    cmd
}

/// `linkrunner run` as a child process: trace logs, canary credentials, output to files.
pub async fn start_binary(
    db_url: &str,
    campaigns: &Path,
    sandbox: &SandboxHandle,
    c: &Canary,
) -> binary::Daemon {
    let args = ["--reconcile-interval", "5", "--shutdown-grace", "10"];
    binary::Daemon::run(linkrunner(db_url, campaigns, sandbox, c), &args).await
}

/// Records a finished round long ago, so the binary's first slot buys instead of being a
/// baseline (the daemon treats a campaign's first slot ever as a baseline).
pub async fn seed_past_round(store: &Store) {
    let long_ago = Utc.with_ymd_and_hms(2020, 1, 1, 0, 0, 0).unwrap();
    let caps = linkrunner::store::CampaignCaps {
        account: "default".into(),
        name: CAMPAIGN.into(),
        monthly_cap: Money::from_rubles(MONTHLY_RUB),
        daily_links: DAILY_LINKS as u32,
        total_links: TOTAL_LINKS as u32,
    };
    store
        .campaigns()
        .upsert_campaign(&caps, long_ago)
        .await
        .expect("record the campaign");
    assert!(
        store
            .rounds()
            .claim_round(CAMPAIGN, long_ago, "seed", long_ago)
            .await
            .expect("claim seed round")
    );
    store
        .rounds()
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
        .intents()
        .find_intents(f)
        .await
        .map(|v| v.len())
        .unwrap_or(usize::MAX)
}

/// For `within`: `Some` once a buy round of a slot after `after` succeeded and no purchase
/// is left in flight or uncertain.
pub async fn settled_round_after(store: &Store, after: DateTime<Utc>) -> Option<()> {
    let last = store
        .rounds()
        .last_successful_round(CAMPAIGN)
        .await
        .ok()
        .flatten()?;
    (last.slot > after && unsettled_purchases(store).await == 0).then_some(())
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
        .links()
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

/// Waits (30 s at most) until the sandbox has sold a first link: the daemon is buying.
pub async fn first_purchase(sandbox: &SandboxHandle) {
    within(Duration::from_secs(30), "a first purchase", || async {
        (!sandbox.ledger().purchases.is_empty()).then_some(())
    })
    .await;
}

/// Fails with `failure` if a changing call reaches the sandbox in three seconds, counted from
/// half a second on: calls sent just before the fault may still be answered.
pub async fn assert_no_changing_call_sent(sandbox: &SandboxHandle, failure: &str) {
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = ledger::changing_calls(&sandbox.ledger());
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        ledger::changing_calls(&sandbox.ledger()),
        during,
        "{failure}"
    );
}

/// Waits (`wait` at most) until `/readyz` answers 503 saying the journal cannot be written;
/// returns the body.
pub async fn readyz_says_not_writable(d: &InProcess, wait: Duration) -> String {
    within(
        wait,
        "/readyz 503 saying the journal cannot be written",
        || async {
            let (status, body) = http_get(d.addr, "/readyz").await?;
            (status == 503 && body.contains("cannot be written")).then_some(body)
        },
    )
    .await
}

/// Asserts the `linkrunner_journal_writable` gauge shows `value`.
pub async fn assert_writable_gauge(d: &InProcess, value: u8) {
    let metrics = http_get(d.addr, "/metrics").await.expect("metrics").1;
    assert!(
        metrics.contains(&format!("linkrunner_journal_writable {value}")),
        "{metrics}"
    );
}

/// After an SQLite journal fault is gone: ready again within `ready_within`, a round after
/// `since` succeeds with everything settled, the gauge is back to 1; then the daemon stops
/// and the ledger shows nothing bought twice or lost.
pub async fn assert_sqlite_recovers(
    d: InProcess,
    sandbox: &SandboxHandle,
    since: DateTime<Utc>,
    ready_within: Duration,
) {
    within(ready_within, "/readyz 200 again", || async {
        (http_get(d.addr, "/readyz").await?.0 == 200).then_some(())
    })
    .await;
    within(
        Duration::from_secs(60),
        "a successful round after recovery, all settled",
        || settled_round_after(&d.store, since),
    )
    .await;
    assert_writable_gauge(&d, 1).await;
    let store = d.store.clone();
    d.stop().await;
    assert_ledger_invariants(&sandbox.ledger(), &store).await;
    store.close().await;
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

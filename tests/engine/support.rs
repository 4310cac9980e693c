//! A world for one test: a sandbox marketplace on port 0, a fresh journal (SQLite file or
//! PostgreSQL database), a directory of campaign files and an engine over them, in-process.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use linkrunner::campaign::{self, Campaign, LoadedCampaign};
use linkrunner::clock;
use linkrunner::engine::pass::CampaignReport;
use linkrunner::engine::plan::{self, Action};
use linkrunner::engine::recorded::Recorded;
use linkrunner::engine::{Engine, EngineSettings};
use linkrunner::market::{ClientConfig, Credentials, MarketClient};
use linkrunner::metrics::Metrics;
use linkrunner::money::Money;
use linkrunner::sandbox::{self, AutobuyerState, Ledger, SandboxConfig, SandboxHandle};
use linkrunner::store::{IntentFilter, IntentKind, IntentState, Store};

pub use crate::db::TestDb;

pub const TOKEN: &str = "engine-test-token";
pub const TICKET: &str = "engine-test-ticket";

/// Strict sandbox defaults; searches pending once before they are ready. A small inventory
/// (searches cycle through it every three) offers already bought pages again, so the
/// "never buy a page twice" protections are exercised, not spared by luck.
pub fn sandbox_config() -> SandboxConfig {
    let mut cfg = SandboxConfig::new(TOKEN, TICKET);
    cfg.search_ready_after_polls = 1;
    cfg.inventory_size = 30;
    cfg
}

/// Short polls, no settle grace, one lease per pass: what a test needs to run fast.
pub fn settings() -> EngineSettings {
    EngineSettings {
        poll_initial: Duration::from_millis(20),
        poll_max: Duration::from_millis(100),
        settle_grace: chrono::Duration::zero(),
        ..EngineSettings::default()
    }
}

pub struct World {
    pub db: TestDb,
    pub sandbox: SandboxHandle,
    pub dir: tempfile::TempDir,
    pub engine: Engine<MarketClient>,
}

impl World {
    pub async fn new(db: TestDb, cfg: SandboxConfig) -> World {
        if std::env::var_os("TEST_LOG").is_some() {
            let _ = tracing_subscriber::fmt()
                .with_env_filter("linkrunner=debug")
                .with_test_writer()
                .try_init();
        }
        let _ = rustls::crypto::ring::default_provider().install_default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the sandbox");
        let sandbox = sandbox::spawn(cfg, listener).await.expect("sandbox starts");
        let engine = engine_for(&db.store, &sandbox.base_url(), TOKEN, settings());
        World {
            db,
            sandbox,
            dir: tempfile::tempdir().expect("campaign dir"),
            engine,
        }
    }

    pub fn store(&self) -> &Store {
        &self.db.store
    }

    pub fn ledger(&self) -> Ledger {
        self.sandbox.ledger()
    }

    /// Another engine (another "process") on the same journal and marketplace.
    pub fn engine_with_token(&self, token: &str) -> Engine<MarketClient> {
        engine_for(&self.db.store, &self.sandbox.base_url(), token, settings())
    }

    pub fn write_campaign(&self, name: &str, yaml: &str) {
        std::fs::write(self.dir.path().join(format!("{name}.yaml")), yaml).expect("write campaign");
    }

    pub fn remove_campaign(&self, name: &str) {
        std::fs::remove_file(self.dir.path().join(format!("{name}.yaml")))
            .expect("remove campaign");
    }

    pub fn campaigns(&self) -> Vec<LoadedCampaign> {
        load(self.dir.path())
    }

    pub async fn pass(&self, buy_round: bool) -> Vec<CampaignReport> {
        pass_with(&self.engine, &self.campaigns(), buy_round).await
    }

    /// Passes without buy rounds until every campaign converged with nothing left to do,
    /// at most `max` of them. Returns the number of passes it took.
    pub async fn converge(&self, max: u32) -> u32 {
        converge_with(&self.engine, self, max).await
    }

    /// Whether the journal says every loaded campaign is done: nothing uncertain, no halt,
    /// and a plan without changes.
    pub async fn settled(&self) -> bool {
        for lc in self.campaigns() {
            let r = self.recorded(&lc.campaign.name).await;
            let p = plan::plan_campaign(&lc.campaign, &r, false);
            if !r.uncertain.is_empty() || !r.halts.is_empty() || p.has_changes() {
                return false;
            }
        }
        true
    }

    pub async fn recorded(&self, campaign: &str) -> Recorded {
        let today = chrono::Utc::now().date_naive();
        Recorded::load(self.store(), campaign, today)
            .await
            .expect("journal readable")
    }

    /// The project ids the sandbox created for a campaign's domain (several only if a
    /// free creation was repeated after an uncertain answer).
    pub fn projects_of(&self, ledger: &Ledger, c: &Campaign) -> HashSet<i64> {
        ledger
            .projects
            .iter()
            .filter(|p| p.domain.trim_end_matches('/') == c.domain.trim_end_matches('/'))
            .map(|p| p.id)
            .collect()
    }

    /// The four invariants of issue 4, from the sandbox's ledger and the journal.
    pub async fn assert_invariants(&self) {
        let ledger = self.ledger();
        assert_no_duplicate_purchase(&ledger);
        for lc in self.campaigns() {
            let c = &lc.campaign;
            let projects = self.projects_of(&ledger, c);
            self.assert_money_within_cap(&ledger, c, &projects).await;
            self.assert_every_purchase_recorded(&ledger, c, &projects)
                .await;
            assert_link_limits(&ledger, c, &projects);
        }
    }

    async fn assert_money_within_cap(
        &self,
        ledger: &Ledger,
        c: &Campaign,
        projects: &HashSet<i64>,
    ) {
        let sandbox_side = sandbox_commitment(ledger, projects);
        assert!(
            sandbox_side <= c.budget.monthly,
            "{}: the sandbox holds {sandbox_side} RUB/month of links and running autobuyers, over the cap {}",
            c.name,
            c.budget.monthly
        );
        let today = chrono::Utc::now().date_naive();
        let b = self.store().budget(&c.name, today).await.expect("budget");
        assert!(
            b.committed <= b.cap,
            "{}: journal commitment {} over its cap {}",
            c.name,
            b.committed,
            b.cap
        );
        let entries = self.store().ledger(&c.name).await.expect("budget ledger");
        let sum: i64 = entries.iter().map(|e| e.delta.kopecks()).sum();
        assert_eq!(
            sum,
            b.committed.kopecks(),
            "{}: sum(ledger entries) == committed",
            c.name
        );
    }

    async fn assert_every_purchase_recorded(
        &self,
        ledger: &Ledger,
        c: &Campaign,
        projects: &HashSet<i64>,
    ) {
        let held: HashSet<(i64, i64)> = self
            .store()
            .held_links(&c.name)
            .await
            .expect("held links")
            .iter()
            .map(|h| (h.page_id, h.url_id))
            .collect();
        let succeeded = self
            .store()
            .intents(IntentFilter {
                campaign: Some(c.name.clone()),
                states: vec![IntentState::Succeeded],
                kind: Some(IntentKind::Purchase),
            })
            .await
            .expect("intents");
        let bought: HashSet<(i64, i64)> = succeeded
            .iter()
            .filter_map(|i| {
                Some((
                    i.request.get("page_id")?.as_i64()?,
                    i.request.get("url_id")?.as_i64()?,
                ))
            })
            .collect();
        for p in ledger
            .purchases
            .iter()
            .filter(|p| projects.contains(&p.project_id))
        {
            let key = (p.page_id, p.url_id);
            assert!(
                held.contains(&key) && bought.contains(&key),
                "{}: the sandbox sold page {} for URL {} but the journal does not hold it",
                c.name,
                p.page_id,
                p.url_id
            );
        }
    }
}

/// Builds an engine over a marketplace client with `token`, on `store`.
pub fn engine_for(
    store: &Store,
    base_url: &str,
    token: &str,
    settings: EngineSettings,
) -> Engine<MarketClient> {
    let metrics = Arc::new(Metrics::new());
    let credentials =
        Credentials::new(token.to_string().into(), TICKET.to_string().into()).expect("credentials");
    let mut config = ClientConfig::new(base_url, credentials).expect("client config");
    config.rate_limit = std::num::NonZeroU32::new(200).expect("non-zero");
    config.max_concurrency = 8;
    config.request_timeout = Duration::from_secs(10);
    let market = MarketClient::new(config, metrics.clone()).expect("market client");
    Engine::new(
        Arc::new(market),
        store.clone(),
        clock::system(),
        metrics,
        settings,
    )
}

pub fn load(dir: &Path) -> Vec<LoadedCampaign> {
    let report = campaign::load_dir(dir);
    assert!(
        report.problems.is_empty(),
        "fixtures are valid: {:?}",
        report.problems
    );
    report.campaigns
}

pub async fn pass_with(
    engine: &Engine<MarketClient>,
    campaigns: &[LoadedCampaign],
    buy_round: bool,
) -> Vec<CampaignReport> {
    engine
        .pass(campaigns, buy_round)
        .await
        .expect("a pass runs")
}

pub async fn converge_with(engine: &Engine<MarketClient>, w: &World, max: u32) -> u32 {
    for n in 1..=max {
        let reports = pass_with(engine, &w.campaigns(), false).await;
        let all_converged = reports.iter().all(|r| r.converged() && r.uncertain == 0);
        if all_converged && w.settled().await {
            return n;
        }
    }
    panic!(
        "campaigns did not converge in {max} passes: {:#?}",
        pass_with(engine, &w.campaigns(), false).await
    );
}

pub fn assert_no_duplicate_purchase(ledger: &Ledger) {
    assert_eq!(
        ledger.duplicate_purchases, 0,
        "the sandbox saw a duplicate purchase"
    );
    let mut seen = HashSet::new();
    for p in &ledger.purchases {
        assert!(
            seen.insert((p.project_id, p.page_id, p.url_id)),
            "page {} bought twice for URL {} of project {}",
            p.page_id,
            p.url_id,
            p.project_id
        );
    }
}

/// What the marketplace holds against a campaign: its links' prices plus the monthly budgets
/// of its running autobuyers.
pub fn sandbox_commitment(ledger: &Ledger, projects: &HashSet<i64>) -> Money {
    let links: i64 = ledger
        .purchases
        .iter()
        .filter(|p| projects.contains(&p.project_id))
        .map(|p| p.price.kopecks())
        .sum();
    let autobuyers: i64 = ledger
        .autobuyers
        .iter()
        .filter(|a| projects.contains(&a.project_id) && a.state == AutobuyerState::Running)
        .flat_map(|a| a.urls.iter().map(|u| u.monthly_budget.kopecks()))
        .sum();
    Money::from_kopecks(links + autobuyers)
}

pub fn assert_link_limits(ledger: &Ledger, c: &Campaign, projects: &HashSet<i64>) {
    let mine: Vec<_> = ledger
        .purchases
        .iter()
        .filter(|p| projects.contains(&p.project_id))
        .collect();
    assert!(
        mine.len() as u32 <= c.budget.total_links,
        "{}: {} links bought, total limit {}",
        c.name,
        mine.len(),
        c.budget.total_links
    );
    let mut per_day: BTreeMap<chrono::NaiveDate, u32> = BTreeMap::new();
    for p in mine {
        *per_day.entry(p.at.date_naive()).or_default() += 1;
    }
    for (day, n) in per_day {
        assert!(
            n <= c.budget.daily_links,
            "{}: {n} links bought on {day}, daily limit {}",
            c.name,
            c.budget.daily_links
        );
    }
}

/// Waits until `check` holds, polling, at most `limit`.
pub async fn eventually<F, Fut>(limit: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// Actions of a plan that change the marketplace, described.
pub fn changes(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter(|a| a.is_change())
        .map(Action::describe)
        .collect()
}

/// One campaign parsed from YAML, for tests that need its model.
pub fn load_one(yaml: &str) -> Campaign {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("c.yaml"), yaml).expect("write");
    load(dir.path()).remove(0).campaign
}

/// How many requests of `op` the sandbox received, whatever their outcome.
pub fn requests_total(ledger: &Ledger, op: linkrunner::sandbox::Op) -> u64 {
    ledger
        .requests
        .get(op.name())
        .map(|m| m.values().sum())
        .unwrap_or(0)
}

/// Requests of every operation, whatever their outcome.
pub fn all_requests(ledger: &Ledger) -> u64 {
    ledger.requests.values().flat_map(|m| m.values()).sum()
}

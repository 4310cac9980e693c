//! A world for one test: a sandbox marketplace on port 0, a fresh journal (SQLite file or
//! PostgreSQL database), a directory of campaign files and an engine over them, in-process.

use std::collections::{BTreeMap, HashSet};

use linkrunner::campaign::{Campaign, LoadedCampaign};
use linkrunner::clock::SharedClock;
use linkrunner::decide::plan;
use linkrunner::decide::recorded::Recorded;
use linkrunner::effects::Engine;
use linkrunner::effects::pass::CampaignReport;
use linkrunner::market::MarketClient;
use linkrunner::store::{
    BudgetSnapshot, IntentFilter, IntentKind, IntentRow, IntentState, Resolution, Store,
};
use linkrunner_sandbox::{Ledger, SandboxConfig, SandboxHandle};

use crate::support::app::{self, AppSettings, Journal};
pub use crate::support::db::TestDb;
use crate::support::{campaigns, init_logs, ledger, sandbox};

pub const TOKEN: &str = "engine-test-token";
pub const TICKET: &str = "engine-test-ticket";

/// Strict sandbox defaults; searches pending once before they are ready. A small inventory
/// (searches cycle through it every three) offers already bought pages again, so the
/// "never buy a page twice" protections are exercised, not spared by luck.
pub fn sandbox_config() -> SandboxConfig {
    let mut cfg = sandbox::config(TOKEN, TICKET, 1);
    cfg.inventory_size = 30;
    cfg
}

/// [`sandbox_config`] with `inventory` pages, every one renting at `price_rub`.
pub fn priced_config(inventory: usize, price_rub: i64) -> SandboxConfig {
    let mut cfg = sandbox_config();
    cfg.inventory_size = inventory;
    cfg.price_min = linkrunner::money::Money::from_rubles(price_rub);
    cfg.price_max = linkrunner::money::Money::from_rubles(price_rub);
    cfg
}

pub struct World {
    pub db: TestDb,
    pub sandbox: SandboxHandle,
    pub dir: tempfile::TempDir,
    pub engine: Engine<MarketClient>,
}

impl World {
    pub async fn new(db: TestDb, cfg: SandboxConfig) -> World {
        init_logs();
        let sandbox = sandbox::start(cfg).await;
        let engine = engine_for(&db.store, &sandbox.base_url(), TOKEN).await;
        World {
            db,
            sandbox,
            dir: tempfile::tempdir().expect("campaign dir"),
            engine,
        }
    }

    /// A world whose sandbox and engine both read `clock` (a test that moves time itself),
    /// the engine's settings changed by `tweak`.
    pub async fn on_clock(
        db: TestDb,
        mut cfg: SandboxConfig,
        clock: SharedClock,
        tweak: impl FnOnce(&mut AppSettings),
    ) -> World {
        cfg.clock = clock.clone();
        let sandbox = sandbox::start(cfg).await;
        let market = app::client_config(&sandbox.base_url(), TOKEN, TICKET);
        let mut settings = app::settings(Journal::Open(db.store.clone()), market);
        settings.clock = clock;
        tweak(&mut settings);
        World {
            db,
            sandbox,
            dir: tempfile::tempdir().expect("campaign dir"),
            engine: app::build(settings).await,
        }
    }

    /// A world with `files` (name, YAML) after a first buy round and the passes to converge.
    pub async fn bought_and_converged(db: TestDb, files: &[(&str, &str)]) -> World {
        let w = World::new(db, sandbox_config()).await;
        for (name, yaml) in files {
            w.write_campaign(name, yaml);
        }
        w.pass(true).await;
        w.converge(3).await;
        w
    }

    pub fn store(&self) -> &Store {
        &self.db.store
    }

    pub fn ledger(&self) -> Ledger {
        self.sandbox.ledger()
    }

    /// Another engine (another "process") on the same journal and marketplace.
    pub async fn engine_with_token(&self, token: &str) -> Engine<MarketClient> {
        engine_for(&self.db.store, &self.sandbox.base_url(), token).await
    }

    pub fn write_campaign(&self, name: &str, yaml: &str) {
        campaigns::write(self.dir.path(), &format!("{name}.yaml"), yaml);
    }

    /// The three campaigns of [`super::fixtures`]: acme-shoes, bolt-bikes and dune-maps.
    pub fn write_fixture_campaigns(&self) {
        use super::fixtures::{ACME, BOLT, DUNE};
        self.write_campaign("acme-shoes", ACME);
        self.write_campaign("bolt-bikes", BOLT);
        self.write_campaign("dune-maps", DUNE);
    }

    pub fn remove_campaign(&self, name: &str) {
        std::fs::remove_file(self.dir.path().join(format!("{name}.yaml")))
            .expect("remove campaign");
    }

    pub fn campaigns(&self) -> Vec<LoadedCampaign> {
        campaigns::load(self.dir.path())
    }

    pub async fn pass(&self, buy_round: bool) -> Vec<CampaignReport> {
        pass_with(&self.engine, &self.campaigns(), buy_round).await
    }

    /// A pass with buy rounds, then passes until every campaign converged (3 at most): the
    /// ledger then, the "before" of a test that changes something next.
    pub async fn buy_and_converge(&self) -> Ledger {
        self.pass(true).await;
        self.converge(3).await;
        self.ledger()
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

    /// The link ids of the campaign's foreign links (bought outside its purchase calls).
    async fn foreign_link_ids(&self, campaign: &str) -> HashSet<i64> {
        let foreign = self.store().links().foreign_links(campaign).await;
        let foreign = foreign.expect("foreign links");
        foreign.iter().filter_map(|f| f.link_id).collect()
    }

    /// The campaign's budget today, as the journal holds it.
    pub async fn budget(&self, campaign: &str) -> BudgetSnapshot {
        let today = chrono::Utc::now().date_naive();
        let b = self.store().campaigns().budget(campaign, today).await;
        b.expect("budget")
    }

    /// The journal counts for `yaml`'s campaign exactly what the sandbox holds against its
    /// projects in `ledger`.
    pub async fn assert_committed_as_on_the_market(&self, ledger: &Ledger, yaml: &str) {
        let c = campaigns::load_one(yaml);
        let projects = self.projects_of(ledger, &c);
        let r = self.recorded(&c.name).await;
        assert_eq!(r.budget.committed, ledger::commitment(ledger, &projects));
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
        ledger::assert_no_duplicate_purchase(&ledger);
        for lc in self.campaigns() {
            let c = &lc.campaign;
            let projects = self.projects_of(&ledger, c);
            self.assert_money_within_cap(&ledger, c, &projects).await;
            self.assert_every_purchase_recorded(&ledger, c, &projects)
                .await;
            // Links bought outside linkrunner (by hand, before an adoption) are not the buy
            // rounds' to limit.
            let foreign = self.foreign_link_ids(&c.name).await;
            let mut ours = ledger.clone();
            ours.purchases
                .retain(|p| p.autobuyer_id.is_some() || !foreign.contains(&p.link_id));
            assert_link_limits(&ours, c, &projects);
        }
    }

    /// The marketplace's commitment by the rule of docs/operating.md#money (`Ledger::commitment`) is within
    /// the cap; the journal never counts less than it; the journal's books balance.
    async fn assert_money_within_cap(
        &self,
        ledger: &Ledger,
        c: &Campaign,
        projects: &HashSet<i64>,
    ) {
        let sandbox_side = ledger::commitment(ledger, projects);
        assert!(
            sandbox_side <= c.budget.monthly,
            "{}: the sandbox holds {sandbox_side} RUB/month of links and running autobuyers, over the cap {}",
            c.name,
            c.budget.monthly
        );
        let today = chrono::Utc::now().date_naive();
        let b = self
            .store()
            .campaigns()
            .budget(&c.name, today)
            .await
            .expect("budget");
        assert!(
            b.committed >= sandbox_side,
            "{}: the journal counts {} RUB/month, less than the marketplace holds ({sandbox_side})",
            c.name,
            b.committed
        );
        let entries = self
            .store()
            .campaigns()
            .ledger(&c.name)
            .await
            .expect("budget ledger");
        let sum: i64 = entries.iter().map(|e| e.delta.kopecks()).sum();
        assert_eq!(
            sum,
            b.committed.kopecks(),
            "{}: sum(ledger entries) == committed",
            c.name
        );
    }

    /// Every link the marketplace sold the campaign is in the journal: bought by a purchase
    /// call → a held link of a succeeded purchase intent; bought by an autobuyer → a counted
    /// foreign link.
    async fn assert_every_purchase_recorded(
        &self,
        ledger: &Ledger,
        c: &Campaign,
        projects: &HashSet<i64>,
    ) {
        let held: HashSet<(i64, i64)> = self
            .store()
            .links()
            .held_links(&c.name)
            .await
            .expect("held links")
            .iter()
            .map(|h| (h.page_id, h.url_id))
            .collect();
        let foreign = self.foreign_link_ids(&c.name).await;
        let succeeded = self
            .store()
            .intents()
            .find_intents(IntentFilter {
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
            if p.autobuyer_id.is_some() {
                assert!(
                    foreign.contains(&p.link_id),
                    "{}: autobuyer {:?} bought link {} (page {}) but the journal does not count it",
                    c.name,
                    p.autobuyer_id,
                    p.link_id,
                    p.page_id
                );
                continue;
            }
            let key = (p.page_id, p.url_id);
            // A link bought outside linkrunner (by hand, before an adoption) counts as held
            // by others.
            assert!(
                (held.contains(&key) && bought.contains(&key)) || foreign.contains(&p.link_id),
                "{}: the sandbox sold page {} for URL {} but the journal does not hold it",
                c.name,
                p.page_id,
                p.url_id
            );
        }
    }

    /// Another engine on the same journal and marketplace, with other settings (its own
    /// holder id: another "process").
    pub async fn engine_with(
        &self,
        engine: linkrunner::effects::EngineSettings,
    ) -> Engine<MarketClient> {
        let market = app::client_config(&self.sandbox.base_url(), TOKEN, TICKET);
        let mut settings = app::settings(Journal::Open(self.store().clone()), market);
        settings.engine = engine;
        app::build(settings).await
    }
}

/// An engine over a marketplace client with `token`, on `store`, with the fast settings.
pub async fn engine_for(store: &Store, base_url: &str, token: &str) -> Engine<MarketClient> {
    let market = app::client_config(base_url, token, TICKET);
    app::build(app::settings(Journal::Open(store.clone()), market)).await
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

/// Between `before` and `after`, nothing was bought in `projects` and no autobuyer was created
/// anywhere: what a campaign that must not spend leaves in the ledger.
pub fn assert_no_new_spending(
    before: &Ledger,
    after: &Ledger,
    projects: &HashSet<i64>,
    what: &str,
) {
    let bought = |l: &Ledger| {
        l.purchases
            .iter()
            .filter(|p| projects.contains(&p.project_id))
            .count()
    };
    assert_eq!(bought(after), bought(before), "{what}: nothing bought");
    assert_eq!(
        after.autobuyers.len(),
        before.autobuyers.len(),
        "{what}: no autobuyer created"
    );
}

/// Buy rounds' links within `daily_links` and `total_links` (autobuyers have their own limits).
pub fn assert_link_limits(ledger: &Ledger, c: &Campaign, projects: &HashSet<i64>) {
    let mine: Vec<_> = ledger
        .purchases
        .iter()
        .filter(|p| projects.contains(&p.project_id) && p.autobuyer_id.is_none())
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

/// The autobuyer the sandbox created for the uncertain autobuyer creation `i`: one of the
/// name it asked for, in `projects`, that the journal (`r`) does not know yet.
pub fn autobuyer_created_for(
    ledger: &Ledger,
    projects: &HashSet<i64>,
    r: &Recorded,
    i: &IntentRow,
) -> Option<i64> {
    let name = i.request.get("name").and_then(|v| v.as_str());
    let known: Vec<i64> = r.ids.autobuyers.values().map(|a| a.id).collect();
    let created = ledger.autobuyers.iter().find(|a| {
        projects.contains(&a.project_id) && Some(a.name.as_str()) == name && !known.contains(&a.id)
    });
    created.map(|a| a.id)
}

/// Resolves intent `i` as an operator would, for `reason`, now.
pub async fn resolve(w: &World, i: &IntentRow, resolution: Resolution, reason: &str) {
    let resolved = w
        .store()
        .intents()
        .resolve_intent(i.id, resolution, reason, chrono::Utc::now());
    resolved.await.expect("resolve");
}

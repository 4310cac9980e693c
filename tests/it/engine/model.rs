//! Issue 11's model-based test: random sequences of campaign-file edits, passes, crashes and
//! marketplace misbehaviour (answers cut after commit, 5xx, 429, "error" with ids, paged,
//! first-page-only and lagging lists, autobuyers that buy, links that leave, and an account
//! already in use: an adopted project whose team buys by hand, an adopted autobuyer that
//! buys by itself and whose spec changes), checked after
//! every step against the sandbox's ledger ([`super::model_check`]). The engine runs
//! in-process on an injected clock shared with the sandbox, so the settle grace and leases
//! move only when a step moves them; a crash drops a pass's future once the sandbox got N
//! more requests, and a new engine (another holder) takes over when the lease expired.
//! Issue 32's edits of identity join them: files renamed with and without `renamed_from`,
//! a second file claiming a removed campaign's site, the directory emptied and restored,
//! URLs respelt with `url_id:`, autobuyers moved with `moved_from:`; after every step no site
//! has a second project and no page is bought twice for one URL across every project of the
//! ledger, and a moved autobuyer is neither stopped nor created again. Every other pass is a
//! second process's ([`Replica`]), which sees each file edit a step late.
//!
//! Seeds: a fixed set in CI; `LINKRUNNER_MODEL_SEEDS=N` runs seeds 1..=N instead,
//! `LINKRUNNER_MODEL_SEED=S` only seed S. A failing seed panics with the whole sequence.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use linkrunner::clock::{ManualClock, SharedClock};
use linkrunner::decide::plan;
use linkrunner::decide::recorded::Recorded;
use linkrunner::effects::pass::{CampaignReport, PassOutcome};
use linkrunner::effects::{Engine, EngineSettings};
use linkrunner::market::MarketClient;
use linkrunner::store::{IntentKind, IntentRow, Resolution};
use linkrunner_sandbox::{Behaviour, Faults, InUse, Ledger, LinkStatus, ListPaging};

use super::model_check::{self as check, Check, Money2};
use super::model_steps::{self as steps, FileModel, Market, Step};
use super::support::{TICKET, TOKEN, TestDb, World, autobuyer_created_for, sandbox_config};
use crate::support::app::{self, Journal, fast_settings};
use crate::support::campaigns;
use crate::support::db::Backend;
use crate::support::ledger;
use crate::support::{init_logs, sandbox};

/// Seeds run by default (8 caught the stop-releases-its-links mutation docs/contributing.md#the-model-based-test names):
/// about a minute per backend on two cores.
/// Seed 19 caught texts added to a URL respelt with `url_id:` making a second URL.
/// Seed 34 changed the adopted autobuyer's spec before any pass recorded its adoption (a
/// declaration the marketplace does not run): such an edit is now left out
/// ([`Model::false_declaration`]).
const CI_SEEDS: [u64; 10] = [1, 4, 8, 12, 18, 19, 21, 26, 30, 34];
/// Steps per sequence (plus a checkpoint every 12 and at the end).
const STEPS: usize = 36;
/// Steps of a settlement sequence (plus its checkpoint).
const SETTLEMENT_STEPS: usize = 24;
/// Passes a checkpoint may take to settle everything.
const CHECKPOINT_PASSES: u32 = 10;

fn settings() -> EngineSettings {
    EngineSettings {
        settle_grace: chrono::Duration::seconds(2),
        lease_ttl: chrono::Duration::seconds(30),
        ..fast_settings()
    }
}

fn seeds() -> Vec<u64> {
    let var = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    if let Some(seed) = var("LINKRUNNER_MODEL_SEED") {
        return vec![seed];
    }
    match var("LINKRUNNER_MODEL_SEEDS") {
        Some(n) => (1..=n).collect(),
        None => CI_SEEDS.to_vec(),
    }
}

pub async fn random_sequences_keep_money_safe_and_converge(db: TestDb) {
    run_seeds(db, None, |seed| steps::generate(seed, STEPS)).await;
}

/// The same checks on sequences aimed at settlement ([`steps::generate_settlement`]): cut
/// purchases, first-page-only reads after the grace, and buy rounds offered the same pages
/// (a small market).
pub async fn settlement_sequences_never_buy_a_cut_purchases_page_again(db: TestDb) {
    // Twelve pages in the whole market: every search offers most of them again.
    run_seeds(db, Some(12), |seed| {
        steps::generate_settlement(seed, SETTLEMENT_STEPS)
    })
    .await;
}

async fn run_seeds(db: TestDb, inventory: Option<usize>, generate: impl Fn(u64) -> Vec<Step>) {
    let backend = match db.sqlite_file() {
        Some(_) => Backend::Sqlite,
        None => Backend::Postgres,
    };
    drop(db);
    for seed in seeds() {
        let started = Instant::now();
        let seq = generate(seed);
        let mut m = Model::start(seed, inventory, TestDb::new(backend).await, PRODUCT).await;
        for (i, step) in seq.iter().enumerate() {
            if let Err(why) = m.step(step).await {
                panic!("{}", failure(seed, backend, &seq, i, &why));
            }
        }
        let l = m.w.ledger();
        let count = |f: fn(&Step) -> bool| seq.iter().filter(|s| f(s)).count();
        let respecs = count(|s| {
            matches!(
                s,
                Step::Edit {
                    edit: steps::Edit::Respec { .. },
                    ..
                }
            )
        });
        let renames = count(|s| {
            matches!(
                s,
                Step::Edit {
                    edit: steps::Edit::RenameFile { .. },
                    ..
                }
            )
        });
        let respelt = count(|s| {
            matches!(
                s,
                Step::Edit {
                    edit: steps::Edit::Respell { .. },
                    ..
                }
            )
        });
        let claims = count(|s| matches!(s, Step::Claim { on: true, .. }));
        let moves = count(|s| {
            matches!(
                s,
                Step::Edit {
                    edit: steps::Edit::RenameFile { moved: true, .. },
                    ..
                }
            )
        });
        let emptied = count(|s| matches!(s, Step::EmptyDir));
        eprintln!(
            "model seed {seed} ({backend:?}): {} steps in {:.1?}, {} purchase(s), {} autobuyer(s), {} crash(es), {} operator resolution(s), {respecs} changed spec(s) ({} left out: declared before the adoption was recorded), {renames} renamed file(s) ({} blocked), {respelt} respelt URL(s), {moves} move(s) of autobuyers ({} checked), {claims} claim(s), {emptied} emptied director(ies), {} replica pass(es) ({} campaign(s) converged)",
            seq.len(),
            started.elapsed(),
            l.purchases.len(),
            l.autobuyers.len(),
            m.crashes,
            m.resolved,
            m.left_out,
            m.blocked_seen.len(),
            m.moves_checked,
            m.replica.as_ref().map_or(0, |r| r.passes),
            m.replica.as_ref().map_or(0, |r| r.converged),
        );
    }
}

/// Issue 34, item 3: the same sequences reach the same journal whether reconciliations of
/// converged campaigns only look or always run in full. A crash is a pass whose future is
/// dropped at a moment the test's timer picks, which no two runs share, so here it is the
/// same pass run to its end; and each run has one campaign file (the buying one with an
/// autobuyer, then the one with two autobuyers), because campaigns that lend each other
/// their slot while a search is pending take the marketplace's ids in an order timing picks.
/// Compared: the campaign's record (`Recorded`, as `plan` and the API read it) and every
/// intent, without the holder ids that name the process.
pub async fn looks_and_full_passes_reach_the_same_journal(db: TestDb) {
    let backend = match db.sqlite_file() {
        Some(_) => Backend::Sqlite,
        None => Backend::Postgres,
    };
    drop(db);
    let mut looked = 0;
    for (seed, only) in seeds()
        .into_iter()
        .take(2)
        .flat_map(|seed| [(seed, 0), (seed, 1)])
    {
        let seq: Vec<Step> = steps::generate(seed, STEPS)
            .into_iter()
            .filter(|s| !matches!(s, Step::Edit { file, .. } if *file != only))
            // A claimant's owner is the other files (removed here before any pass).
            .filter(|s| !matches!(s, Step::Claim { .. }))
            .map(|s| match s {
                Step::Crash { buy, .. } => Step::Pass { buy },
                Step::RestoreDir(files) => {
                    Step::RestoreDir(files.into_iter().filter(|&f| f == only).collect())
                }
                other => other,
            })
            .collect();
        let mut journals = Vec::new();
        for quiet_looks in [true, false] {
            let how = Run {
                quiet_looks,
                in_order: true,
                replica: false,
            };
            let db = TestDb::new(backend).await;
            let mut m = Model::start(seed, None, db, how).await;
            m.keep_only(only);
            for (i, step) in seq.iter().enumerate() {
                if let Err(why) = m.step(step).await {
                    panic!(
                        "quiet_looks {quiet_looks}: {}",
                        failure(seed, backend, &seq, i, &why)
                    );
                }
            }
            looked += m.w.engine.metrics().load.reconciliations_looked_total.get();
            journals.push(m.journal().await);
        }
        if journals[0] != journals[1] {
            // Both whole, for a diff.
            let dir = std::env::temp_dir();
            for (name, j) in ["with-looks", "without-looks"].iter().zip(&journals) {
                let path = dir.join(format!("model-{seed}-{only}-{backend:?}-{name}.json"));
                std::fs::write(&path, j).expect("write the journal");
                eprintln!("journal {name}: {}", path.display());
            }
        }
        assert!(
            journals[0] == journals[1],
            "seed {seed}, file {only} on {backend:?}: the journals differ with and without looks:\n{}",
            first_difference(&journals[0], &journals[1])
        );
    }
    assert!(
        looked > 0,
        "no reconciliation only looked: the comparison proves nothing"
    );
}

/// The first line where two journals' texts differ, with both sides.
fn first_difference(a: &str, b: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let at = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    format!(
        "line {at}:\n  with looks:    {}\n  without looks: {}",
        a.get(at).unwrap_or(&"(end)"),
        b.get(at).unwrap_or(&"(end)")
    )
}

/// Drops what names the process (intents' `owner`, rounds' `holder`) from a journal's JSON.
fn without_holders(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove("owner");
            m.remove("holder");
            m.values_mut().for_each(without_holders);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(without_holders),
        _ => {}
    }
}

fn failure(seed: u64, backend: Backend, seq: &[Step], at: usize, why: &str) -> String {
    let mut out =
        format!("model seed {seed} on {backend:?} failed at step {at}: {why}\n\nthe sequence:\n");
    for (i, s) in seq.iter().enumerate().take(at + 1) {
        let mark = if i == at { ">>" } else { "  " };
        out += &format!("{mark} {i:3}. {s}\n");
    }
    out += &format!(
        "\nrerun: LINKRUNNER_MODEL_SEED={seed} cargo test --test it engine::{}::random_sequences -- --nocapture\n",
        match backend {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    );
    out
}

/// The world of one sequence, and what the model knows that the ledger does not.
struct Model {
    w: World,
    clock: Arc<ManualClock>,
    files: Vec<FileModel>,
    /// The list's lag and whether a read of it shows every link (all pages, or no paging).
    lag_ms: u64,
    complete_list: bool,
    crashes: u32,
    resolved: u32,
    /// The account in use the adopting file adopts, and the links bought by hand in it
    /// (seeded and since): others' links, like an autobuyer's, for the invariants.
    seeded: InUse,
    outside: check::Outside,
    how: Run,
    /// The files whose claimant ([`FileModel::claimant`]) is written.
    claims: BTreeSet<usize>,
    /// The file names seen blocked by a pass (renamed without the key).
    blocked_seen: BTreeSet<&'static str>,
    /// A rename moving autobuyers (`moved_from`), until a step hands it over.
    moving: Option<Moving>,
    /// Renames that moved autobuyers, checked when handed over.
    moves_checked: u32,
    replica: Option<Replica>,
    /// Pass steps so far: the odd ones are the replica's.
    passes: u32,
    /// Edits left out as false declarations ([`Model::false_declaration`]).
    left_out: u32,
}

/// A second process on the same journal: its own engine and holder, and its own copy of the
/// campaign directory, which sees each edit one step later (a replica whose checkout or
/// mount reloads after the other's). It runs every other pass step; a crash is the first
/// process's.
struct Replica {
    engine: Engine<MarketClient>,
    dir: tempfile::TempDir,
    /// The directory and the files' model as they were one step ago: what it sees next.
    next: (Vec<(std::ffi::OsString, String)>, Vec<FileModel>),
    /// What it sees now.
    seen: Vec<FileModel>,
    /// Its passes, and what they reported converged.
    passes: u32,
    converged: u32,
}

impl Replica {
    async fn start(
        store: &linkrunner::store::Store,
        base: &str,
        clock: &SharedClock,
        how: Run,
        files: &[FileModel],
    ) -> Replica {
        Replica {
            engine: build_engine(store, base, clock, how).await,
            dir: tempfile::tempdir().expect("the replica's campaign dir"),
            next: (Vec::new(), files.to_vec()),
            seen: files.to_vec(),
            passes: 0,
            converged: 0,
        }
    }

    /// Before a step: the replica's directory takes what the first one held a step ago, and
    /// the first one's directory now (`dir`, `files`) is what it takes before the next step.
    fn sync(&mut self, dir: &std::path::Path, files: &[FileModel]) {
        let now = (snapshot(dir), files.to_vec());
        let (contents, seen) = std::mem::replace(&mut self.next, now);
        for (name, _) in snapshot(self.dir.path()) {
            std::fs::remove_file(self.dir.path().join(name)).expect("remove a replica file");
        }
        for (name, text) in &contents {
            std::fs::write(self.dir.path().join(name), text).expect("write a replica file");
        }
        self.seen = seen;
    }

    async fn pass(&mut self, buy: bool) -> Check {
        let reports = self
            .engine
            .pass(&campaigns::load(self.dir.path()), buy)
            .await
            .map_err(|e| format!("the replica's pass failed: {e}"))?;
        self.passes += 1;
        self.converged += reports
            .iter()
            .filter(|r| r.outcome == PassOutcome::Converged)
            .count() as u32;
        Ok(())
    }
}

/// The campaign files of `dir`, name and text.
fn snapshot(dir: &std::path::Path) -> Vec<(std::ffi::OsString, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read the campaign dir") {
        let path = entry.expect("a dir entry").path();
        let text = std::fs::read_to_string(&path).expect("read a campaign file");
        out.push((path.file_name().expect("a file name").to_owned(), text));
    }
    out
}

/// A rename whose file's autobuyers say `moved_from:` the old name: the ids the old name
/// recorded for them, checked at the step that hands the rename over.
struct Moving {
    names: [&'static str; 2],
    new: &'static str,
    ids: BTreeMap<String, i64>,
}

async fn build_engine(
    w_store: &linkrunner::store::Store,
    base: &str,
    clock: &SharedClock,
    how: Run,
) -> Engine<MarketClient> {
    let market = app::client_config(base, TOKEN, TICKET);
    let mut s = app::settings(Journal::Open(w_store.clone()), market);
    s.engine = settings();
    s.engine.quiet_looks = how.quiet_looks;
    if how.in_order {
        s.engine.campaign_concurrency = 1;
        // Calls sent together (a campaign's searches start at once) leave the client in
        // order, but with several in flight the marketplace takes them in whatever order
        // its tasks are scheduled: under load the second URL's search got the first's
        // donors, and the runs bought the same pages for swapped URLs.
        s.market.max_concurrency = 1;
    }
    s.clock = clock.clone();
    app::build(s).await
}

/// How the engines of a sequence run: whether reconciliations of converged campaigns may
/// only look (the product's default), and in order: one campaign at a time and one call in
/// flight (the marketplace then sees the calls in the order the engine makes them, and its
/// ids follow the sequence alone, so two runs can be compared).
#[derive(Debug, Clone, Copy)]
struct Run {
    quiet_looks: bool,
    in_order: bool,
    /// A second process on the journal ([`Replica`]) runs every other pass.
    replica: bool,
}

const PRODUCT: Run = Run {
    quiet_looks: true,
    in_order: false,
    replica: true,
};

impl Model {
    /// `inventory`: how many pages the whole sandbox market has (default: the suite's).
    async fn start(seed: u64, inventory: Option<usize>, db: TestDb, how: Run) -> Model {
        init_logs();
        let start = "2026-03-02T08:00:00Z".parse().expect("time");
        let clock = ManualClock::new(start);
        let shared: SharedClock = clock.clone();
        let mut cfg = sandbox_config();
        if let Some(n) = inventory {
            cfg.inventory_size = n;
        }
        cfg.seed = seed;
        cfg.clock = shared.clone();
        let sandbox = sandbox::start(cfg).await;
        let seeded = sandbox
            .seed_in_use(steps::ADOPTED_DOMAIN)
            .expect("an account in use");
        let outside = check::Outside {
            hand: seeded.hand_links.iter().map(|h| h.link_id).collect(),
            autobuyer: seeded.autobuyer_id,
        };
        let engine = build_engine(&db.store, &sandbox.base_url(), &shared, how).await;
        let files = FileModel::initial();
        let replica = match how.replica {
            true => {
                Some(Replica::start(&db.store, &sandbox.base_url(), &shared, how, &files).await)
            }
            false => None,
        };
        let w = World {
            db,
            sandbox,
            dir: tempfile::tempdir().expect("campaign dir"),
            engine,
        };
        let m = Model {
            w,
            clock,
            files,
            lag_ms: 0,
            complete_list: true,
            crashes: 0,
            resolved: 0,
            seeded,
            outside,
            how,
            claims: BTreeSet::new(),
            blocked_seen: BTreeSet::new(),
            moving: None,
            moves_checked: 0,
            replica,
            passes: 0,
            left_out: 0,
        };
        for i in 0..m.files.len() {
            m.write(i);
        }
        m
    }

    /// Only the `only`-th campaign file stays: the others are gone before any pass.
    fn keep_only(&mut self, only: usize) {
        for i in (0..self.files.len()).filter(|&i| i != only) {
            self.files[i].present = false;
            self.write(i);
        }
    }

    /// Writes file `i` under its name now; its other name's file is gone (a rename).
    fn write(&self, i: usize) {
        let f = &self.files[i];
        self.write_file(f, f.present);
        for other in f.names.iter().filter(|n| **n != f.name) {
            let _ = std::fs::remove_file(self.w.dir.path().join(format!("{other}.yaml")));
        }
    }

    fn write_file(&self, f: &FileModel, present: bool) {
        let path = self.w.dir.path().join(format!("{}.yaml", f.name));
        if present {
            std::fs::write(path, f.yaml(&self.seeded)).expect("write campaign");
        } else {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Which of the files' names (and the claimants') the journal records.
    async fn names_recorded(&self) -> BTreeSet<String> {
        let mut all: Vec<&str> = self.files.iter().flat_map(check::names).collect();
        all.extend(steps::CLAIMANTS);
        self.w
            .store()
            .campaigns()
            .recorded_among(&all)
            .await
            .expect("recorded campaigns")
            .into_iter()
            .collect()
    }

    /// What a pass should do with file `m`'s campaign, given the names the journal records.
    fn state(m: &FileModel, recorded: &BTreeSet<String>) -> Identity {
        let has = |n: &str| recorded.contains(n);
        let other = m.names.iter().copied().find(|n| *n != m.name && has(n));
        match (m.present, has(m.name), m.renamed_from, other) {
            (false, ..) => Identity::Removed,
            (true, true, ..) => Identity::Live,
            // The rename is handed over at its next pass.
            (true, false, Some(old), _) if has(old) => Identity::Live,
            (true, false, _, Some(owner)) => Identity::Blocked(owner),
            (true, false, ..) => Identity::Live,
        }
    }

    /// The files as the checks see them: a blocked one wants nothing, like a removed one.
    fn effective(&self, recorded: &BTreeSet<String>) -> Vec<FileModel> {
        Model::effective_of(&self.files, recorded)
    }

    fn effective_of(files: &[FileModel], recorded: &BTreeSet<String>) -> Vec<FileModel> {
        files
            .iter()
            .map(|m| m.wanting(Model::state(m, recorded) == Identity::Live))
            .collect()
    }

    /// File `m` as it stands for its recorded campaign `name`: a name it no longer has is a
    /// removed campaign.
    fn as_recorded(m: &FileModel, name: &str, recorded: &BTreeSet<String>) -> FileModel {
        m.wanting(name == m.name && Model::state(m, recorded) == Identity::Live)
    }

    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        use linkrunner::clock::Clock;
        self.clock.now()
    }

    /// What the journal recorded; `None` before the campaign's first pass.
    async fn recorded(&self, name: &str) -> Option<Recorded> {
        match Recorded::load(self.w.store(), name, self.now().date_naive()).await {
            Ok(r) => Some(r),
            Err(linkrunner::store::StoreError::NotFound { .. }) => None,
            Err(e) => panic!("journal unreadable: {e}"),
        }
    }

    /// Every campaign's record and intents, one JSON document per line, without holder ids.
    async fn journal(&self) -> String {
        let mut out = String::new();
        for name in self.files.iter().flat_map(check::names) {
            let filter = linkrunner::store::IntentFilter {
                campaign: Some(name.to_string()),
                ..Default::default()
            };
            let intents = self
                .w
                .store()
                .intents()
                .find_intents(filter)
                .await
                .expect("intents");
            let mut v = serde_json::json!({
                "campaign": name,
                "recorded": self.recorded(name).await,
                "intents": intents,
            });
            without_holders(&mut v);
            out += &serde_json::to_string_pretty(&v).expect("json");
            out.push('\n');
        }
        out
    }

    /// What the journal counts and what the marketplace holds, per file, against `ledger`.
    async fn money(&self, ledger: &Ledger) -> BTreeMap<&'static str, Money2> {
        check::money(
            self.w.store(),
            ledger,
            &self.files,
            &self.outside,
            self.now(),
        )
        .await
    }

    /// One step, then the invariants every step keeps: no page bought twice (for a URL of
    /// one project, and across every project), one project per site, money within the cap in
    /// force and never counted less by the journal than the marketplace holds, no claimant
    /// ever recorded.
    async fn step(&mut self, step: &Step) -> Check {
        let ledger = self.w.ledger();
        let before = self.money(&ledger).await;
        let wanted = self.effective(&self.names_recorded().await);
        let new_from = ledger.purchases.len();
        let intents = self.moving_intents().await;
        if let Some(r) = &mut self.replica {
            r.sync(self.w.dir.path(), &self.files);
        }
        let mut wanted = wanted;
        match step {
            Step::Edit { file, edit } => {
                if let steps::Edit::Respell { url } = edit {
                    self.learn_url_id(*file, *url).await?;
                }
                let old = self.files[*file].name;
                if self.false_declaration(*file, edit).await {
                    self.left_out += 1;
                    return Ok(());
                }
                steps::apply(&mut self.files[*file], edit);
                if let steps::Edit::RenameFile { moved: true, .. } = edit {
                    self.watch_move(*file, old).await;
                }
                self.write(*file);
            }
            Step::Claim { owner, on } => {
                let claimant = self.files[*owner].claimant();
                self.write_file(&claimant, *on);
                match on {
                    true => self.claims.insert(*owner),
                    false => self.claims.remove(owner),
                };
            }
            Step::EmptyDir => {
                for i in 0..self.files.len() {
                    self.files[i].present = false;
                    self.write(i);
                }
            }
            Step::RestoreDir(files) => {
                for &i in files {
                    self.files[i].present = true;
                    self.write(i);
                }
            }
            Step::Pass { buy } => {
                self.passes += 1;
                match self.replica.is_some() && self.passes.is_multiple_of(2) {
                    true => wanted = self.replica_pass(*buy, wanted).await?,
                    false => self.pass(*buy, false).await?,
                }
            }
            Step::Crash {
                buy,
                after_requests,
            } => self.crash(*buy, *after_requests).await,
            Step::Market(m) => self.market(m),
            Step::Wait { ms } => self.clock.advance(chrono::Duration::milliseconds(*ms)),
            Step::Checkpoint => {
                // Converging, it hands over any pending move: the watch ends.
                self.moving = None;
                return self.checkpoint().await;
            }
        }
        self.moved_as_declared(intents, &ledger).await?;
        let ledger = self.w.ledger();
        let hand = &self.outside.hand;
        check::no_page_bought_twice(&ledger, new_from, (self.lag_ms, self.complete_list), hand)?;
        check::one_project_per_site_and_page_per_url(&ledger, hand)?;
        self.no_claimant_recorded().await?;
        let after = self.money(&ledger).await;
        check::money_within_cap(&wanted, &before, &after)
    }

    /// A changed spec of the adopted autobuyer before the journal recorded its adoption: the
    /// file would declare a budget the marketplace does not run, and the journal counts the
    /// declared one (docs/adoption.md#4-what-is-counted), so the step is left out. Seed 34
    /// declared 350 RUB for the team's 500 RUB autobuyer before any pass recorded it.
    async fn false_declaration(&self, i: usize, edit: &steps::Edit) -> bool {
        let steps::Edit::Respec { name, .. } = edit else {
            return false;
        };
        let m = &self.files[i];
        let adopted = m.adopts && m.autobuyers.iter().any(|a| &a.name == name && a.adopted);
        adopted
            && !check::team_autobuyer_recorded(self.w.store(), m, &self.outside, self.now()).await
    }

    /// Before file `i`'s URL `url` is first respelt: the id the journal holds for its
    /// spelling now, for the file's `url_id:` (an adopting file writes the seeded ids always).
    async fn learn_url_id(&mut self, i: usize, url: usize) -> Check {
        let m = &self.files[i];
        if m.adopts || m.url_ids[url].is_some() {
            return Ok(());
        }
        let (spelling, campaign) = (m.url(url), m.name);
        let names: Vec<&str> = check::names(m).collect();
        for name in names {
            let id = self
                .recorded(name)
                .await
                .and_then(|r| r.ids.urls.get(&spelling).copied());
            if let Some(id) = id {
                self.files[i].url_ids[url] = Some(id);
                return Ok(());
            }
        }
        Err(format!(
            "{campaign}: the journal holds no id for {spelling} after a checkpoint"
        ))
    }

    /// File `i` was renamed from `old` with its autobuyers `moved_from: old`: the ids the
    /// journal records for them under that name, to check when the rename is handed over.
    async fn watch_move(&mut self, i: usize, old: &'static str) {
        let m = &self.files[i];
        let (new, names) = (m.name, m.names);
        let Some(r) = self.recorded(old).await else {
            return;
        };
        let ids = m
            .autobuyers
            .iter()
            .filter_map(|a| Some((a.name.clone(), r.ids.autobuyers.get(&a.name)?.id)))
            .collect();
        self.moving = Some(Moving { names, new, ids });
    }

    /// Every intent of a moving file's two names, while a move waits to be handed over.
    async fn moving_intents(&self) -> Option<Vec<IntentRow>> {
        let mv = self.moving.as_ref()?;
        let mut out = Vec::new();
        for name in mv.names {
            let filter = linkrunner::store::IntentFilter {
                campaign: Some(name.to_string()),
                ..Default::default()
            };
            let found = self.w.store().intents().find_intents(filter).await;
            out.extend(found.expect("intents"));
        }
        Some(out)
    }

    /// Once a step handed a move over (the journal records the new name): the moved
    /// autobuyers kept their ids, and nothing was sent for them ([`check::moved_not_restarted`]).
    async fn moved_as_declared(
        &mut self,
        before: Option<Vec<IntentRow>>,
        ledger: &Ledger,
    ) -> Check {
        let (Some(mv), Some(before)) = (&self.moving, before) else {
            return Ok(());
        };
        let Some(r) = self.recorded(mv.new).await else {
            return Ok(());
        };
        let after = self.moving_intents().await.unwrap_or_default();
        // Sent: a new intent, or another attempt of one (a rename re-keys the old name's
        // intents to the new name: that alone sends nothing).
        let attempts = |i: &IntentRow| before.iter().find(|b| b.id == i.id).map(|b| b.attempts);
        let sent: Vec<IntentRow> = after
            .into_iter()
            .filter(|i| attempts(i) != Some(i.attempts))
            .collect();
        check::moved_not_restarted(&mv.ids, &r, &sent, (ledger, &self.w.ledger()))?;
        self.moving = None;
        self.moves_checked += 1;
        Ok(())
    }

    /// A claimant is refused at every pass: the journal never records it.
    async fn no_claimant_recorded(&self) -> Check {
        let recorded = self.names_recorded().await;
        match steps::CLAIMANTS.iter().find(|c| recorded.contains(**c)) {
            Some(c) => Err(format!("the claimant {c} was recorded: {recorded:?}")),
            None => Ok(()),
        }
    }

    /// A pass; after it, every campaign it reports converged (or, removed, with nothing left
    /// to stop) has its autobuyers in the desired state; then the operator acts.
    async fn pass(&mut self, buy: bool, purchases_to_operator: bool) -> Check {
        self.clock.advance(chrono::Duration::milliseconds(10));
        let recorded = self.names_recorded().await;
        let reports = self
            .w
            .engine
            .pass(&campaigns::load(self.w.dir.path()), buy)
            .await
            .map_err(|e| format!("the pass failed: {e}"))?;
        // Time passes between passes: the settle grace runs out within three of them.
        self.clock.advance(chrono::Duration::milliseconds(700));
        self.refused_as_expected(&reports, &recorded)?;
        self.converged_as_desired(&reports, &recorded).await?;
        self.operate(purchases_to_operator).await;
        Ok(())
    }

    /// A pass of the replica, on the files as they were a step ago; then the operator acts.
    /// Its caps in force are those of the files it sees: `wanted` (the checks' files) takes
    /// the higher of the two per file.
    async fn replica_pass(
        &mut self,
        buy: bool,
        wanted: Vec<FileModel>,
    ) -> Result<Vec<FileModel>, String> {
        let recorded = self.names_recorded().await;
        let seen = &self.replica.as_ref().expect("the replica").seen;
        let seen = Model::effective_of(seen, &recorded);
        self.clock.advance(chrono::Duration::milliseconds(10));
        let r = self.replica.as_mut().expect("the replica");
        r.pass(buy).await?;
        self.clock.advance(chrono::Duration::milliseconds(700));
        self.operate(false).await;
        Ok(looser(&wanted, &seen))
    }

    /// A file renamed without the key, and a claimant, are blocked naming the campaign that
    /// owns the site and the key that would hand it over (`recorded`: before the pass).
    fn refused_as_expected(
        &mut self,
        reports: &[CampaignReport],
        recorded: &BTreeSet<String>,
    ) -> Check {
        let owner_of = |m: &FileModel| m.names.into_iter().find(|n| recorded.contains(*n));
        let mut expected: Vec<(&'static str, &'static str)> = Vec::new();
        for m in &self.files {
            if let Identity::Blocked(owner) = Model::state(m, recorded) {
                expected.push((m.name, owner));
                self.blocked_seen.insert(m.name);
            }
        }
        for &i in &self.claims {
            let owner = owner_of(&self.files[i]).ok_or("a claimant whose owner is not recorded")?;
            expected.push((self.files[i].claimant().name, owner));
        }
        for (name, owner) in expected {
            let Some(rep) = reports.iter().find(|r| r.campaign == name) else {
                return Err(format!("{name}: no report from the pass"));
            };
            let says = format!("`renamed_from: {owner}`");
            let detail = rep.detail.as_deref().unwrap_or_default();
            if rep.outcome != PassOutcome::Blocked || !detail.contains(&says) {
                return Err(format!(
                    "{name}: expected blocked naming {owner} ({says}), the pass reported {rep:?}"
                ));
            }
        }
        Ok(())
    }

    async fn converged_as_desired(
        &self,
        reports: &[CampaignReport],
        recorded: &BTreeSet<String>,
    ) -> Check {
        let ledger = self.w.ledger();
        for rep in reports {
            let Some(m) = self
                .files
                .iter()
                .find(|f| f.names.contains(&rep.campaign.as_str()))
            else {
                continue;
            };
            let Some(r) = self.recorded(&rep.campaign).await else {
                continue;
            };
            let m = &Model::as_recorded(m, &rep.campaign, recorded);
            let done = match rep.outcome {
                PassOutcome::Converged => true,
                PassOutcome::SpendingStopped if !m.present => {
                    r.uncertain.is_empty() && !plan::plan_removed(&rep.campaign, &r).has_changes()
                }
                _ => false,
            };
            if done {
                check::autobuyers_as_desired(&ledger, m, &r, &self.outside)
                    .map_err(|e| format!("after a pass reported {}: {e}", rep.outcome))?;
            }
        }
        Ok(())
    }

    /// A process crashes mid-pass: its future is dropped once the sandbox got `after` more
    /// requests. A new process takes over once the crashed one's leases expired.
    async fn crash(&mut self, buy: bool, after: u64) {
        let start = ledger::all_requests(&self.w.ledger());
        let (engine, campaigns) = (self.w.engine.clone(), campaigns::load(self.w.dir.path()));
        let task = tokio::spawn(async move { engine.pass(&campaigns, buy).await });
        while !task.is_finished() && ledger::all_requests(&self.w.ledger()) < start + after {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        task.abort();
        let _ = task.await;
        self.crashes += 1;
        let shared: SharedClock = self.clock.clone();
        self.w.engine = build_engine(
            self.w.store(),
            &self.w.sandbox.base_url(),
            &shared,
            self.how,
        )
        .await;
        self.clock
            .advance(settings().lease_ttl + chrono::Duration::seconds(1));
    }

    fn market(&mut self, m: &Market) {
        let sb = &self.w.sandbox;
        let faults = |f: Faults| sb.set_faults(f).expect("faults");
        let mut b = sb.behaviour();
        match m {
            Market::Calm => faults(Faults::default()),
            Market::CutAfterCommit(r) => faults(Faults {
                drop_after_commit_rate: *r,
                ..Faults::default()
            }),
            Market::ServerErrors(r) => faults(Faults {
                error_rate: *r,
                ..Faults::default()
            }),
            Market::RateLimit(n) => faults(Faults {
                rate_limit: Some(*n),
                ..Faults::default()
            }),
            Market::ErrorWithIds(r) => faults(Faults {
                executed_error_rate: *r,
                ..Faults::default()
            }),
            Market::List(size, paging) => {
                b.list_page_size = *size;
                b.list_paging = *paging;
            }
            Market::Lag(ms) => b.list_lag_ms = *ms,
            Market::AutobuyNow(n) => {
                sb.autobuy_now(*n);
            }
            Market::HandBuy(u) => {
                let url = &self.seeded.urls[*u];
                let project = self.seeded.project_id;
                if let Some(h) = sb.buy_by_hand(project, url.url_id, url.texts[0].1) {
                    self.outside.hand.insert(h.link_id);
                }
            }
            Market::LinkLeaves { nth, listed } => {
                let ledger = sb.ledger();
                let active: Vec<i64> = ledger
                    .purchases
                    .iter()
                    .filter(|p| p.status == LinkStatus::Active)
                    .map(|p| p.link_id)
                    .collect();
                if !active.is_empty() {
                    let id = active[nth % active.len()];
                    sb.set_link_status(id, LinkStatus::Removed, *listed)
                        .expect("link leaves");
                }
            }
        }
        self.set_behaviour(b);
    }

    fn set_behaviour(&mut self, b: Behaviour) {
        self.lag_ms = b.list_lag_ms;
        self.complete_list = b.list_page_size.is_none() || b.list_paging != ListPaging::None;
        self.w.sandbox.set_behaviour(b).expect("behaviour");
    }

    /// A calm marketplace whose list is provably complete (paging fields, no lag); passes until nothing is left to
    /// do (the operator settles what the engine leaves to one); then journal = ledger and
    /// every autobuyer in its desired state, except what the cap leaves unapplied.
    async fn checkpoint(&mut self) -> Check {
        let lag = self.lag_ms as i64;
        self.market(&Market::Calm);
        let mut b = self.w.sandbox.behaviour();
        b.list_lag_ms = 0;
        // Paging fields prove a read complete; a list without them never proves a held
        // link absent (docs/operating.md#settlement-what-the-link-list-proves: released by hand then), so the checkpoint pages.
        b.list_page_size = Some(b.list_page_size.unwrap_or(10));
        if b.list_paging == ListPaging::None {
            b.list_paging = ListPaging::PageTotal;
        }
        self.set_behaviour(b);
        let grace = settings().settle_grace;
        self.clock
            .advance(chrono::Duration::milliseconds(lag) + grace);
        for n in 0..CHECKPOINT_PASSES {
            let ledger = self.w.ledger();
            let before = self.money(&ledger).await;
            let wanted = self.effective(&self.names_recorded().await);
            let new_from = ledger.purchases.len();
            self.pass(false, n >= 2).await?;
            self.clock.advance(grace);
            let ledger = self.w.ledger();
            check::no_page_bought_twice(&ledger, new_from, (0, true), &self.outside.hand)?;
            check::one_project_per_site_and_page_per_url(&ledger, &self.outside.hand)?;
            let after = self.money(&ledger).await;
            check::money_within_cap(&wanted, &before, &after)?;
            if self.nothing_left().await {
                return self.journal_equals_ledger().await;
            }
        }
        Err(format!(
            "a calm marketplace did not settle in {CHECKPOINT_PASSES} passes"
        ))
    }

    /// Every recorded campaign of the files (a blocked rename is an expected state: its old
    /// name is a removed campaign, the new one is not recorded), with what each name's file
    /// wants of it.
    async fn each_recorded(&self) -> Vec<(&'static str, FileModel, Recorded)> {
        let recorded = self.names_recorded().await;
        let mut out = Vec::new();
        for m in &self.files {
            for name in check::names(m) {
                if let Some(r) = self.recorded(name).await {
                    out.push((name, Model::as_recorded(m, name, &recorded), r));
                }
            }
        }
        out
    }

    /// Nothing uncertain, no halt, no link leaving (released after the grace), and no plan
    /// with anything to do, for every campaign.
    async fn nothing_left(&self) -> bool {
        for (name, m, r) in self.each_recorded().await {
            let p = match (m.present, load_one(self.w.dir.path(), name)) {
                (true, Some(c)) => plan::plan_campaign(&c, &r, false),
                _ => plan::plan_removed(name, &r),
            };
            let leaving = r
                .held
                .iter()
                .any(|h| h.released.is_none() && h.leaving_since.is_some())
                || r.foreign
                    .iter()
                    .any(|f| f.released.is_none() && f.leaving_since.is_some());
            if !r.uncertain.is_empty() || !r.halts.is_empty() || p.has_changes() || leaving {
                return false;
            }
        }
        true
    }

    /// Journal = ledger for every recorded campaign; and each file's campaign is recorded
    /// under one name (a rename hands its record over, or is blocked).
    async fn journal_equals_ledger(&self) -> Check {
        let ledger = self.w.ledger();
        let all = self.each_recorded().await;
        let recorded = self.names_recorded().await;
        for m in &self.files {
            if Model::state(m, &recorded) == Identity::Live && !recorded.contains(m.name) {
                return Err(format!(
                    "{}: its file is present and not blocked, but the journal does not record it under that name: {recorded:?}",
                    m.name
                ));
            }
            let names: Vec<&str> = all
                .iter()
                .filter(|(_, f, _)| f.id() == m.id())
                .map(|(n, ..)| *n)
                .collect();
            if names.len() > 1 {
                return Err(format!(
                    "file {} is recorded under two names: {names:?}",
                    m.id()
                ));
            }
        }
        for (name, m, r) in &all {
            check::journal_equals_ledger(&ledger, m, r, &self.outside)?;
            let unapplied = match load_one(self.w.dir.path(), name) {
                Some(c) if m.present => !plan::plan_campaign(&c, r, false).unapplied.is_empty(),
                _ => false,
            };
            if !unapplied {
                check::autobuyers_as_desired(&ledger, m, r, &self.outside)
                    .map_err(|e| format!("at a checkpoint: {e}"))?;
            }
        }
        Ok(())
    }

    /// What an operator does: reads the plan of an adopted project and gives `resolve adopt`;
    /// looks at the marketplace (the ledger) and resolves each uncertain intent the engine
    /// leaves to one; purchases only when asked (at a checkpoint, once the engine had two
    /// passes with a complete list to settle them).
    async fn operate(&mut self, purchases: bool) {
        let ledger = self.w.ledger();
        let max = settings().max_attempts;
        for (name, m, r) in self.each_recorded().await {
            let m = &m;
            if r.ids.account.adoption_pending() {
                let word = ("model", "read the plan");
                let adopt = self.w.store().campaigns();
                adopt
                    .confirm_adoption(name, word.0, word.1, self.now())
                    .await
                    .expect("resolve adopt");
            }
            let projects = check::projects(&ledger, m);
            for i in &r.uncertain {
                if !check::waits_for_operator(i.kind, i.attempts, max, purchases) {
                    continue;
                }
                let resolution = truth(&ledger, &projects, &r, i, &self.outside.hand);
                self.w
                    .store()
                    .intents()
                    .resolve_intent(i.id, resolution, "checked the marketplace", self.now())
                    .await
                    .expect("resolve");
                self.resolved += 1;
            }
        }
    }
}

/// What the marketplace says about an uncertain intent: the autobuyer of that name the
/// journal does not know yet, the link of that page and URL, or nothing.
fn truth(
    ledger: &linkrunner_sandbox::Ledger,
    projects: &std::collections::HashSet<i64>,
    r: &Recorded,
    i: &IntentRow,
    hand: &std::collections::HashSet<i64>,
) -> Resolution {
    let get = |k: &str| i.request.get(k).and_then(|v| v.as_i64());
    let found = match i.kind {
        IntentKind::CreateAutobuyer => autobuyer_created_for(ledger, projects, r, i),
        IntentKind::Purchase => ledger
            .purchases
            .iter()
            .find(|p| {
                projects.contains(&p.project_id)
                    && p.autobuyer_id.is_none()
                    && !hand.contains(&p.link_id)
                    && Some(p.page_id) == get("page_id")
                    && Some(p.url_id) == get("url_id")
            })
            .map(|p| p.link_id),
        _ => None,
    };
    match found {
        Some(remote_id) => Resolution::Created { remote_id },
        None => Resolution::NotCreated,
    }
}

fn load_one(dir: &std::path::Path, name: &str) -> Option<linkrunner::campaign::Campaign> {
    campaigns::load(dir)
        .into_iter()
        .map(|lc| lc.campaign)
        .find(|c| c.name == name)
}

/// Per file, the one of `a` and `b` whose cap in force is the higher: what a step may reach
/// when a replica still sees the files as they were a step ago.
fn looser(a: &[FileModel], b: &[FileModel]) -> Vec<FileModel> {
    let cap = |m: &FileModel| match m.present && !m.paused {
        true => m.monthly,
        false => 0,
    };
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            if cap(y) > cap(x) {
                y.clone()
            } else {
                x.clone()
            }
        })
        .collect()
}

/// What a pass should do with a file's campaign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Identity {
    /// Recorded under its name, about to be (a rename handed over, a new campaign), or both.
    Live,
    /// Its file is removed (or it has another name now).
    Removed,
    /// Renamed without the key while the old name (here) is recorded: blocked, nothing
    /// created or bought, until the key is added or the old name comes back.
    Blocked(&'static str),
}

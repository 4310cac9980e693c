//! `linkrunner run`: the long-running daemon.
//!
//! Buy rounds fire on each campaign's schedule; the store's `claim_round` decides whether a
//! slot already ran, so restarts and replicas neither skip nor double a round. Campaigns are
//! reconciled (no buying) at start, when their files change, and every `reconcile_interval`.
//! The marketplace credentials are kept current by their own upkeep task (every second, and
//! at once on SIGHUP): see `market::credentials`.
//! On SIGTERM: stop starting steps, let in-flight calls finish and be recorded within the
//! grace period, exit 0.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use croner::Cron;
use tokio::net::TcpListener;
use tokio::sync::{Notify, RwLock, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::campaign::LoadedCampaign;
use crate::effects::Engine;
use crate::effects::pass::CampaignReport;
use crate::http::{self, AppState, Health};
use crate::market::Market;
use crate::views::overview::{FileFact, FileFacts};

use super::campaigns::{CampaignSet, ReloadSummary};
use super::signals::{self, ReloadCause};
use super::{gauges, schedule};

/// `--anomaly-multiple`'s default: above 2, which a window straddling midnight may see.
pub(crate) const DEFAULT_ANOMALY_MULTIPLE: f64 = 3.0;

/// How the daemon runs.
#[derive(Debug, Clone)]
pub struct DaemonOptions {
    /// The campaign files.
    pub campaigns_dir: PathBuf,
    /// Every campaign is reconciled (no buying) this often.
    pub reconcile_interval: Duration,
    /// How long in-flight steps may take to finish after shutdown.
    pub shutdown_grace: Duration,
    /// Buy rounds every this long instead of on the campaigns' schedules (demo, tests).
    pub round_every: Option<Duration>,
    /// Reload when a file in `campaigns_dir` changes.
    pub watch: bool,
    /// The anomaly brake halts a campaign, or the account, whose commitment or appearing
    /// links run above this multiple of what its schedules and budgets explain (0: off).
    pub anomaly_multiple: f64,
    /// Install SIGTERM/SIGINT/SIGHUP handlers (the binary, not tests in one process).
    pub signals: bool,
}

impl Default for DaemonOptions {
    /// `linkrunner run`'s defaults: `./campaigns` on their own schedules, reconciled every
    /// five minutes, a minute's grace, watched, with signal handlers.
    fn default() -> Self {
        DaemonOptions {
            campaigns_dir: PathBuf::from("campaigns"),
            reconcile_interval: Duration::from_secs(300),
            shutdown_grace: Duration::from_secs(60),
            round_every: None,
            watch: true,
            signals: true,
            anomaly_multiple: DEFAULT_ANOMALY_MULTIPLE,
        }
    }
}

/// What the daemon did, for the demo's progress lines and for tests.
#[derive(Debug, Clone)]
pub enum Event {
    Reloaded(ReloadSummary),
    Round {
        slot: DateTime<Utc>,
        report: CampaignReport,
    },
    Reconciled(Vec<CampaignReport>),
}

/// The running daemon, shared by its main loop and the round and reconciliation tasks.
pub(super) struct Daemon<M: Market> {
    pub(super) engine: Engine<M>,
    pub(super) opts: DaemonOptions,
    /// The campaigns loaded from `opts.campaigns_dir` (an invalid file's campaign is held).
    pub(super) set: RwLock<CampaignSet>,
    /// What `/readyz` reports: campaigns loaded, shutting down.
    pub(super) health: Arc<Health>,
    /// Per buying campaign: its schedule, and when its next round is due (checked every second;
    /// the store's `claim_round` decides whether that slot already ran).
    pub(super) next: Mutex<NextRounds>,
    /// The parsed schedules, shared by pattern (taken only under `next`'s lock).
    pub(super) patterns: Mutex<schedule::Patterns>,
    /// Campaigns whose round task is still running: a slot that comes due meanwhile starts
    /// no second task for the same campaign.
    pub(super) busy: Mutex<HashSet<String>>,
    /// Where [`Event`]s go (the demo's progress lines, tests); `None` in `run`.
    events: Option<mpsc::UnboundedSender<Event>>,
    /// Every round and reconciliation task, so shutdown can wait for them within the grace.
    pub(super) tracker: TaskTracker,
    /// SIGHUP: the credentials upkeep re-reads files (or logs in) at once.
    credentials_hup: Arc<Notify>,
    /// Which campaign to reconcile next (see `reconciler.rs`).
    pub(super) reconciler: super::turns::Reconciler,
    /// Buy rounds due and not started yet: reconciliation starts nothing meanwhile.
    pub(super) rounds_waiting: std::sync::atomic::AtomicUsize,
    /// A pass wrote intents since `linkrunner_intents` was last counted: the next tick (within
    /// a second) counts again, so the gauge follows the journal instead of waiting for the
    /// reconcile interval (it read 0 for minutes after a start on a fresh journal).
    intents_stale: AtomicBool,
    /// A count of intents is running: at most one at a time, however many passes end.
    intents_counting: Arc<AtomicBool>,
    /// Removals are held (or could not be judged): judged again every few seconds
    /// (`removals.rs`), so another process's `resolve removals` is honoured here too.
    pub(super) removals_unsettled: AtomicBool,
    /// The anomaly brake's checks (`brake.rs`).
    pub(super) brake: BrakeState,
}

/// The anomaly brake's checks (`brake.rs`): when it last checked, whether a pass wrote
/// since, whether a check runs. Kept here so `brake.rs` and this file do not import each other.
#[derive(Debug, Default)]
pub(super) struct BrakeState {
    pub(super) due: AtomicBool,
    pub(super) running: Arc<AtomicBool>,
    pub(super) last: Mutex<Option<tokio::time::Instant>>,
}

/// How often held removals are judged again (an operator's word given elsewhere, files back).
const REJUDGE_REMOVALS: Duration = Duration::from_secs(2);

/// Per buying campaign: its parsed schedule and when its next round is due.
pub(super) type NextRounds = HashMap<String, (Arc<Cron>, DateTime<Utc>)>;

/// The HTTP side of the daemon: its settings and listeners.
pub(crate) struct HttpSide {
    pub(crate) options: http::HttpOptions,
    /// The main port: the page, `/metrics`, the API, and the probes.
    pub(crate) listener: TcpListener,
    /// The probes' own port (`--probe-listen`), if any.
    pub(crate) probe: Option<TcpListener>,
}

/// Runs until `shutdown` is cancelled, serving HTTP on `listener`.
pub(crate) async fn run<M: Market>(
    engine: Engine<M>,
    opts: DaemonOptions,
    web: HttpSide,
    shutdown: CancellationToken,
    events: Option<mpsc::UnboundedSender<Event>>,
) -> anyhow::Result<()> {
    let health = Arc::new(Health::default());
    health.set_credentials_mode(engine.market().credentials_mode());
    let http_stop = CancellationToken::new();
    let state = AppState {
        metrics: engine.metrics().clone(),
        store: engine.store().clone(),
        health: health.clone(),
        clock: engine.clock().clone(),
    };
    let probe_addr = web.probe.as_ref().and_then(|l| l.local_addr().ok());
    let servers = serve_http(web, state, &http_stop);
    let d = Arc::new(Daemon {
        engine,
        opts,
        set: RwLock::new(CampaignSet::default()),
        health,
        next: Mutex::new(HashMap::new()),
        patterns: Mutex::default(),
        busy: Mutex::new(HashSet::new()),
        events,
        tracker: TaskTracker::new(),
        credentials_hup: Arc::new(Notify::new()),
        reconciler: Default::default(),
        rounds_waiting: Default::default(),
        intents_stale: AtomicBool::new(false),
        intents_counting: Arc::new(AtomicBool::new(false)),
        removals_unsettled: AtomicBool::new(false),
        brake: Default::default(),
    });
    // Each account's credentials are kept current on their own: one account's failing login
    // or unreadable file never delays another's refresh.
    let upkeep: Vec<_> = d
        .engine
        .markets()
        .map(|(_, market)| {
            tokio::spawn(credentials_upkeep(
                market.clone(),
                d.credentials_hup.clone(),
                shutdown.clone(),
            ))
        })
        .collect();
    let (reload_tx, reload_rx) = mpsc::channel(4);
    if d.opts.signals {
        signals::spawn_signal_handlers(shutdown.clone(), reload_tx.clone())?;
    }
    let _watch = if d.opts.watch {
        Some(signals::watch_dir(
            &d.opts.campaigns_dir,
            reload_tx.clone(),
        )?)
    } else {
        None
    };
    d.clone().main_loop(shutdown, reload_rx, probe_addr).await;
    for u in upkeep {
        u.abort();
    }
    d.drain().await;
    super::division::leave(&d.engine).await;
    http_stop.cancel();
    for s in servers {
        let _ = s.await;
    }
    Ok(())
}

/// The main port and, if given, the probe port, each with its own limits.
fn serve_http(
    web: HttpSide,
    state: AppState,
    stop: &CancellationToken,
) -> Vec<tokio::task::JoinHandle<std::io::Result<()>>> {
    let metrics = Some(state.metrics.clone());
    let mut servers = Vec::with_capacity(2);
    if let Some(probe) = web.probe {
        servers.push(tokio::spawn(http::serve_with(
            probe,
            http::probe_router(state.clone()),
            stop.clone(),
            web.options.probe,
            metrics.clone(),
            http::ListenerKind::Probe,
        )));
    }
    servers.push(tokio::spawn(http::serve_with(
        web.listener,
        http::router_with(state, web.options.access),
        stop.clone(),
        web.options.main,
        metrics,
        http::ListenerKind::Main,
    )));
    servers
}

/// Every second, what the credentials need (files re-read when changed, a token replaced
/// before it expires); at once on SIGHUP. Its own task: a slow login never delays rounds.
async fn credentials_upkeep<M: Market>(
    market: Arc<M>,
    hup: Arc<Notify>,
    shutdown: CancellationToken,
) {
    loop {
        let force = tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = hup.notified() => true,
            _ = tokio::time::sleep(Duration::from_secs(1)) => false,
        };
        market.maintain_credentials(force).await;
    }
}

impl<M: Market> Daemon<M> {
    async fn main_loop(
        self: Arc<Self>,
        shutdown: CancellationToken,
        mut reload_rx: mpsc::Receiver<ReloadCause>,
        probe_addr: Option<std::net::SocketAddr>,
    ) {
        // Which accounts this daemon works is known before anything is reconciled, then
        // looked at again every few seconds (`division.rs`).
        let mut held = super::division::Held::default();
        super::division::look(&self.engine, &mut held).await;
        let d = self.clone();
        let stop = shutdown.clone();
        self.tracker.spawn(async move {
            let every = super::division::look_every(&d.engine);
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(every) => {}
                }
                super::division::look(&d.engine, &mut held).await;
            }
        });
        self.reload().await;
        self.health.set_campaigns_loaded();
        signals::notify_ready(shutdown.clone(), probe_addr);
        self.refresh_all_gauges().await;
        self.warn_round_load().await;
        // At start every campaign is reconciled, including recorded ones whose file is gone,
        // then each again when its turn comes, within the rate limit (`reconciler.rs`).
        let d = self.clone();
        self.tracker
            .spawn(async move { d.reconcile_forever().await });
        let mut last_reconcile = tokio::time::Instant::now();
        let mut last_removals = tokio::time::Instant::now();
        // An interval, not a sleep in the select: reload requests must not postpone the tick.
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                Some(cause) = reload_rx.recv() => {
                    if cause == ReloadCause::Signal {
                        signals::notify_reloading(false);
                        // Every account's upkeep task; one busy refreshing sees its files
                        // again within the second anyway.
                        self.credentials_hup.notify_waiters();
                    }
                    let changed = self.reload().await;
                    if cause == ReloadCause::Signal { signals::notify_reloading(true); }
                    self.reconcile_changed(changed).await;
                }
                _ = tick.tick() => {
                    self.reload_on_new_accounts().await;
                    self.fire_due_rounds().await;
                    if last_removals.elapsed() >= REJUDGE_REMOVALS {
                        last_removals = tokio::time::Instant::now();
                        self.rejudge_held_removals().await;
                    }
                    if last_reconcile.elapsed() >= self.opts.reconcile_interval {
                        last_reconcile = tokio::time::Instant::now();
                        // Also what another process (`resolve`, a replica) wrote meanwhile.
                        self.intents_changed();
                    }
                    if self.intents_stale.load(Ordering::Acquire) {
                        self.spawn_intents_count();
                    }
                    self.maybe_check_brake();
                }
            }
        }
    }

    /// Reloads the campaign directory. Returns the campaigns to reconcile: those whose file
    /// changed or is new, or `None` (all, and the removed ones) when a file disappeared.
    async fn reload(&self) -> Option<Vec<String>> {
        // The removals are judged before the set is let go: no reconciliation may remove a
        // campaign whose removal is about to be held.
        let summary = {
            let mut set = self.set.write().await;
            let accounts = self
                .engine
                .markets()
                .map(|(id, _)| id.to_string())
                .collect();
            let worked = self.engine.worked();
            let mut summary = set.reload(&self.opts.campaigns_dir, &accounts, worked);
            summary.removal_held = self.judge_removals(&mut set).await;
            summary
        };
        for p in &summary.problems {
            tracing::error!(path = %p.path.display(), line = p.line, column = p.column, message = %p.message, "campaign file rejected; its campaign is held as recorded (nothing stopped or bought) until the file is fixed or removed");
        }
        let outcome = if summary.ok() { "succeeded" } else { "failed" };
        self.engine
            .metrics()
            .reloads_total
            .with_label_values(&[outcome])
            .inc();
        self.engine
            .metrics()
            .campaigns_loaded
            .set(summary.loaded as i64);
        let rejected: std::collections::BTreeSet<_> =
            summary.problems.iter().map(|p| &p.path).collect();
        self.engine
            .metrics()
            .campaign_files_rejected
            .set(rejected.len() as i64);
        self.engine
            .metrics()
            .campaign_file_invalid
            .set(summary.invalid_files as i64);
        tracing::info!(
            loaded = summary.loaded,
            changed = summary.changed.len(),
            held = summary.held.len(),
            problems = summary.problems.len(),
            "campaigns loaded"
        );
        let set = self.set.read().await;
        self.publish_files(&set);
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        next.retain(|name, _| set.get(name).is_some());
        for lc in set.iter() {
            self.schedule_campaign(&mut next, lc, summary.changed.contains(&lc.campaign.name));
        }
        self.publish_next_rounds(&next);
        let to_reconcile = if summary.removed.is_empty() {
            Some(summary.changed.clone())
        } else {
            None
        };
        self.emit(Event::Reloaded(summary));
        to_reconcile
    }

    /// When the accounts this process works changed since the set was loaded (the division
    /// gave or took one), reloads: an account taken has its campaigns held (and reconciled
    /// first) before any pass of them runs here; an account given back lets go of its
    /// campaigns' memory. Until then a campaign of an account taken is only known to have a
    /// file ([`CampaignSet::elsewhere`]): never reconciled as removed.
    async fn reload_on_new_accounts(&self) {
        let worked = self.engine.worked();
        if *self.set.read().await.loaded_for() == worked {
            return;
        }
        tracing::info!("the accounts this daemon works changed: the campaign files are read again");
        let changed = self.reload().await;
        self.reconcile_changed(changed).await;
    }

    /// Tells `/api/v1/campaigns` and the page what the files say. With every file valid and no
    /// removal held the set is complete: a campaign not in it has no file (removed). An invalid
    /// file may be any held campaign's, so then none is said removed.
    pub(super) fn publish_files(&self, set: &CampaignSet) {
        let paused = set.paused().map(|(n, p)| (n.to_string(), p)).collect();
        let complete = set.invalid().is_empty();
        self.health.set_files(FileFacts::read(paused, complete));
    }

    /// After a reload: the changed campaigns go first; when a file disappeared, the
    /// campaigns recorded without a file (their autobuyers stop) go first too.
    pub(super) async fn reconcile_changed(&self, changed: Option<Vec<String>>) {
        self.refresh_roster().await;
        let urgent = match changed {
            Some(names) => names,
            None => {
                let recorded = self.recorded_campaigns().await;
                let set = self.set.read().await;
                recorded
                    .into_iter()
                    .filter(|n| set.get(n).is_none())
                    .collect()
            }
        };
        self.reconciler.urgent(&urgent);
        self.warn_round_load().await;
    }

    /// Warns when the scheduled buy rounds of a slot need more calls than `--rate-limit`
    /// carries within a minute of it (they would start late), or before the next slot.
    async fn warn_round_load(&self) {
        let Some(rate) = self.engine.rate_limit() else {
            return;
        };
        if self.opts.round_every.is_some() {
            return;
        }
        let set = self.set.read().await;
        let campaigns: Vec<&crate::campaign::Campaign> = set.iter().map(|c| &c.campaign).collect();
        let now = self.engine.clock().now();
        for w in crate::decide::capacity::round_warnings(&campaigns, now, rate) {
            tracing::warn!("{w}");
        }
    }

    /// Tells the status page when each campaign's next round is due.
    pub(super) fn publish_next_rounds(&self, next: &NextRounds) {
        let due = next.iter().map(|(n, (_, at))| (n.clone(), *at)).collect();
        self.health.set_next_rounds(due);
    }

    fn schedule_campaign(&self, next: &mut NextRounds, lc: &LoadedCampaign, changed: bool) {
        let name = &lc.campaign.name;
        if !changed && next.contains_key(name) {
            return;
        }
        let Some(pattern) =
            crate::decide::anomaly::trigger_pattern(&lc.campaign, self.opts.round_every)
        else {
            next.remove(name);
            return;
        };
        let parsed = self
            .patterns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .parse(&pattern);
        match parsed {
            // First check at the latest past slot: the round task asks the store whether it ran.
            Ok(cron) => {
                let first = cron
                    .find_previous_occurrence(&self.engine.clock().now(), true)
                    .unwrap_or_else(|_| self.engine.clock().now());
                next.insert(name.clone(), (cron, first));
            }
            Err(e) => tracing::error!(campaign = %name, error = %e, "schedule not usable"),
        }
    }

    pub(super) fn emit(&self, e: Event) {
        if let Some(tx) = &self.events {
            let _ = tx.send(e);
        }
    }

    /// A pass may have written intents: `linkrunner_intents` is counted again within a second.
    pub(super) fn intents_changed(&self) {
        self.intents_stale.store(true, Ordering::Release);
        self.brake.due.store(true, Ordering::Release);
    }

    /// Counts intents for `linkrunner_intents` in a task of its own (one aggregate query),
    /// unless a count is already running (then the next tick tries again).
    fn spawn_intents_count(&self) {
        if self.intents_counting.swap(true, Ordering::AcqRel) {
            return;
        }
        self.intents_stale.store(false, Ordering::Release);
        let (e, counting) = (self.engine.clone(), self.intents_counting.clone());
        self.tracker.spawn(async move {
            gauges::refresh_intents(&e).await;
            counting.store(false, Ordering::Release);
        });
    }

    /// The campaigns the journal knows. A database error reads as none, logged and counted:
    /// the next roster refresh, reload or gauge refresh reads them again (campaigns whose
    /// file is gone are reconciled then).
    pub(super) async fn recorded_campaigns(&self) -> Vec<String> {
        let read = self.engine.store().campaigns().campaign_names().await;
        self.recorded_or_none(read)
    }

    /// What a read of the recorded campaigns found; none, logged and counted, on an error.
    pub(super) fn recorded_or_none<T>(
        &self,
        read: Result<Vec<T>, crate::store::StoreError>,
    ) -> Vec<T> {
        match read {
            Ok(rows) => rows,
            Err(e) => {
                self.engine.metrics().database_errors_total.inc();
                tracing::warn!(error = %e, "could not read the recorded campaigns; removed files are reconciled later");
                Vec::new()
            }
        }
    }

    async fn refresh_all_gauges(&self) {
        let names = self.recorded_campaigns().await;
        let campaigns: Vec<(String, FileFact)> = {
            let set = self.set.read().await;
            names
                .into_iter()
                .map(|n| {
                    let file = set.file_fact(&n);
                    (n, file)
                })
                .collect()
        };
        gauges::refresh_campaigns(&self.engine, &campaigns).await;
        gauges::refresh_intents(&self.engine).await;
    }
}

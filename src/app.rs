//! `app`: the one place that wires linkrunner together — metrics, the journal (connected,
//! migrated, reporting to the metrics), the marketplace client and the engine — and runs the
//! daemon around it. `run`, `once`, `demo`, `bench` and the tests all build through
//! [`App::build`]; `plan`, `status`, `resolve` and `migrate` need only [`open_journal`].
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use linkrunner::app::{self, App, AppSettings, Journal};
//!
//! let market = app::client_config("http://127.0.0.1:8480", "token", "ticket")?;
//! let mut settings = AppSettings::new(Journal::Url("sqlite://journal.db".into()), market);
//! settings.daemon.campaigns_dir = "campaigns".into();
//! let app = App::build(settings).await?;
//! // Either one pass now, through the engine, over the loaded campaigns ...
//! let loaded = linkrunner::campaign::load_dir(std::path::Path::new("campaigns"));
//! let _reports = app.engine().pass(&loaded.campaigns, false).await?;
//! // ... or the daemon until the token is cancelled (port 0 in tests).
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let shutdown = tokio_util::sync::CancellationToken::new();
//! app.run_until_stopped(listener, shutdown, None).await?;
//! # Ok(()) }
//! ```
//!
//! | [`AppSettings`] field | default from [`AppSettings::new`] |
//! |---|---|
//! | `journal` | given: [`Journal::Url`] (connect and migrate) or [`Journal::Open`] (an open store, e.g. shared by two engines in a test) |
//! | `market` | given: a [`ClientConfig`]; [`client_config`] makes one for a base URL, token and ticket |
//! | `accounts` | none: the deployment's other accounts, each an id and a [`ClientConfig`] ([`AccountSettings`]) |
//! | `engine` | [`EngineSettings::default`] |
//! | `clock` | the system clock |
//! | `daemon` | [`DaemonOptions::default`]: `./campaigns`, watched, signal handlers on |
//! | `http` | [`HttpOptions::default`]: loopback names and IP literals, no token, default connection caps |
//! | `notify` | `None`: no notifications; a [`NotifySettings`] (`--notify-file`) sends them beside the daemon |
//!
//! Every [`App`] has its own [`Metrics`] registry, shared by the journal, the client and the
//! engine, and its own holder id: two apps on one journal behave as two processes.
//!
//! May import: crate::campaign, crate::daemon, crate::decide, crate::effects, crate::http, crate::market, crate::metrics, crate::notify, crate::store, crate::telemetry, crate::views.

use std::sync::Arc;

use anyhow::Context as _;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::daemon::run::{DaemonOptions, Event, HttpSide, run};
use crate::decide::listing::UnpagedList;
use crate::effects::{Engine, EngineSettings};
use crate::http::HttpOptions;
use crate::market::{ClientConfig, Credentials, MarketClient};
use crate::metrics::Metrics;
use crate::notify::{Notifier, NotifyContext, NotifySettings};
use crate::store::Store;
use linkrunner_domain::account::DEFAULT_ACCOUNT;
use linkrunner_domain::clock::{self, SharedClock};

/// Where the journal is.
#[derive(Debug)]
pub enum Journal {
    /// `sqlite://FILE` or `postgres://…`: connected and migrated by [`App::build`].
    Url(String),
    /// A store the caller already opened and migrated (shared, for instance, by two apps).
    Open(Store),
}

/// Everything [`App::build`] needs. Secrets travel inside `market` and `accounts`.
pub struct AppSettings {
    journal: Journal,
    /// The default account's client: every campaign that names no `account`.
    pub market: ClientConfig,
    /// The deployment's other accounts (`--account-file`), each with its own client: a
    /// campaign's `account: ID` sends its calls through the client of that id.
    pub accounts: Vec<AccountSettings>,
    pub engine: EngineSettings,
    pub clock: SharedClock,
    /// How [`App::run_until_stopped`] runs the daemon; unused by a single pass.
    pub daemon: DaemonOptions,
    /// Who may read the daemon's HTTP endpoint, and what its listeners hold.
    pub(crate) http: HttpOptions,
    /// Where notifications go (`--notify-file`); `None`: nowhere. Only the daemon sends them.
    pub notify: Option<NotifySettings>,
}

impl AppSettings {
    /// The given journal and client; defaults for the engine, the clock and the daemon.
    pub fn new(journal: Journal, market: ClientConfig) -> AppSettings {
        AppSettings {
            journal,
            market,
            accounts: Vec::new(),
            engine: EngineSettings::default(),
            clock: clock::system(),
            daemon: DaemonOptions::default(),
            http: HttpOptions::default(),
            notify: None,
        }
    }
}

/// One more marketplace account of the deployment: its id (what campaigns name with
/// `account:`) and its client. Its cap is the journal's, set per account.
pub struct AccountSettings {
    pub id: String,
    pub market: ClientConfig,
    /// What its link list shows without paging fields; `None`: the engine's
    /// (`--unpaged-link-list`).
    pub unpaged_list: Option<UnpagedList>,
}

/// The wired application: an engine over the real marketplace client, and how to run the
/// daemon around it.
pub struct App {
    engine: Engine<MarketClient>,
    daemon: DaemonOptions,
    http: HttpOptions,
    notify: Option<NotifySettings>,
}

impl App {
    /// Metrics, then the journal (connected and migrated, or given), then the client, then
    /// the engine. Errors say which of them failed.
    pub async fn build(settings: AppSettings) -> anyhow::Result<App> {
        let metrics = Arc::new(Metrics::new());
        let store = match settings.journal {
            Journal::Url(url) => open_journal(&url, &metrics).await?,
            Journal::Open(mut store) => {
                store.set_metrics(metrics.clone());
                store
            }
        };
        let mut engine_settings = settings.engine;
        if engine_settings.campaign_concurrency == 0 {
            engine_settings.campaign_concurrency = crate::effects::default_campaign_concurrency(
                // Every account's requests in flight: campaigns of one account never
                // hold back another's.
                settings.market.max_concurrency
                    + settings
                        .accounts
                        .iter()
                        .map(|a| a.market.max_concurrency)
                        .sum::<usize>(),
            );
        }
        let mut markets = vec![(
            DEFAULT_ACCOUNT.to_string(),
            Arc::new(
                market_client(settings.market, &metrics)
                    .context("building the marketplace client")?,
            ),
        )];
        for a in settings.accounts {
            anyhow::ensure!(
                linkrunner_domain::account::valid_id(&a.id)
                    && !markets.iter().any(|(id, _)| *id == a.id),
                "account id `{}` is not valid or not unique (ids are 1 to 63 lowercase letters, digits or `-`; `default` is the command line's account)",
                a.id
            );
            if let Some(u) = a.unpaged_list {
                engine_settings.unpaged_list_of.insert(a.id.clone(), u);
            }
            let mut config = a.market;
            config.account = a.id.clone();
            let client = market_client(config, &metrics)
                .with_context(|| format!("building the marketplace client of account {}", a.id))?;
            markets.push((a.id, Arc::new(client)));
        }
        let engine =
            Engine::with_accounts(markets, store, settings.clock, metrics, engine_settings);
        Ok(App {
            engine,
            daemon: settings.daemon,
            http: settings.http,
            notify: settings.notify,
        })
    }

    /// The engine, for a single pass (`once`, `bench`, tests) or to read its store and metrics.
    pub fn engine(&self) -> &Engine<MarketClient> {
        &self.engine
    }

    pub fn into_engine(self) -> Engine<MarketClient> {
        self.engine
    }

    /// The daemon: buy rounds on schedule, reloads, HTTP on `listener`, until `shutdown` is
    /// cancelled (or SIGTERM, when `daemon.signals`). `events`, if given, receives what it did.
    pub async fn run_until_stopped(
        self,
        listener: TcpListener,
        shutdown: CancellationToken,
        events: Option<mpsc::UnboundedSender<Event>>,
    ) -> anyhow::Result<()> {
        self.run_with_probe(listener, None, shutdown, events).await
    }

    /// As [`App::run_until_stopped`], with `/healthz` and `/readyz` also on `probe`, a
    /// listener of their own with its own connection cap.
    pub(crate) async fn run_with_probe(
        self,
        listener: TcpListener,
        probe: Option<TcpListener>,
        shutdown: CancellationToken,
        events: Option<mpsc::UnboundedSender<Event>>,
    ) -> anyhow::Result<()> {
        let web = HttpSide {
            options: self.http,
            listener,
            probe,
        };
        // Beside the daemon, not in it: the notifier reads the journal on its own clock and
        // no pass waits for it or for a receiver.
        let notifier = match self.notify {
            Some(settings) => Some(Notifier::start(
                settings,
                NotifyContext {
                    store: self.engine.store().clone(),
                    clock: self.engine.clock().clone(),
                    metrics: self.engine.metrics().clone(),
                    holder: self.engine.holder().to_string(),
                    settle_grace: self.engine.settings().settle_grace,
                },
            )?),
            None => None,
        };
        let done = run(self.engine, self.daemon, web, shutdown, events).await;
        if let Some(n) = notifier {
            n.stop().await;
        }
        done
    }
}

/// Opens the journal at `url`, brings its schema up to date, and reports to `metrics`.
pub async fn open_journal(url: &str, metrics: &Arc<Metrics>) -> anyhow::Result<Store> {
    let mut store = Store::connect(url)
        .await
        .context("opening the journal database")?;
    store
        .migrate()
        .await
        .context("migrating the journal database")?;
    store.set_metrics(metrics.clone());
    Ok(store)
}

/// The marketplace client for `config`, reporting to `metrics`: the one place a client is
/// built, so `run`, `once`, `import` and `probe` send requests with the same limits, headers
/// and redaction.
pub(crate) fn market_client(
    config: ClientConfig,
    metrics: &Arc<Metrics>,
) -> Result<MarketClient, crate::market::BuildError> {
    MarketClient::new(config, metrics.clone())
}

/// A client configuration with default limits for `base_url` and these credentials (the
/// sandbox's, in the demo, benchmarks and tests).
pub fn client_config(base_url: &str, token: &str, ticket: &str) -> anyhow::Result<ClientConfig> {
    let credentials = Credentials::new(token.to_string().into(), ticket.to_string().into())
        .context("marketplace credentials")?;
    ClientConfig::new(base_url, credentials).context("marketplace base URL")
}

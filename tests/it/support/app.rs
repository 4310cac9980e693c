//! The application under test, in this process, built by `linkrunner::app::App::build` as
//! the binary builds it: the engine alone ([`build`]) or the daemon around it
//! ([`InProcess`]), from [`settings`] that make it fast enough for a test ([`fast_settings`],
//! [`client_config`]).

use std::net::SocketAddr;
use std::time::Duration;

use chrono::{DateTime, Utc};
use linkrunner::app::{self, App};
pub use linkrunner::app::{AppSettings, Journal};
use linkrunner::daemon::run::Event;
use linkrunner::effects::{Engine, EngineSettings};
use linkrunner::market::{ClientConfig, MarketClient};
use linkrunner::store::Store;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::http::http_get;
use super::wait::PATIENCE;

/// The engine times every test runs with, in-process and in the binary (see
/// [`super::binary::Linkrunner::engine`]): short search polls, and no settle grace, because
/// the sandbox lists a link as soon as it sells it. A suite that needs another value says
/// so with `EngineSettings { x, ..fast_settings() }` and why.
pub fn fast_settings() -> EngineSettings {
    EngineSettings {
        poll_initial: Duration::from_millis(20),
        poll_max: Duration::from_millis(100),
        settle_grace: chrono::Duration::zero(),
        ..EngineSettings::default()
    }
}

/// Client limits no test is throttled by unless it means to be: 200 requests/s, 8 in
/// flight, 10 s per request.
pub const RATE_LIMIT: u32 = 200;
pub const MAX_CONCURRENCY: usize = 8;
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// A marketplace client configuration for `base_url` with these credentials and the limits
/// above.
pub fn client_config(base_url: &str, token: &str, ticket: &str) -> ClientConfig {
    let mut config = app::client_config(base_url, token, ticket).expect("client config");
    config.rate_limit = std::num::NonZeroU32::new(RATE_LIMIT).expect("non-zero");
    config.max_concurrency = MAX_CONCURRENCY;
    config.request_timeout = REQUEST_TIMEOUT;
    config
}

/// What one application in a test is built from: this journal and client, the fast
/// settings, the system clock, and a daemon that installs no signal handlers (the test
/// process's signals are the test runner's). A test changes the fields it is about.
pub fn settings(journal: Journal, market: ClientConfig) -> AppSettings {
    let mut settings = AppSettings::new(journal, market);
    settings.engine = fast_settings();
    settings.daemon.signals = false;
    settings
}

/// The engine over the real marketplace client, built by [`App::build`] as `linkrunner run`
/// and `once` build it. Every test that runs the engine in-process builds it here.
pub async fn build(settings: AppSettings) -> Engine<MarketClient> {
    App::build(settings)
        .await
        .expect("the app builds")
        .into_engine()
}

/// The daemon (`linkrunner run`'s loop) in this process, serving HTTP on a port of its own,
/// until [`InProcess::stop`].
pub struct InProcess {
    pub addr: SocketAddr,
    /// `http://ADDR`.
    pub base: String,
    /// The daemon's journal (another handle on the same pool).
    pub store: Store,
    /// What the daemon did: reloads, rounds, reconciliations.
    pub events: mpsc::UnboundedReceiver<Event>,
    shutdown: CancellationToken,
    task: JoinHandle<anyhow::Result<()>>,
}

impl InProcess {
    /// [`App::build`], then [`App::run_until_stopped`] with `settings.daemon`.
    pub async fn start(settings: AppSettings) -> InProcess {
        let app = App::build(settings).await.expect("the app builds");
        let store = app.engine().store().clone();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("http port");
        let addr = listener.local_addr().expect("addr");
        let shutdown = CancellationToken::new();
        let (tx, events) = mpsc::unbounded_channel();
        let run = app.run_until_stopped(listener, shutdown.clone(), Some(tx));
        InProcess {
            addr,
            base: format!("http://{addr}"),
            store,
            events,
            shutdown,
            task: tokio::spawn(run),
        }
    }

    pub fn is_running(&self) -> bool {
        !self.task.is_finished()
    }

    /// Stops the daemon as SIGTERM would, and waits for it to end without error.
    pub async fn stop(self) {
        self.shutdown.cancel();
        tokio::time::timeout(PATIENCE, self.task)
            .await
            .expect("daemon stops within the patience")
            .expect("daemon task did not panic")
            .expect("daemon ended without error");
    }

    /// The first event that `pick` accepts; earlier events are dropped.
    pub async fn next_event<T>(&mut self, mut pick: impl FnMut(&Event) -> Option<T>) -> T {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Ok(Some(e)) => {
                    if let Some(t) = pick(&e) {
                        return t;
                    }
                }
                Ok(None) => panic!("the daemon stopped sending events"),
                Err(_) => panic!("no such event within {PATIENCE:?}"),
            }
        }
    }

    /// Every event that arrived so far, without waiting.
    pub fn drain_events(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        while let Ok(e) = self.events.try_recv() {
            out.push(e);
        }
        out
    }

    /// The buy round of `campaign` that finished next: its slot and links bought.
    pub async fn next_round(&mut self, campaign: &str) -> (DateTime<Utc>, u32) {
        self.next_event(|e| match e {
            Event::Round { slot, report } if report.campaign == campaign => {
                Some((*slot, report.bought))
            }
            _ => None,
        })
        .await
    }

    pub async fn metrics_body(&self) -> String {
        let (status, body) = http_get(self.addr, "/metrics")
            .await
            .expect("/metrics answers");
        assert_eq!(status, 200, "{body}");
        body
    }
}

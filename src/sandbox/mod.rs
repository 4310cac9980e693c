//! `sandbox/`: an in-repo marketplace that behaves like a strict real server of
//! `marketplace-api.md`, for tests, demos, dry runs and benchmarks.
//!
//! | file | concept |
//! |---|---|
//! | [`config`] | [`SandboxConfig`], [`SandboxAuth`] |
//! | `server.rs`, `cut.rs` | the request pipeline: latency, rate limit, auth, injected faults, answers cut short |
//! | `routes.rs` | the ten operations at the spec's paths, plus `__sandbox/ledger` and `__sandbox/faults` |
//! | `wire.rs`, `render.rs` | request bodies in, answers out in the configured [`Shape`] |
//! | `state.rs`, `search.rs`, `buy.rs`, `autobuy.rs` | the marketplace's state and rules |
//! | [`faults`], [`shapes`], [`ledger`], [`ops`] | fault settings, answer shapes, the ledger snapshot, operation names |
//! | [`cli`] | `linkrunner sandbox` |
//!
//! Start one on port 0 with [`spawn`]; read what happened with [`SandboxHandle::ledger`].

mod autobuy;
mod buy;
pub mod cli;
pub mod config;
mod cut;
pub mod faults;
pub mod ledger;
pub mod ops;
mod render;
mod routes;
mod search;
mod server;
pub mod shapes;
mod state;
mod validate;
mod wire;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use autobuy::AutobuyerUrl;
pub use config::{SandboxAuth, SandboxConfig};
pub use faults::Faults;
pub use ledger::{AutobuyerRecord, AutobuyerState, Ledger, Purchase};
pub use ops::Op;
pub use shapes::Shape;

use server::Shared;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "sandbox prefix `{0}` must be empty or start with `/` and not end with `/` (e.g. /api)"
    )]
    Prefix(String),
    #[error("sandbox faults: {0}")]
    Faults(String),
    #[error("sandbox cannot listen on {addr}: {source}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
}

/// A running sandbox. Dropping it stops the server too.
#[derive(Debug)]
pub struct SandboxHandle {
    addr: SocketAddr,
    prefix: String,
    shared: Arc<Shared>,
    cancel: CancellationToken,
    task: Option<JoinHandle<()>>,
}

/// Serves the sandbox on `listener` in the background.
pub async fn spawn(
    config: SandboxConfig,
    listener: TcpListener,
) -> Result<SandboxHandle, SandboxError> {
    let prefix = config.prefix.clone();
    if !prefix.is_empty() && (!prefix.starts_with('/') || prefix.ends_with('/')) {
        return Err(SandboxError::Prefix(prefix));
    }
    config.faults.validate().map_err(SandboxError::Faults)?;
    let addr = listener
        .local_addr()
        .map_err(|source| SandboxError::Listen {
            addr: "the given listener".into(),
            source,
        })?;
    let shared = Shared::new(&config);
    let app = routes::router(shared.clone(), &prefix, config.body_limit);
    let cancel = CancellationToken::new();
    let stop = cancel.clone().cancelled_owned();
    let task = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app)
            .with_graceful_shutdown(stop)
            .await
        {
            tracing::error!(error = %e, "sandbox server stopped");
        }
    });
    Ok(SandboxHandle {
        addr,
        prefix,
        shared,
        cancel,
        task: Some(task),
    })
}

/// Binds `addr` (port 0 for any free port) and serves the sandbox there.
pub async fn start(config: SandboxConfig, addr: SocketAddr) -> Result<SandboxHandle, SandboxError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| SandboxError::Listen {
            addr: addr.to_string(),
            source,
        })?;
    spawn(config, listener).await
}

impl SandboxHandle {
    /// `http://127.0.0.1:PORT` plus the prefix: what a client's base URL should be.
    pub fn base_url(&self) -> String {
        format!("http://{}{}", self.addr, self.prefix)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A snapshot of everything the sandbox saw and did so far.
    pub fn ledger(&self) -> Ledger {
        self.shared.world().ledger()
    }

    pub fn faults(&self) -> Faults {
        self.shared.faults().faults().clone()
    }

    /// Changes the faults from the next request on; the fault PRNG keeps its position.
    pub fn set_faults(&self, faults: Faults) -> Result<(), SandboxError> {
        faults.validate().map_err(SandboxError::Faults)?;
        self.shared.faults().set(faults);
        Ok(())
    }

    /// Stops accepting, lets calls in flight finish (up to 5 s), then returns.
    pub async fn shutdown(mut self) {
        self.cancel.cancel();
        if let Some(task) = self.task.take() {
            let abort = task.abort_handle();
            if tokio::time::timeout(Duration::from_secs(5), task)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
    }
}

impl Drop for SandboxHandle {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

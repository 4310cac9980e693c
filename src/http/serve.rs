//! The accept loop: hyper's HTTP/1 server with everything a connection may hold bounded —
//! how long its head may take to arrive (idle and slow clients are cut off), how many
//! connections a listener keeps open (past the cap a new one is closed at once, never left
//! waiting in the kernel's backlog where it would delay a probe behind it), and how long one
//! connection may live. Each listener has its own [`ServeLimits`], so 1,000 slow clients on
//! the main port cannot reach the probe port's slots. Stops gracefully on the shutdown token.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use prometheus::{IntCounter, IntGauge};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::metrics::Metrics;

/// What one listener holds at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeLimits {
    /// Connections open at once; one more is closed as soon as it is accepted.
    pub(crate) max_connections: usize,
    /// The time a client has to send a request head, counted from the connection's start
    /// or the end of the previous answer: a client idle or slower than this is cut off.
    header_read_timeout: Duration,
    /// A connection is asked to close after this long (then given 5 s), so a client that
    /// keeps a connection busy forever still gives its slot back.
    max_connection_age: Duration,
}

impl ServeLimits {
    /// The main port: the status page, `/metrics`, the API.
    pub(crate) const MAIN: ServeLimits = ServeLimits {
        max_connections: 512,
        header_read_timeout: Duration::from_secs(5),
        max_connection_age: Duration::from_secs(300),
    };
    /// The probe port: `/healthz` and `/readyz` only, asked by a kubelet or the watchdog.
    pub(crate) const PROBE: ServeLimits = ServeLimits {
        max_connections: 32,
        header_read_timeout: Duration::from_secs(2),
        max_connection_age: Duration::from_secs(60),
    };
}

/// Which listener, as the metrics' `listener` label says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListenerKind {
    Main,
    Probe,
}

impl ListenerKind {
    fn label(self) -> &'static str {
        match self {
            ListenerKind::Main => "main",
            ListenerKind::Probe => "probe",
        }
    }
}

/// The gauges and counters one listener reports to (none in tests that pass no registry).
#[derive(Clone)]
struct Counters {
    open: Option<IntGauge>,
    refused: Option<IntCounter>,
}

impl Counters {
    fn of(metrics: Option<&Metrics>, kind: ListenerKind) -> Counters {
        let l = [kind.label()];
        Counters {
            open: metrics.map(|m| m.http.connections.with_label_values(&l)),
            refused: metrics.map(|m| m.http.connections_refused_total.with_label_values(&l)),
        }
    }
}

/// Serves `app` with the main port's limits until `shutdown` is cancelled.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    serve_with(
        listener,
        app,
        shutdown,
        ServeLimits::MAIN,
        None,
        ListenerKind::Main,
    )
    .await
}

/// Serves `app` under `limits` until `shutdown` is cancelled, then waits (bounded) for open
/// requests. Connections past the cap are counted in `metrics` and closed unanswered.
pub async fn serve_with(
    listener: TcpListener,
    app: Router,
    shutdown: CancellationToken,
    limits: ServeLimits,
    metrics: Option<Arc<Metrics>>,
    kind: ListenerKind,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let counters = Counters::of(metrics.as_deref(), kind);
    let tracker = TaskTracker::new();
    loop {
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((s, _)) => s,
                Err(e) => {
                    // Out of file descriptors, most often: let some close before retrying.
                    tracing::debug!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = shutdown.cancelled() => break,
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            if let Some(c) = &counters.refused {
                c.inc();
            }
            drop(stream);
            continue;
        };
        let conn = connection(stream, app.clone(), shutdown.clone(), limits, permit);
        let open = counters.open.clone();
        tracker.spawn(async move {
            if let Some(g) = &open {
                g.inc();
            }
            conn.await;
            if let Some(g) = &open {
                g.dec();
            }
        });
    }
    tracker.close();
    let _ = tokio::time::timeout(Duration::from_secs(5), tracker.wait()).await;
    Ok(())
}

/// One connection, holding `permit` until it ends.
async fn connection(
    stream: TcpStream,
    app: Router,
    stop: CancellationToken,
    limits: ServeLimits,
    permit: OwnedSemaphorePermit,
) {
    let _permit = permit;
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(64 * 1024)
        .serve_connection(TokioIo::new(stream), TowerToHyperService::new(app));
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = stop.cancelled() => {}
        _ = tokio::time::sleep(limits.max_connection_age) => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = tokio::time::timeout(Duration::from_secs(5), conn).await;
}

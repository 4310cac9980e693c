//! Talking HTTP to what a test serves, and serving the daemon's HTTP side alone:
//!
//! - [`http_get`] and [`raw_request`]: bare requests over a TCP stream, for a server in any
//!   state (half-started, hostile checks on `Host` and `Authorization`);
//! - [`client`], [`get`], [`request`]: a `reqwest` client that never goes through a proxy;
//! - [`series`]: one value out of a Prometheus text body;
//! - [`serve_router`], [`serve_journal`] and [`Endpoint`]: the router of `linkrunner::http` over a journal,
//!   without an engine, on a port of its own.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use linkrunner::clock::SharedClock;
use linkrunner::http::{Access, AppState, Health, router_with, serve};
use linkrunner::metrics::Metrics;
use linkrunner::store::Store;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::db::TestDb;

/// A bare HTTP/1.0 GET on loopback: `(status, body)`, `None` if nothing answered within 5 s.
/// No client library and no pooling, so it works against a server in any state.
pub async fn http_get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let io = async {
        let mut s = tokio::net::TcpStream::connect(addr).await.ok()?;
        let req = format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n");
        s.write_all(req.as_bytes()).await.ok()?;
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).await.ok()?;
        let text = String::from_utf8_lossy(&buf).to_string();
        let status = text.split(' ').nth(1)?.parse().ok()?;
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string())?;
        Some((status, body))
    };
    tokio::time::timeout(Duration::from_secs(5), io)
        .await
        .ok()
        .flatten()
}

/// Sends `req` (a whole request, head and body, as the test wrote it) to `addr` and reads
/// until the server closes: the status line's code (0 when there is none) and the whole
/// answer. Fails the test if nothing comes back within 5 s.
pub async fn raw_request(addr: SocketAddr, req: &str) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    s.write_all(req.as_bytes()).await.expect("send");
    let mut buf = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut buf))
        .await
        .expect("an answer within 5 s")
        .expect("read");
    let text = String::from_utf8_lossy(&buf).to_string();
    let code = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, text)
}

/// A client that goes to loopback directly and gives up after 5 s.
pub fn client() -> reqwest::Client {
    // The TLS provider the client needs: a test that starts no sandbox (which installs it)
    // would otherwise fail when run alone.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

/// `(status, body)`; status 0 when nothing answered.
pub async fn get(url: &str) -> (u16, String) {
    request(reqwest::Method::GET, url).await
}

/// [`get`] with any method and no body.
pub async fn request(method: reqwest::Method, url: &str) -> (u16, String) {
    match client().request(method, url).send().await {
        Ok(r) => {
            let status = r.status().as_u16();
            (status, r.text().await.unwrap_or_default())
        }
        Err(_) => (0, String::new()),
    }
}

/// The value of one series in a Prometheus text body, e.g.
/// `linkrunner_reloads_total{outcome="failed"}`.
pub fn series(body: &str, name_and_labels: &str) -> Option<f64> {
    body.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(name_and_labels)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

/// Serves the HTTP router alone over `store`, reading `clock`, behind `access`, on a port of
/// its own until the token is cancelled; `campaigns_loaded` as the daemon says once it read
/// its files.
pub async fn serve_router(
    store: &Store,
    clock: SharedClock,
    access: Access,
    campaigns_loaded: bool,
) -> (SocketAddr, CancellationToken) {
    let state = AppState {
        metrics: Arc::new(Metrics::new()),
        store: store.clone(),
        health: Arc::new(Health::default()),
        clock,
    };
    if campaigns_loaded {
        state.health.set_campaigns_loaded();
    }
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("port");
    let addr = listener.local_addr().expect("addr");
    let stop = CancellationToken::new();
    tokio::spawn(serve(listener, router_with(state, access), stop.clone()));
    (addr, stop)
}

/// [`serve_router`] with the default access rules, before the campaigns are loaded.
pub async fn serve_journal(store: &Store, clock: SharedClock) -> (SocketAddr, CancellationToken) {
    serve_router(store, clock, Access::default(), false).await
}

/// The HTTP endpoint alone (no engine) on a port of its own over a fresh SQLite journal and
/// the system clock; stops when dropped.
pub struct Endpoint {
    pub addr: SocketAddr,
    stop: CancellationToken,
    _db: TestDb,
}

impl Endpoint {
    /// [`Endpoint`] behind `access`; `campaigns_loaded` as for [`serve_router`].
    pub async fn start(access: Access, campaigns_loaded: bool) -> Endpoint {
        let db = TestDb::sqlite().await;
        let clock = linkrunner::clock::system();
        let (addr, stop) = serve_router(&db.store, clock, access, campaigns_loaded).await;
        Endpoint {
            addr,
            stop,
            _db: db,
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

//! `http/`: the daemon's HTTP endpoint, on loopback by default; read-only but for the halt
//! and resume routes, which exist only behind a token.
//!
//! | path | answers |
//! |---|---|
//! | `GET /[?state=&q=&account=&sort=&dir=&page=&per_page=]`, `GET /?campaign=NAME` | the status page: the summary, the month's picture ([`picture`]: inline SVG) and one page of the campaign table ([`board`]), or one campaign ([`page`]); HTML, read-only, no scripts or external assets ([`site`] picks the view) |
//! | `GET /healthz` | 200 while the process is alive; no I/O |
//! | `GET /readyz` | a JSON report per component; 503 when any is not ready ([`health`]) |
//! | `GET /metrics` | Prometheus text format |
//! | `GET /api/v1/campaigns[?state=&q=&account=&sort=&dir=&page=&per_page=&format=]`, `GET /api/v1/campaigns/{name}` | the facts `linkrunner status` shows: of one page of campaigns (100 unless asked, `x-total-count`), of every one as NDJSON with `format=ndjson` ([`list`]), or of one |
//! | `GET /api/v1/summary` | the numbers at the top of the status page (`views::summary::Summary`), in total and per account |
//! | `GET /api/v1/campaigns/{name}/history[?since=DATE]` | what `linkrunner history NAME --format json` prints ([`history`]) |
//! | `GET /api/v1/report?month=YYYY-MM` | what `linkrunner report --month … --format json` prints ([`report`]) |
//! | `GET /api/v1/state[?campaign=NAME]` | what `plan` reads from the journal, for `plan --state-from` |
//! | `POST /api/v1/halt`, `POST /api/v1/resume` | only with `--http-token-file`: what `linkrunner halt` and `resume` do ([`halt`]) |
//!
//! Other methods get 405, unknown paths 404. Every route but the probes is behind the Host
//! allow-list and, when set, the token ([`access`]). Bodies, header time, request time,
//! connection age and connections are bounded ([`serve`]); the probes also have a listener
//! of their own ([`probe_router`], `--probe-listen`) with its own connection cap, so clients
//! holding the main port cannot starve `/healthz` and `/readyz`.
//!
//! May import: crate::campaign, crate::decide, crate::metrics, crate::store, crate::telemetry, crate::views.

pub(crate) mod access;
pub(crate) mod board;
mod halt;
pub(crate) mod health;
mod history;
mod list;
pub(crate) mod page;
pub(crate) mod picture;
mod report;
mod serve;
mod site;

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};

pub use access::{Access, AccessToken, AllowedHosts};
pub use health::Health;
pub use serve::{ListenerKind, ServeLimits, serve, serve_with};

use crate::metrics::Metrics;
use crate::store::Store;
use crate::views::list::{CampaignRow, campaign_rows};
use crate::views::report::{CampaignStatus, campaign_status_with};
use crate::views::summary::{Summary, summary};
use linkrunner_domain::clock::SharedClock;

/// What the handlers read. Only the halt and resume routes, behind the token, write to the
/// journal.
#[derive(Clone)]
pub struct AppState {
    pub metrics: Arc<Metrics>,
    pub store: Store,
    pub health: Arc<Health>,
    pub clock: SharedClock,
}

/// The HTTP side's settings: who may read it and what each listener holds.
#[derive(Debug, Clone)]
pub(crate) struct HttpOptions {
    pub(crate) access: Access,
    pub(crate) main: ServeLimits,
    pub(crate) probe: ServeLimits,
}

impl Default for HttpOptions {
    /// Loopback names and IP literals, no token, [`ServeLimits::MAIN`] and [`ServeLimits::PROBE`].
    fn default() -> Self {
        HttpOptions {
            access: Access::default(),
            main: ServeLimits::MAIN,
            probe: ServeLimits::PROBE,
        }
    }
}

/// The main port with the default access rules (loopback names and IP literals, no token).
pub fn router(state: AppState) -> Router {
    router_with(state, Access::default())
}

/// The main port: the probes as they are, everything else behind `access`.
pub fn router_with(state: AppState, access: Access) -> Router {
    // Without a token the endpoint stays read-only: the write routes do not exist (404).
    let writes = match access.token {
        Some(_) => Router::new()
            .route("/api/v1/halt", post(halt::halt))
            .route("/api/v1/resume", post(halt::resume)),
        None => Router::new(),
    };
    let guard = access::Guard {
        access: std::sync::Arc::new(access),
        metrics: state.metrics.clone(),
    };
    let guarded = writes
        .route("/", get(site::status_page))
        .route("/metrics", get(metrics))
        .route("/api/v1/campaigns", get(list::campaigns))
        .route("/api/v1/summary", get(summary_api))
        .route("/api/v1/campaigns/{name}", get(campaign))
        .route(
            "/api/v1/campaigns/{name}/history",
            get(history::campaign_history),
        )
        .route("/api/v1/report", get(report::month_report))
        .route("/api/v1/state", get(report::recorded_state))
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(guard, access::guard));
    bounded(probes().merge(guarded)).with_state(state)
}

/// The probe port: `/healthz` and `/readyz` only, for a kubelet and the systemd watchdog.
pub(crate) fn probe_router(state: AppState) -> Router {
    bounded(probes().fallback(not_found)).with_state(state)
}

fn probes() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
}

async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(serde_json::json!({ "error": "not found" })),
    )
        .into_response()
}

/// Request bodies and request time bounded on every route.
fn bounded(r: Router<AppState>) -> Router<AppState> {
    r.layer(tower_http::limit::RequestBodyLimitLayer::new(16 * 1024))
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::SERVICE_UNAVAILABLE,
            Duration::from_secs(10),
        ))
}

/// Whether `/healthz` at `addr` answers 200 within `limit` (the systemd watchdog asks the
/// probe port before each ping, so a daemon whose probes hang is restarted). An unspecified
/// address (`0.0.0.0`, `::`) is asked on loopback.
pub(crate) async fn self_check(addr: std::net::SocketAddr, limit: Duration) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut addr = addr;
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr {
            std::net::SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            std::net::SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    let ask = async {
        let mut s = tokio::net::TcpStream::connect(addr).await.ok()?;
        s.write_all(b"GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n")
            .await
            .ok()?;
        let mut head = [0u8; 12];
        s.read_exact(&mut head).await.ok()?;
        Some(head.ends_with(b" 200"))
    };
    tokio::time::timeout(limit, ask).await.ok().flatten() == Some(true)
}

async fn healthz() -> &'static str {
    "ok\n"
}

async fn readyz(State(s): State<AppState>) -> Response {
    let report = s.health.readiness(&s.store).await;
    s.metrics.ready.set(i64::from(report.ready));
    let code = if report.ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, Json(report)).into_response()
}

async fn metrics(State(s): State<AppState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        s.metrics.render(),
    )
        .into_response()
}

/// Every campaign's row of the list (`views::list`: read from counts, not every record),
/// with the daemon's next rounds: what the page's table filters, sorts and pages.
pub(crate) async fn all_rows(s: &AppState) -> Result<Vec<CampaignRow>, crate::store::StoreError> {
    let names = s.store.campaigns().campaign_names().await?;
    let mut all = campaign_rows(&s.store, &names, s.clock.now(), &s.health.files()).await?;
    for r in &mut all {
        r.next_round = s.health.next_round(&r.campaign);
    }
    Ok(all)
}

/// Every row and their summary, read at one instant.
pub(crate) async fn rows_and_summary(
    s: &AppState,
) -> Result<(Vec<CampaignRow>, Summary), crate::store::StoreError> {
    let (all, mut sum) = summary(&s.store, all_rows(s), s.clock.now()).await?;
    sum.removals_held = s.health.removal_hold();
    Ok((all, sum))
}

async fn summary_api(State(s): State<AppState>) -> Response {
    match rows_and_summary(&s).await {
        Ok((_, sum)) => Json(sum).into_response(),
        Err(e) => unavailable(&s, e),
    }
}

/// Whether `name` can be a campaign's name at all: anything else is answered 404 unread.
pub(crate) fn plausible_name(name: &str) -> bool {
    name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

async fn campaign(State(s): State<AppState>, Path(name): Path<String>) -> Response {
    if !plausible_name(&name) {
        return (
            StatusCode::NOT_FOUND,
            Json(serde_json::json!({ "error": "no such campaign" })),
        )
            .into_response();
    }
    match one_status(&s, &name).await {
        Ok(Some(st)) => Json(st).into_response(),
        Ok(None) => (
            StatusCode::NOT_FOUND,
            Json(serde_json::json!({ "error": "no such campaign" })),
        )
            .into_response(),
        Err(e) => unavailable(&s, e),
    }
}

/// One campaign's status as the list shows it; `None` when the journal does not know it.
pub(crate) async fn one_status(
    s: &AppState,
    name: &str,
) -> Result<Option<CampaignStatus>, crate::store::StoreError> {
    if !s
        .store
        .campaigns()
        .campaign_names()
        .await?
        .iter()
        .any(|n| n == name)
    {
        return Ok(None);
    }
    let files = s.health.files();
    let mut c = campaign_status_with(&s.store, name, s.clock.now(), &files).await?;
    c.next_round = s.health.next_round(name);
    Ok(Some(c))
}

pub(crate) fn unavailable(s: &AppState, e: crate::store::StoreError) -> Response {
    s.metrics.database_errors_total.inc();
    tracing::warn!(error = %e, "status API: journal unavailable");
    (
        StatusCode::SERVICE_UNAVAILABLE,
        Json(serde_json::json!({ "error": "journal database unavailable" })),
    )
        .into_response()
}

//! A pass-through HTTP proxy between the binary and the in-process sandbox that can trap one
//! changing call, so a test can kill the binary while the marketplace "holds" that request:
//!
//! - [`Trap::Unexecuted`]: the request reached the marketplace but is never executed
//!   (it never gets past the proxy);
//! - [`Trap::AnswerLost`]: the request is executed by the sandbox, and its answer never
//!   reaches the client.
//!
//! The sandbox applies its latency *before* executing a call and answers right after, so its
//! own latency cannot hold an executed call's answer; the proxy covers both sides exactly.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use linkrunner_sandbox::Op;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trap {
    /// Hold the request forever: it is never executed.
    Unexecuted,
    /// Let the sandbox execute it, then hold the answer forever.
    AnswerLost,
}

struct Armed {
    op: Op,
    trap: Trap,
    tripped: oneshot::Sender<()>,
}

struct Shared {
    upstream: String,
    http: reqwest::Client,
    armed: Mutex<Option<Armed>>,
}

pub struct Proxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    cancel: CancellationToken,
}

impl Proxy {
    pub async fn start(upstream: String) -> Proxy {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("proxy HTTP client");
        let shared = Arc::new(Shared {
            upstream,
            http,
            armed: Mutex::new(None),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("proxy binds a loopback port");
        let addr = listener.local_addr().expect("proxy address");
        let app = Router::new().fallback(forward).with_state(shared.clone());
        let cancel = CancellationToken::new();
        let stop = cancel.clone().cancelled_owned();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(stop)
                .await;
        });
        Proxy {
            addr,
            shared,
            cancel,
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Traps the next request of `op`; the receiver fires when it is held.
    pub fn arm(&self, op: Op, trap: Trap) -> oneshot::Receiver<()> {
        let (tripped, rx) = oneshot::channel();
        *self.shared.armed.lock().unwrap() = Some(Armed { op, trap, tripped });
        rx
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

async fn forward(
    State(s): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let trapped = op_of(uri.path()).and_then(|op| {
        let mut armed = s.armed.lock().unwrap();
        armed.take_if(|a| a.op == op)
    });
    let Some(armed) = trapped else {
        return pass(&s, method, &uri, headers, body).await;
    };
    if armed.trap == Trap::AnswerLost {
        let _executed = pass(&s, method, &uri, headers, body).await;
    }
    let _ = armed.tripped.send(());
    std::future::pending::<Response>().await
}

async fn pass(s: &Shared, method: Method, uri: &Uri, headers: HeaderMap, body: Bytes) -> Response {
    let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    let mut req = s.http.request(method, format!("{}{path}", s.upstream));
    for (name, value) in &headers {
        if ![header::HOST, header::CONTENT_LENGTH, header::CONNECTION].contains(name) {
            req = req.header(name, value);
        }
    }
    let answer = match req.body(body).send().await {
        Ok(a) => a,
        Err(e) => return (StatusCode::BAD_GATEWAY, format!("proxy: {e}")).into_response(),
    };
    let status = answer.status();
    let mut out = HeaderMap::new();
    for (name, value) in answer.headers() {
        if ![
            header::CONTENT_LENGTH,
            header::TRANSFER_ENCODING,
            header::CONNECTION,
        ]
        .contains(name)
        {
            out.append(name, value.clone());
        }
    }
    match answer.bytes().await {
        Ok(bytes) => (status, out, bytes).into_response(),
        Err(e) => (StatusCode::BAD_GATEWAY, format!("proxy: {e}")).into_response(),
    }
}

/// The changing operation a request path belongs to, or the search poll (the only read
/// that can be trapped: to hold a poll past its search deadline).
fn op_of(path: &str) -> Option<Op> {
    const PATHS: [(&str, Op); 8] = [
        ("/rest/SearchRent/rent/tree/getResult/", Op::SearchResult),
        ("/rest/Project/addSimpleProjectAndContent", Op::AddProject),
        ("/rest/Content/add/texts/", Op::AddTexts),
        ("/rest/SearchFilter", Op::AddFilter),
        ("/rest/Autobuyer/rent/create/", Op::CreateAutobuyer),
        ("/rest/Autobuyer/start", Op::StartAutobuyers),
        ("/rest/Autobuyer/stop", Op::StopAutobuyers),
        ("/rest/Placement/rent/create/", Op::BuyLinks),
    ];
    PATHS
        .iter()
        .find(|(prefix, _)| path.starts_with(prefix))
        .map(|(_, op)| *op)
}

//! Shared setup: a wiremock server, a client pointed at it, and a raw TCP server that
//! answers with bytes wiremock would never send.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use linkrunner::market::{ClientConfig, MarketClient, PageTarget, PurchaseOrder, TechValues};
use linkrunner::metrics::Metrics;
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

pub const TOKEN: &str = "tok-test-123";
pub const TICKET: &str = "tkt-test-456";

/// A config for `base` with fast limits so tests are not throttled unless they mean to be.
pub fn config(base: &str) -> ClientConfig {
    crate::support::market::fast_config(base, TOKEN, TICKET)
}

pub struct Harness {
    pub server: MockServer,
    pub client: MarketClient,
    pub metrics: Arc<Metrics>,
}

impl Harness {
    /// Every request to the server gets `answer`.
    pub async fn answer_every(&self, answer: ResponseTemplate) {
        Mock::given(any())
            .respond_with(answer)
            .mount(&self.server)
            .await;
    }

    /// Every request gets `answer`, and the server fails the test when it is dropped unless
    /// exactly `times` requests came: a call that changes something is sent once.
    pub async fn answer_exactly(&self, answer: ResponseTemplate, times: u64) {
        Mock::given(any())
            .respond_with(answer)
            .expect(times)
            .mount(&self.server)
            .await;
    }
}

pub async fn harness() -> Harness {
    harness_with(|_| {}).await
}

pub async fn harness_with(tweak: impl FnOnce(&mut ClientConfig)) -> Harness {
    let server = MockServer::start().await;
    let mut cfg = config(&server.uri());
    tweak(&mut cfg);
    let metrics = Arc::new(Metrics::new());
    let client = MarketClient::new(cfg, Arc::clone(&metrics)).unwrap();
    Harness {
        server,
        client,
        metrics,
    }
}

pub fn client_for(base: &str) -> MarketClient {
    MarketClient::new(config(base), Arc::new(Metrics::new())).unwrap()
}

pub fn order() -> PurchaseOrder {
    PurchaseOrder {
        link_type_id: 1,
        filter_id: Some(5),
        tech: TechValues {
            search_id: json!(77),
            force_seo_wait: json!(0),
            mos_sites: json!("abc"),
        },
        pages: vec![PageTarget {
            page_id: 1,
            url_id: 2,
            text_id: 3,
        }],
    }
}

/// A server on loopback that answers every request with `response` and closes the
/// connection. Returns its base URL and a count of requests received.
pub async fn raw_server(response: Vec<u8>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&count);
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            read_request(&mut sock).await;
            seen.fetch_add(1, Ordering::SeqCst);
            let _ = sock.write_all(&response).await;
            let _ = sock.shutdown().await;
        }
    });
    (base, count)
}

/// Reads one request: the head, then as many body bytes as its Content-Length says.
async fn read_request(sock: &mut tokio::net::TcpStream) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let Ok(n) = sock.read(&mut chunk).await else {
            return;
        };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).to_ascii_lowercase();
        if let Some(head_end) = text.find("\r\n\r\n") {
            let len = text[..head_end]
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if buf.len() >= head_end + 4 + len {
                return;
            }
        }
    }
}

/// A port on loopback where nothing listens.
pub async fn closed_port_base() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}

/// The value of `linkrunner_api_calls_total{account="default", operation, outcome}`.
pub fn calls(metrics: &Metrics, operation: &str, outcome: &str) -> u64 {
    metrics
        .api_calls_total
        .with_label_values(&["default", operation, outcome])
        .get()
}

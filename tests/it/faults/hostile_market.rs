//! Hostile marketplace answers, served by a raw TCP proxy in front of the sandbox: a redirect
//! to another host, a huge body, an endless body, malformed JSON, wrong types, and a search
//! job whose ids would break a URL path. Each ends with clear errors in the journal, nothing
//! bought wrongly, and nothing recorded as bought that the marketplace did not sell.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use linkrunner::store::{IntentFilter, IntentKind};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::support::*;
use crate::support::db::TestDb;
use crate::support::init_logs;
use crate::support::sandbox;
use crate::support::wait::within;

const BUY_PATH: &str = "/rest/Placement/rent/create/";
const SEARCH_PATH: &str = "/rest/SearchRent/rent/tree/urlId/";
const BUY_OP: &str = "Placement.createPlacementsRent";

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Hostile {
    /// The purchase is refused without reaching the marketplace, with an error body full of
    /// escape sequences, control characters, BIDI overrides and a formula
    /// ([`super::hostile_strings`]).
    EscapeText,
    /// The purchase is answered 307 to another host, without reaching the marketplace.
    Redirect,
    /// The purchase executes; its answer is 64 MiB of JSON-looking bytes.
    HugeBody,
    /// The purchase executes; its answer never ends.
    EndlessBody,
    /// The purchase executes; its answer is cut-off JSON.
    MalformedJson,
    /// The purchase executes; its answer has every field with the wrong type.
    WrongTypes,
    /// Starting a search answers ids full of `/`, `..`, `?` and `#`.
    PathBreakingJob,
}

pub(super) struct Proxy {
    pub(super) addr: SocketAddr,
    pub(super) hostile_served: Arc<AtomicU64>,
    pub(super) hostile: Arc<AtomicBool>,
    /// Connections the redirect's target received.
    elsewhere: Arc<AtomicU64>,
}

pub(super) async fn start_proxy(upstream: String, mode: Hostile) -> Proxy {
    let other = TcpListener::bind("127.0.0.1:0").await.expect("other host");
    let other_addr = other.local_addr().expect("addr");
    let elsewhere = Arc::new(AtomicU64::new(0));
    let seen = elsewhere.clone();
    tokio::spawn(async move {
        while other.accept().await.is_ok() {
            seen.fetch_add(1, Ordering::SeqCst);
        }
    });
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("proxy port");
    let p = Proxy {
        addr: listener.local_addr().expect("addr"),
        hostile_served: Arc::new(AtomicU64::new(0)),
        hostile: Arc::new(AtomicBool::new(true)),
        elsewhere,
    };
    let (served, hostile) = (p.hostile_served.clone(), p.hostile.clone());
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    tokio::spawn(async move {
        while let Ok((conn, _)) = listener.accept().await {
            let ctx = (
                upstream.clone(),
                http.clone(),
                served.clone(),
                hostile.clone(),
            );
            tokio::spawn(async move {
                let _ = handle(conn, ctx, mode, other_addr).await;
            });
        }
    });
    p
}

type Ctx = (String, reqwest::Client, Arc<AtomicU64>, Arc<AtomicBool>);

async fn read_request(
    conn: &mut TcpStream,
) -> Option<(String, String, Vec<(String, String)>, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_string(), first.next()?.to_string());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some((method, path, headers, body))
}

async fn forward(
    ctx: &Ctx,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: Vec<u8>,
) -> (u16, Vec<u8>) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut req = ctx.1.request(method, format!("{}{path}", ctx.0)).body(body);
    for (k, v) in headers {
        if ["authorization", "cookie", "content-type", "accept"].contains(&k.as_str()) {
            req = req.header(k, v);
        }
    }
    let resp = req.send().await.expect("sandbox answers the proxy");
    let status = resp.status().as_u16();
    (status, resp.bytes().await.expect("sandbox body").to_vec())
}

fn answer(status: u16, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

async fn handle(mut conn: TcpStream, ctx: Ctx, mode: Hostile, other: SocketAddr) -> Option<()> {
    let (method, path, headers, body) = read_request(&mut conn).await?;
    let targeted = match mode {
        Hostile::PathBreakingJob => path.starts_with(SEARCH_PATH),
        _ => path.starts_with(BUY_PATH),
    };
    if !(targeted && ctx.3.load(Ordering::SeqCst)) {
        let (status, b) = forward(&ctx, &method, &path, &headers, body).await;
        return conn.write_all(&answer(status, &b)).await.ok();
    }
    ctx.2.fetch_add(1, Ordering::SeqCst);
    if mode == Hostile::Redirect {
        let head = format!(
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://{other}{path}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        return conn.write_all(head.as_bytes()).await.ok();
    }
    if mode == Hostile::EscapeText {
        let body = super::hostile_strings::error_body();
        return conn.write_all(&answer(400, body.as_bytes())).await.ok();
    }
    let (_, executed) = forward(&ctx, &method, &path, &headers, body).await;
    match mode {
        Hostile::HugeBody => {
            let len = 64 * 1024 * 1024;
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n["
            );
            conn.write_all(head.as_bytes()).await.ok()?;
            let chunk = b"{\"linkId\":1},".repeat(5000);
            for _ in 0..(len / chunk.len()) {
                conn.write_all(&chunk).await.ok()?;
            }
            Some(())
        }
        Hostile::EndlessBody => {
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n[";
            conn.write_all(head.as_bytes()).await.ok()?;
            let chunk = b"{\"linkId\":1},".repeat(5000);
            loop {
                conn.write_all(&chunk).await.ok()?;
            }
        }
        Hostile::MalformedJson => {
            let cut = &executed[..executed.len() / 2];
            conn.write_all(&answer(200, cut)).await.ok()
        }
        Hostile::WrongTypes => {
            let wrong = br#"{"ids": "many", "linkId": {"a": 1}, "id": [true], "links": 7, "isError": null}"#;
            conn.write_all(&answer(200, wrong)).await.ok()
        }
        Hostile::PathBreakingJob => {
            let job = br#"{"jobHandleId": "../../Placement/rent/create/projectId/1?x=#", "message": "ok", "metaData": "a/../../b?c=d#e%2F"}"#;
            conn.write_all(&answer(200, job)).await.ok()
        }
        Hostile::Redirect | Hostile::EscapeText => unreachable!("answered above"),
    }
}

/// Runs the daemon through the proxy until the hostile answer was served (twice where it can be), then lets
/// the marketplace answer honestly until every purchase is settled; checks the invariants.
async fn survive(mode: Hostile) -> (linkrunner_sandbox::Ledger, Vec<String>, Proxy) {
    init_logs();
    let canary = Canary::new();
    let sandbox = sandbox::start(sandbox_config(&canary)).await;
    let proxy = start_proxy(sandbox.base_url(), mode).await;
    let dir = campaign_dir("0 9 * * *");
    let db = TestDb::sqlite().await;
    let url = &db.url;
    let via = format!("http://{}", proxy.addr);
    let d = in_process(url, &via, &canary, dir.path()).await;
    // A search job is persisted and polled again, so its hostile answer comes only once.
    let times = if mode == Hostile::PathBreakingJob {
        1
    } else {
        2
    };
    within(
        Duration::from_secs(30),
        "the hostile answer served",
        || async { (proxy.hostile_served.load(Ordering::SeqCst) >= times).then_some(()) },
    )
    .await;
    let before = sandbox.ledger();
    proxy.hostile.store(false, Ordering::SeqCst);
    let honest_from = chrono::Utc::now();
    within(
        Duration::from_secs(45),
        "a successful honest round, all settled",
        || settled_round_after(&d.store, honest_from),
    )
    .await;
    let store = d.store.clone();
    d.stop().await;
    let ledger = sandbox.ledger();
    assert_ledger_invariants(&ledger, &store).await;
    let all = IntentFilter {
        campaign: Some(CAMPAIGN.into()),
        states: vec![],
        kind: None,
    };
    let errors = store
        .intents()
        .find_intents(all)
        .await
        .expect("journal")
        .into_iter()
        .filter(|i| i.kind == IntentKind::Purchase || mode == Hostile::PathBreakingJob)
        .flat_map(|i| [i.error, i.answer])
        .flatten()
        .collect();
    (before, errors, proxy)
}

/// Survives `mode` whose answers come after the purchases executed: they did, and the journal
/// records the purchase call's failure (so the purchase is settled once, not sent again).
async fn executed_and_recorded_once(mode: Hostile) {
    let (while_hostile, errors, _) = survive(mode).await;
    assert!(
        !while_hostile.purchases.is_empty(),
        "the purchases executed"
    );
    assert!(errors.iter().any(|e| e.contains(BUY_OP)), "{errors:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_another_host_is_not_followed_and_buys_nothing() {
    let (while_hostile, errors, proxy) = survive(Hostile::Redirect).await;
    assert_eq!(
        proxy.elsewhere.load(Ordering::SeqCst),
        0,
        "the other host was contacted"
    );
    assert!(
        while_hostile.purchases.is_empty(),
        "bought through a redirect"
    );
    assert!(
        errors.iter().any(|e| e.contains("not bought")),
        "the redirected purchases are settled as not bought: {errors:?}"
    );
}

/// One test per row: a hostile answer that comes after the purchase executed, survived as
/// [`executed_and_recorded_once`] says.
macro_rules! executed_then_hostile {
    ($($test:ident => $mode:ident;)*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $test() {
                executed_and_recorded_once(Hostile::$mode).await;
            }
        )*
    };
}

executed_then_hostile! {
    a_huge_answer_is_capped_and_the_executed_purchase_is_recorded_once => HugeBody;
    an_endless_answer_is_cut_and_the_executed_purchase_is_recorded_once => EndlessBody;
    malformed_json_after_a_purchase_is_settled_from_the_link_list => MalformedJson;
    wrong_types_after_a_purchase_are_settled_from_the_link_list => WrongTypes;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_ids_that_would_break_a_url_path_reach_no_other_operation() {
    let (while_hostile, _, _) = survive(Hostile::PathBreakingJob).await;
    assert!(
        while_hostile.purchases.is_empty(),
        "bought with a path-breaking job"
    );
    assert_eq!(
        while_hostile.requests.get("buy_links"),
        None,
        "a purchase call was made"
    );
}

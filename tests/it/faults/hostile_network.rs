//! A hostile network in front of the daemon's HTTP side: 1,000 slow and idle clients on the
//! main port of the real binary (the probe port keeps answering, the connection cap holds,
//! the header timeout frees every slot), a rebound DNS name (`evil.example` refused on every
//! route but the probes), and the access token (bearer or Basic password; probes free).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use base64::Engine as _;
use linkrunner::http::{Access, AccessToken, AllowedHosts};
use linkrunner::store::HaltScope;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::support::*;
use crate::support::db::TestDb;
use crate::support::free_port;
use crate::support::http::Endpoint;
use crate::support::http::http_get;
use crate::support::http::{raw_request, serve_router};
use crate::support::sandbox;

const SLOW_CLIENTS: usize = 1000;
const CAP: usize = 200;
/// Far above the 1 s a probe should take, so a slow machine does not fail the test; a
/// starved probe waited out the main port's 5 s header timeout or forever.
const PROBE_BOUND: Duration = Duration::from_secs(4);

/// `GET path` with this `Host` and optional `Authorization`; the status line's code and the
/// whole answer (head and body).
async fn get(addr: SocketAddr, path: &str, host: &str, auth: Option<&str>) -> (u16, String) {
    let auth = auth
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    let req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{auth}Connection: close\r\n\r\n");
    raw_request(addr, &req).await
}

/// A client on `s` that sends its head one byte a second (or, when `idle`, nothing at all).
/// Resolves to how long after its connect the server closed the connection (`None`: the
/// server kept it for 30 s).
async fn slow_client(mut s: TcpStream, connected: Instant, idle: bool) -> Option<Duration> {
    let head = b"GET /api/v1/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n\r\n";
    let mut buf = [0u8; 256];
    let mut next = 0;
    while connected.elapsed() < Duration::from_secs(30) {
        match tokio::time::timeout(Duration::from_secs(1), s.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => return Some(connected.elapsed()),
            Ok(Ok(_)) => {}
            Err(_) if idle => {}
            Err(_) => {
                if next < head.len() && s.write_all(&head[next..=next]).await.is_err() {
                    return Some(connected.elapsed());
                }
                next += 1;
            }
        }
    }
    None
}

/// Probes answer on their port, within the bound, with the answer they should give.
async fn probes_answer(probe: SocketAddr) {
    for path in ["/healthz", "/readyz"] {
        let started = Instant::now();
        let got = tokio::time::timeout(PROBE_BOUND, http_get(probe, path)).await;
        let took = started.elapsed();
        let (code, _) = got.ok().flatten().unwrap_or_else(|| {
            panic!("{path} on the probe port: no answer within {PROBE_BOUND:?}")
        });
        assert_eq!(code, 200, "{path} on the probe port");
        eprintln!("{path} on the probe port answered in {took:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_answer_on_their_own_port_while_1000_slow_clients_hit_the_connection_cap() {
    let canary = Canary::new();
    let sandbox = sandbox::start(sandbox_config(&canary)).await;
    let campaigns = campaign_dir("0 3 * * *");
    let journal = TestDb::sqlite().await;
    let probe: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let cmd = linkrunner(&journal.url, campaigns.path(), &sandbox, &canary);
    let cap = CAP.to_string();
    let args = [
        "--probe-listen",
        &probe.to_string(),
        "--http-max-connections",
        &cap,
    ];
    let mut daemon = crate::support::binary::Daemon::run(cmd, &args).await;
    daemon.ready().await;

    // Connected one after the other (a loopback connect takes microseconds), so the kernel's
    // accept queue never overflows into SYN retries that would spread them over seconds.
    let mut clients = Vec::with_capacity(SLOW_CLIENTS);
    for i in 0..SLOW_CLIENTS {
        let s = TcpStream::connect(daemon.addr).await.expect("connect");
        clients.push(tokio::spawn(slow_client(s, Instant::now(), i % 2 == 0)));
    }
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(700)).await;
        probes_answer(probe).await;
    }
    let mut ends = Vec::with_capacity(SLOW_CLIENTS);
    for c in clients {
        ends.push(c.await.expect("client task"));
    }
    // The cap: everything past it was closed at once, long before the 5 s header timeout.
    let at_once = Duration::from_secs(4);
    let refused_at_once = ends.iter().flatten().filter(|&&d| d < at_once).count();
    assert!(
        refused_at_once >= SLOW_CLIENTS - CAP,
        "the cap of {CAP}: only {refused_at_once} of {SLOW_CLIENTS} connections were closed at once"
    );
    // The header read timeout: every held connection, slow or idle, was cut off too.
    let kept = ends.iter().filter(|e| e.is_none()).count();
    assert_eq!(
        kept, 0,
        "{kept} connections were neither refused nor cut off within 30 s"
    );
    let cut = ends.iter().flatten().filter(|&&d| d >= at_once).count();
    assert!(
        cut <= CAP,
        "{cut} connections were held, more than the cap of {CAP}"
    );
    let metrics = daemon.metrics_body().await;
    let refused = metrics
        .lines()
        .find(|l| l.starts_with("linkrunner_http_connections_refused_total{listener=\"main\"}"))
        .and_then(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .expect("the refused connections counter");
    assert!(refused >= (SLOW_CLIENTS - CAP) as u64, "{refused} refused");
    probes_answer(probe).await;
    daemon.stop().await;
}

const GUARDED: [&str; 5] = [
    "/",
    "/metrics",
    "/api/v1/campaigns",
    "/api/v1/state",
    "/api/v1/report?month=2026-11",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebound_dns_name_is_refused_everywhere_but_the_probes() {
    let e = Endpoint::start(Access::default(), true).await;
    for path in GUARDED {
        let (code, body) = get(e.addr, path, "evil.example", None).await;
        assert_eq!(code, 403, "{path} for evil.example: {body}");
        let (code, _) = get(e.addr, path, "evil.example:9464", None).await;
        assert_eq!(code, 403, "{path} for evil.example:9464");
        for host in ["127.0.0.1:9464", "localhost", "[::1]:9464", "10.0.0.7"] {
            let (code, body) = get(e.addr, path, host, None).await;
            assert_eq!(code, 200, "{path} for {host}: {body}");
        }
    }
    for path in ["/healthz", "/readyz"] {
        let (code, _) = get(e.addr, path, "evil.example", None).await;
        assert_eq!(code, 200, "{path} is a probe: any Host");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_name_is_allowed_and_others_still_refused() {
    let access = Access {
        hosts: AllowedHosts::new(&["linkrunner.team.svc"]).unwrap(),
        token: None,
    };
    let e = Endpoint::start(access, true).await;
    let (code, _) = get(
        e.addr,
        "/api/v1/campaigns",
        "linkrunner.team.svc:9464",
        None,
    )
    .await;
    assert_eq!(code, 200);
    let (code, _) = get(e.addr, "/api/v1/campaigns", "evil.example", None).await;
    assert_eq!(code, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_every_route_but_the_probes_needs_it_as_bearer_or_basic_password() {
    let secret = "tok-0123456789abcdef";
    let access = Access {
        hosts: AllowedHosts::default(),
        token: Some(AccessToken::new(secret).unwrap()),
    };
    let e = Endpoint::start(access, true).await;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let bearer = format!("Bearer {secret}");
    let basic = format!("Basic {}", b64(&format!("ops:{secret}")));
    let wrong = format!("Bearer {secret}x");
    let user_only = format!("Basic {}", b64(&format!("{secret}:")));
    for path in GUARDED {
        for bad in [None, Some(wrong.as_str()), Some(user_only.as_str())] {
            let (code, head) = get(e.addr, path, "127.0.0.1", bad).await;
            assert_eq!(code, 401, "{path} with {bad:?}");
            assert!(
                head.to_ascii_lowercase()
                    .contains("www-authenticate: basic"),
                "a browser is asked for the password: {head}"
            );
            assert!(!head.contains(secret), "the token is never echoed");
        }
        for good in [&bearer, &basic] {
            let (code, body) = get(e.addr, path, "127.0.0.1", Some(good)).await;
            assert_eq!(code, 200, "{path}: {body}");
        }
        let (code, _) = get(e.addr, path, "evil.example", Some(&bearer)).await;
        assert_eq!(code, 403, "the token does not lift the Host check");
    }
    for path in ["/healthz", "/readyz"] {
        let (code, _) = get(e.addr, path, "127.0.0.1", None).await;
        assert_eq!(code, 200, "{path} needs no token");
    }
}

/// `POST path` with a JSON body, `Host: 127.0.0.1` and optional `Authorization`.
async fn post(addr: SocketAddr, path: &str, auth: Option<&str>, body: &str) -> (u16, String) {
    let auth = auth
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Content-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    raw_request(addr, &req).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn halt_and_resume_routes_exist_only_behind_the_token() {
    // Arrange: one endpoint without a token, one with.
    let secret = "tok-0123456789abcdef";
    let open_db = TestDb::sqlite().await;
    let (open, _stop_open) = serve_router(
        &open_db.store,
        linkrunner::clock::system(),
        Access::default(),
        true,
    )
    .await;
    let guarded_db = TestDb::sqlite().await;
    let access = Access {
        hosts: AllowedHosts::default(),
        token: Some(AccessToken::new(secret).unwrap()),
    };
    let (guarded, _stop_guarded) =
        serve_router(&guarded_db.store, linkrunner::clock::system(), access, true).await;
    let bearer = format!("Bearer {secret}");
    let press = r#"{"by": "night-operator", "reason": "double charges"}"#;

    // Act + Assert: without a token the endpoint stays read-only, the routes are absent.
    for path in ["/api/v1/halt", "/api/v1/resume"] {
        let (code, _) = post(open, path, None, press).await;
        assert_eq!(code, 404, "{path} without a token file");
    }
    assert!(open_db.store.halts().await.unwrap().is_empty());

    // With one: refused without it, a blank reason refused, then halt and resume work.
    let (code, _) = post(guarded, "/api/v1/halt", None, press).await;
    assert_eq!(code, 401);
    let blank = r#"{"by": "night-operator", "reason": " "}"#;
    let (code, _) = post(guarded, "/api/v1/halt", Some(&bearer), blank).await;
    assert_eq!(code, 400);
    assert!(guarded_db.store.halts().await.unwrap().is_empty());
    let (code, body) = post(guarded, "/api/v1/halt", Some(&bearer), press).await;
    assert_eq!(code, 200, "{body}");
    let halts = guarded_db.store.halts().await.unwrap();
    assert_eq!(halts.len(), 1, "{halts:?}");
    assert!(halts[0].is_operator());
    assert_eq!(halts[0].by.as_deref(), Some("night-operator"));
    let (code, readyz) = get(guarded, "/readyz", "127.0.0.1", None).await;
    assert_eq!(
        code, 200,
        "a halt never makes the process unready: {readyz}"
    );
    assert!(readyz.contains("halted by night-operator"), "{readyz}");
    let (code, page) = get(guarded, "/", "127.0.0.1", Some(&bearer)).await;
    assert_eq!(code, 200);
    assert!(
        page.contains("halted by night-operator"),
        "the banner: {page}"
    );
    let (code, body) = post(guarded, "/api/v1/resume", Some(&bearer), press).await;
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"resumed\":true"), "{body}");
    assert!(guarded_db.store.halts().await.unwrap().is_empty());
    let events = guarded_db.store.halt_events(10).await.unwrap();
    let actions: Vec<&str> = events.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(actions, ["resume", "halt"]);

    // A campaign's brake is lifted with its name; `halt` takes none.
    guarded_db
        .store
        .brake(
            &HaltScope::campaign("acme"),
            "anomaly: …",
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    let of_campaign = r#"{"by": "night-operator", "reason": "refunded", "campaign": "acme"}"#;
    let (code, _) = post(guarded, "/api/v1/halt", Some(&bearer), of_campaign).await;
    assert_eq!(code, 400);
    let (code, body) = post(guarded, "/api/v1/resume", Some(&bearer), press).await;
    assert!(
        code == 200 && body.contains("\"resumed\":false"),
        "the account's resume left the campaign's brake: {body}"
    );
    let (code, body) = post(guarded, "/api/v1/resume", Some(&bearer), of_campaign).await;
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"resumed\":true"), "{body}");
    assert!(guarded_db.store.halts().await.unwrap().is_empty());
}

//! Hostile clients of the daemon's HTTP endpoint: huge bodies, slow clients holding
//! connections open, unknown paths and methods. `/healthz` keeps answering throughout.

use std::net::SocketAddr;
use std::time::Duration;

use linkrunner::http::Access;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::http::Endpoint;
use crate::support::http::http_get;

/// `/healthz` answers 200 within one second.
async fn healthz_answers(addr: SocketAddr) -> bool {
    tokio::time::timeout(Duration::from_secs(1), http_get(addr, "/healthz"))
        .await
        .ok()
        .flatten()
        .is_some_and(|(s, b)| s == 200 && b == "ok\n")
}

/// Sends `head` and then `body_len` bytes (in 64 KiB chunks, stopping when the server stops
/// reading); returns the status line the server answered, if any.
async fn send_raw(addr: SocketAddr, head: &str, body_len: usize) -> Option<String> {
    let mut s = TcpStream::connect(addr).await.ok()?;
    s.write_all(head.as_bytes()).await.ok()?;
    let chunk = vec![b'x'; 64 * 1024];
    let mut sent = 0;
    while sent < body_len {
        let write = tokio::time::timeout(Duration::from_secs(2), s.write_all(&chunk)).await;
        if !matches!(write, Ok(Ok(()))) {
            break;
        }
        sent += chunk.len();
    }
    let mut buf = vec![0u8; 1024];
    let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
        .await
        .ok()?
        .ok()?;
    let text = String::from_utf8_lossy(&buf[..n]).to_string();
    text.lines().next().map(str::to_string)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_request_body_is_refused_and_healthz_keeps_answering() {
    let e = Endpoint::start(Access::default(), false).await;
    let head =
        "POST /api/v1/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 67108864\r\n\r\n";
    let huge = tokio::spawn(send_raw(e.addr, head, 64 * 1024 * 1024));
    assert!(healthz_answers(e.addr).await, "/healthz during the upload");
    let status = huge.await.expect("join").unwrap_or_default();
    assert!(
        status.contains(" 413 ") || status.contains(" 405 "),
        "a 64 MiB body is refused, got {status:?}"
    );
    assert!(healthz_answers(e.addr).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_holding_connections_do_not_starve_healthz() {
    let e = Endpoint::start(Access::default(), false).await;
    let mut slow = Vec::new();
    for _ in 0..300 {
        let mut s = TcpStream::connect(e.addr).await.expect("connect");
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .await
            .expect("partial head");
        slow.push(s);
    }
    for _ in 0..5 {
        assert!(
            healthz_answers(e.addr).await,
            "/healthz with 300 slow clients open"
        );
    }
    // The header read timeout cuts them off: their connections end without an answer.
    let mut first = slow.swap_remove(0);
    let mut buf = Vec::new();
    let ended = tokio::time::timeout(Duration::from_secs(15), first.read_to_end(&mut buf)).await;
    assert!(
        ended.is_ok(),
        "a client that never finishes its head is cut off"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_paths_and_methods_get_404_and_405_and_healthz_keeps_answering() {
    let e = Endpoint::start(Access::default(), false).await;
    let cases = [
        ("GET /../../etc/passwd HTTP/1.1", " 404 "),
        ("GET /api/v1/campaigns/..%2F..%2Fetc HTTP/1.1", " 404 "),
        ("GET /api/v1/campaigns/%00 HTTP/1.1", " 404 "),
        ("DELETE /api/v1/campaigns HTTP/1.1", " 405 "),
        ("POST /healthz HTTP/1.1", " 405 "),
        ("BREW /healthz HTTP/1.1", " 405 "),
        ("GET /nowhere HTTP/1.1", " 404 "),
    ];
    for (line, want) in cases {
        let head = format!("{line}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        let got = send_raw(e.addr, &head, 0).await.unwrap_or_default();
        assert!(got.contains(want), "{line}: want{want}got {got:?}");
        assert!(healthz_answers(e.addr).await, "/healthz after {line}");
    }
    let garbage = send_raw(e.addr, "\x00\x01\x02 not http\r\n\r\n", 0)
        .await
        .unwrap_or_default();
    assert!(
        garbage.contains(" 400 ") || garbage.is_empty(),
        "garbage: {garbage:?}"
    );
    assert!(healthz_answers(e.addr).await, "/healthz after garbage");
}

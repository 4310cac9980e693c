//! The canary: a token and ticket that must never appear — raw, percent-encoded or base64 —
//! in any log line (TRACE included, `log` records included), any error's `Display` or
//! `Debug`, or the `Debug` of the config and the client, even when the server echoes them.

use std::hash::{BuildHasher as _, Hasher as _};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use linkrunner::market::{ClientConfig, MarketClient, MarketError};
use linkrunner::metrics::Metrics;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::operations::call_every_operation;
use super::support::closed_port_base;
use crate::support::market::credentials;

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn random_suffix() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos(),
    );
    format!("{:016x}", h.finish())
}

/// Every form a secret could take on the wire or in a log.
fn forms(secret: &str) -> Vec<String> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let b64url = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    vec![
        secret.to_string(),
        utf8_percent_encode(secret, NON_ALPHANUMERIC).to_string(),
        b64.encode(secret),
        b64url.encode(secret),
        b64.encode(format!("Bearer {secret}")),
    ]
}

/// Answers that echo the secrets back in every place a careless client might print them.
fn hostile_answers(tok: &str, tkt: &str) -> Vec<ResponseTemplate> {
    let b64 = base64::engine::general_purpose::STANDARD.encode(tok);
    let pct = utf8_percent_encode(tkt, NON_ALPHANUMERIC).to_string();
    let echo =
        format!("Authorization: Bearer {tok}; Cookie: AUTH_TICKET={tkt}; b64={b64}; pct={pct}");
    let json_echo = serde_json::json!({"isError": true, "message": echo, "token": tok, "session": {"ticket": tkt}});
    vec![
        ResponseTemplate::new(200).set_body_json(json_echo.clone()),
        ResponseTemplate::new(400).set_body_json(json_echo),
        ResponseTemplate::new(500).set_body_string(echo.clone()),
        ResponseTemplate::new(200).set_body_string(format!("<html>{echo}</html>")),
        ResponseTemplate::new(401).set_body_string(echo.clone()),
        ResponseTemplate::new(429)
            .insert_header("retry-after", "0")
            .set_body_string(echo.clone()),
        ResponseTemplate::new(302)
            .insert_header("location", format!("http://127.0.0.1:9/?t={tok}").as_str()),
        ResponseTemplate::new(200)
            .set_body_string(echo)
            .set_delay(Duration::from_millis(600)),
    ]
}

fn client(base: &str, tok: &str, tkt: &str) -> (ClientConfig, MarketClient) {
    let mut cfg = ClientConfig::new(base, credentials(tok, tkt)).unwrap();
    cfg.rate_limit = std::num::NonZeroU32::new(1000).unwrap();
    cfg.read_retries = 1;
    cfg.request_timeout = Duration::from_millis(400);
    let client = MarketClient::new(cfg.clone(), Arc::new(Metrics::new())).unwrap();
    (cfg, client)
}

async fn run_everything(tok: &str, tkt: &str) -> (Vec<String>, Vec<MarketError>) {
    let server = MockServer::start().await;
    let (cfg, market) = client(&server.uri(), tok, tkt);
    let mut shown = vec![format!("{cfg:?}"), format!("{market:?}")];
    let mut errors = Vec::new();
    for answer in hostile_answers(tok, tkt) {
        server.reset().await;
        Mock::given(any()).respond_with(answer).mount(&server).await;
        errors.extend(call_every_operation(&market).await);
    }
    let (_, unreachable) = client(&closed_port_base().await, tok, tkt);
    errors.extend(call_every_operation(&unreachable).await);
    shown.extend(
        errors
            .iter()
            .flat_map(|e| [e.to_string(), format!("{e:?}")]),
    );
    (shown, errors)
}

#[tokio::test]
async fn the_canary_token_and_ticket_appear_nowhere() {
    let (tok, tkt) = (
        format!("canary-tok-{}", random_suffix()),
        format!("canary-tkt-{}", random_suffix()),
    );
    let logs = Buffer::default();
    let writer = logs.clone();
    // This thread's subscriber, not the process's: the other suites in this binary run
    // beside it and must neither log into this buffer nor lose their own subscriber. The
    // test runs on a current-thread runtime, so every task of the client logs here; `log`
    // records (rustls, reqwest) reach it through the `log` bridge. tracing-core treats a
    // lone scoped subscriber as the only one, and a callsite first hit on another thread
    // would be cached as disabled everywhere; a second live dispatcher makes it ask each
    // thread's own subscriber instead.
    let _ = tracing_log::LogTracer::init();
    let _second = tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default());
    let _scope = tracing::subscriber::set_default(
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish(),
    );

    let (shown, errors) = run_everything(&tok, &tkt).await;

    let log_text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(
        log_text.contains("marketplace answer"),
        "TRACE logs were not captured"
    );
    assert!(
        errors.len() >= 70,
        "only {} failures exercised",
        errors.len()
    );
    for form in forms(&tok).into_iter().chain(forms(&tkt)) {
        assert!(!log_text.contains(&form), "a log line shows `{form}`");
        for text in &shown {
            assert!(!text.contains(&form), "`{form}` shown in: {text}");
        }
    }
}

//! The notify file (`--notify-file` / `LINKRUNNER_NOTIFY_FILE`): where notifications go, in
//! which format, for which events. YAML (so JSON too), strict (unknown keys are an error with
//! their position) and size-limited. The addresses are secrets (a Slack webhook URL or a
//! Telegram bot token lets anyone post): held as [`SecretString`], never in an error, a log
//! line, a metric or the journal; an error about an address says which endpoint, not what.
//!
//! ```yaml
//! interval_seconds: 60          # how often the journal is read for events (default 60)
//! endpoints:
//!   - name: ops-slack           # shown in logs instead of the address
//!     format: slack             # generic (default) | slack | telegram
//!     address: https://hooks.slack.com/services/T000/B000/XXXX
//!     events: [halted, waiting_for_operator, uncertain, links_lost]   # default: every kind
//!   - name: ops-telegram
//!     format: telegram
//!     address: https://api.telegram.org/bot123:ABC/sendMessage
//!     chat_id: -1001234567890
//! ```

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use secrecy::SecretString;
use serde::Deserialize;

use super::events::EventKind;

/// Largest notify file read, in bytes.
const MAX_NOTIFY_FILE_BYTES: u64 = 64 * 1024;

/// The body a receiver accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Format {
    /// `{"event", "campaign", "reason", "command", "key", "since", "text"}`.
    #[default]
    Generic,
    /// A Slack incoming webhook: `{"text": …}`.
    Slack,
    /// Telegram's `sendMessage`: `{"chat_id": …, "text": …}`.
    Telegram,
}

impl Format {
    #[cfg(test)]
    pub(crate) const ALL: [Format; 3] = [Format::Generic, Format::Slack, Format::Telegram];

    /// The `format` label of the notification counters.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Format::Generic => "generic",
            Format::Slack => "slack",
            Format::Telegram => "telegram",
        }
    }
}

/// A Telegram chat: its numeric id or `@channelname`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub(crate) enum ChatId {
    Id(i64),
    Name(String),
}

/// One receiver.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// What logs call it (`endpoint N` when the file names none).
    pub(crate) name: String,
    pub(crate) address: SecretString,
    pub(crate) format: Format,
    pub(crate) chat_id: Option<ChatId>,
    /// The events it wants.
    events: Vec<EventKind>,
    /// How long one delivery may take.
    pub(crate) timeout: Duration,
    /// Tries after the first, with backoff, when the receiver fails or does not answer.
    pub(crate) retries: usize,
}

impl Endpoint {
    pub(crate) fn wants(&self, kind: EventKind) -> bool {
        self.events.contains(&kind)
    }
}

/// What a notify file says.
#[derive(Debug, Clone)]
pub struct NotifySettings {
    /// How often the journal is read for events.
    pub(crate) interval: Duration,
    pub(crate) endpoints: Vec<Endpoint>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    interval_seconds: Option<u64>,
    endpoints: Vec<RawEndpoint>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEndpoint {
    name: Option<String>,
    address: String,
    #[serde(default)]
    format: Format,
    chat_id: Option<ChatId>,
    events: Option<Vec<EventKind>>,
    timeout_seconds: Option<u64>,
    retries: Option<usize>,
}

/// Reads and checks a notify file; the error is `path:line:column: message` and never
/// holds an address.
pub fn load_notify_file(path: &Path) -> Result<NotifySettings, String> {
    let shown = path.display();
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_NOTIFY_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("{shown}: cannot read: {e}"))?;
    parse_notify_file(&bytes).map_err(|e| format!("{shown}:{e}"))
}

/// Parses a notify file's bytes; the error is `line:column: message`.
pub fn parse_notify_file(bytes: &[u8]) -> Result<NotifySettings, String> {
    if bytes.len() as u64 > MAX_NOTIFY_FILE_BYTES {
        return Err(format!(
            "1:1: file is larger than {MAX_NOTIFY_FILE_BYTES} bytes"
        ));
    }
    let text =
        std::str::from_utf8(bytes).map_err(|_| "1:1: file is not valid UTF-8".to_string())?;
    let options = serde_saphyr::options! { with_snippet: false };
    let raw: RawFile = serde_saphyr::from_str_with_options(text, options).map_err(|e| {
        let (line, column) = e
            .location()
            .map_or((1, 1), |l| (l.line().max(1), l.column().max(1)));
        format!("{line}:{column}: {}", redact_urls(&e.to_string()))
    })?;
    let interval = bounded("interval_seconds", raw.interval_seconds, 60, 1..=3600)?;
    if raw.endpoints.is_empty() {
        return Err("1:1: `endpoints` is empty: name at least one".into());
    }
    let endpoints = raw
        .endpoints
        .into_iter()
        .enumerate()
        .map(|(i, e)| endpoint(i + 1, e))
        .collect::<Result<_, _>>()?;
    Ok(NotifySettings {
        interval: Duration::from_secs(interval),
        endpoints,
    })
}

fn endpoint(n: usize, e: RawEndpoint) -> Result<Endpoint, String> {
    let name = e.name.unwrap_or_else(|| format!("endpoint {n}"));
    let whose = |what: &str| format!("1:1: endpoint {n} (`{name}`): {what}");
    if !is_http_url(&e.address) {
        return Err(whose(
            "`address` is not an absolute http(s) URL (not shown: addresses are secrets)",
        ));
    }
    match (e.format, &e.chat_id) {
        (Format::Telegram, None) => return Err(whose("format `telegram` needs `chat_id`")),
        (Format::Generic | Format::Slack, Some(_)) => {
            return Err(whose("`chat_id` is only for format `telegram`"));
        }
        _ => {}
    }
    let timeout =
        bounded("timeout_seconds", e.timeout_seconds, 10, 1..=120).map_err(|m| whose(&m))?;
    let retries = e.retries.unwrap_or(5);
    if retries > 10 {
        return Err(whose("`retries` must be at most 10"));
    }
    Ok(Endpoint {
        name,
        address: SecretString::from(e.address),
        format: e.format,
        chat_id: e.chat_id,
        events: e.events.unwrap_or_else(|| EventKind::ALL.to_vec()),
        timeout: Duration::from_secs(timeout),
        retries,
    })
}

fn bounded(
    key: &str,
    value: Option<u64>,
    default: u64,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, String> {
    let v = value.unwrap_or(default);
    match range.contains(&v) {
        true => Ok(v),
        false => Err(format!(
            "1:1: `{key}` must be within {}..={}",
            range.start(),
            range.end()
        )),
    }
}

fn is_http_url(text: &str) -> bool {
    url::Url::parse(text)
        .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
}

/// `text` with every `http://…` or `https://…` replaced: a parser's message may quote a
/// value, and an address must never reach an error.
fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = ["http://", "https://"]
        .iter()
        .filter_map(|p| rest.find(p))
        .min()
    {
        out.push_str(&rest[..i]);
        out.push_str("[redacted]");
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ','))
            .unwrap_or(tail.len());
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use secrecy::ExposeSecret as _;

    use super::*;

    const SECRET: &str = "https://hooks.example/T0/B0/canary-7f3a";

    #[test]
    fn a_file_gives_its_endpoints_with_defaults() {
        let text = format!(
            "endpoints:\n  - address: {SECRET}\n    format: slack\n  - name: tg\n    format: telegram\n    address: http://127.0.0.1:9/bot1/sendMessage\n    chat_id: -100\n    events: [halted]\n"
        );
        let s = parse_notify_file(text.as_bytes()).unwrap();
        assert_eq!(s.interval, Duration::from_secs(60));
        assert_eq!(s.endpoints[0].name, "endpoint 1");
        assert_eq!(s.endpoints[0].address.expose_secret(), SECRET);
        assert_eq!(s.endpoints[0].events, EventKind::ALL.to_vec());
        assert_eq!(s.endpoints[1].chat_id, Some(ChatId::Id(-100)));
        assert!(s.endpoints[1].wants(EventKind::Halted));
        assert!(!s.endpoints[1].wants(EventKind::Uncertain));
        assert!(
            !format!("{s:?}").contains("canary"),
            "Debug shows no address"
        );
    }

    #[test]
    fn json_is_a_notify_file_too() {
        let text =
            format!(r#"{{"interval_seconds": 5, "endpoints": [{{"address": "{SECRET}"}}]}}"#);
        let s = parse_notify_file(text.as_bytes()).unwrap();
        assert_eq!(s.interval, Duration::from_secs(5));
        assert_eq!(s.endpoints[0].format, Format::Generic);
    }

    #[test]
    fn errors_say_where_and_never_show_the_address() {
        let cases = [
            format!("endpoints:\n  - address: {SECRET}\n    adress: x\n"),
            format!("endpoints:\n  - address: {SECRET}\n    format: telegram\n"),
            format!("endpoints:\n  - address: {SECRET}\n    events: [halt]\n"),
            format!("endpoints:\n  - address: {SECRET}\n    retries: [{SECRET}]\n"),
            "endpoints:\n  - address: ftp://canary-7f3a\n".to_string(),
            format!("interval_seconds: 0\nendpoints:\n  - address: {SECRET}\n"),
            "endpoints: []\n".to_string(),
        ];
        for text in cases {
            let e = parse_notify_file(text.as_bytes()).unwrap_err();
            assert!(!e.contains("canary"), "{e}");
            assert!(e.split(':').next().unwrap().parse::<u64>().is_ok(), "{e}");
        }
    }

    #[test]
    fn urls_in_a_message_are_redacted() {
        assert_eq!(
            redact_urls("bad `https://a.b/c?d` and http://x y"),
            "bad `[redacted]` and [redacted] y"
        );
    }
}

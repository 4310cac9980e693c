//! Redaction of answer bodies before they reach an error, a log line or the journal.
//!
//! Two layers: every occurrence of our own secrets (token, ticket — raw, percent-encoded and
//! base64) is replaced, then values under keys that look secret (`token`, `ticket`,
//! `password`, `secret`, `authorization`, `cookie`, `session`) are replaced, in JSON and in
//! `key=value` text alike. Only then is the text capped, so a cap never leaves half a secret.

use base64::Engine as _;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use secrecy::{ExposeSecret, SecretString};
use serde_json::Value;

pub(crate) const REDACTED: &str = "[REDACTED]";

/// Bodies shown in errors and logs are cut to this many bytes.
pub(crate) const BODY_CAP: usize = 2048;

const SECRET_KEY_WORDS: [&str; 7] = [
    "token",
    "ticket",
    "password",
    "secret",
    "authorization",
    "cookie",
    "session",
];

/// How many secrets a redactor remembers: the current token, ticket and API key plus the
/// latest ones they replaced (an old token can still be echoed by a late answer), bounded so
/// that months of refreshes do not grow it without end.
const REMEMBERED_SECRETS: usize = 16;

/// Replaces known secrets and secret-looking values in text. Holds its secrets as
/// [`SecretString`]s, so its `Debug` shows none of them. Clones share what they know: the
/// credentials provider teaches every clone a refreshed token with [`Redactor::remember`].
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    known: std::sync::Arc<std::sync::RwLock<Known>>,
}

#[derive(Default)]
struct Known {
    /// Newest first, at most [`REMEMBERED_SECRETS`].
    secrets: Vec<SecretString>,
    /// Every wire form of every secret, longest first.
    variants: Vec<SecretString>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secret forms)", self.read().variants.len())
    }
}

impl Redactor {
    /// A redactor for these secrets and the forms they take on the wire.
    #[cfg(test)]
    pub(crate) fn new(secrets: &[&SecretString]) -> Redactor {
        let r = Redactor::default();
        r.remember(secrets);
        r
    }

    /// Adds secrets (a refreshed token, a new ticket); the oldest beyond the bound are dropped.
    pub(crate) fn remember(&self, secrets: &[&SecretString]) {
        let mut known = self.known.write().unwrap_or_else(|e| e.into_inner());
        for s in secrets {
            let raw = s.expose_secret();
            if raw.is_empty() {
                continue;
            }
            known.secrets.retain(|k| k.expose_secret() != raw);
            known.secrets.insert(0, (*s).clone());
        }
        known.secrets.truncate(REMEMBERED_SECRETS);
        known.variants = variants_of(&known.secrets);
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Known> {
        self.known.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Redacts free text (an error reason, a message) without capping it.
    pub(crate) fn text(&self, text: &str) -> String {
        redact_key_values(&self.secrets(text))
    }

    /// Redacts an answer body and caps it at [`BODY_CAP`] bytes.
    pub(crate) fn body(&self, body: &[u8]) -> String {
        let scrubbed = self.secrets(&String::from_utf8_lossy(body));
        let redacted = match serde_json::from_str::<Value>(&scrubbed) {
            Ok(mut v) => {
                redact_json(&mut v);
                v.to_string()
            }
            Err(_) => redact_key_values(&scrubbed),
        };
        cap(&redacted, BODY_CAP)
    }

    fn secrets(&self, text: &str) -> String {
        let mut out = text.to_string();
        for v in &self.read().variants {
            let v = v.expose_secret();
            if out.contains(v) {
                out = out.replace(v, REDACTED);
            }
        }
        out
    }
}

/// The raw, percent-encoded and base64 forms of each secret, longest first, so a secret
/// that contains another is replaced whole.
fn variants_of(secrets: &[SecretString]) -> Vec<SecretString> {
    let mut variants: Vec<String> = Vec::new();
    for s in secrets {
        let raw = s.expose_secret();
        variants.push(raw.to_string());
        variants.push(utf8_percent_encode(raw, NON_ALPHANUMERIC).to_string());
        variants.push(base64::engine::general_purpose::STANDARD.encode(raw));
        variants.push(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw));
    }
    variants.sort_by_key(|v| std::cmp::Reverse(v.len()));
    variants.dedup();
    variants.into_iter().map(SecretString::from).collect()
}

fn key_looks_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    SECRET_KEY_WORDS.iter().any(|w| k.contains(w))
}

/// Replaces values under secret-looking keys, also inside strings that hold JSON objects
/// (the marketplace's `metaData` is one) or `key=value` text.
pub(crate) fn redact_json(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, val) in map.iter_mut() {
                if key_looks_secret(k) {
                    *val = Value::String(REDACTED.to_string());
                } else {
                    redact_json(val);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_json),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(mut inner @ Value::Object(_)) => {
                redact_json(&mut inner);
                *s = inner.to_string();
            }
            _ => *s = redact_key_values(s),
        },
        _ => {}
    }
}

/// Text form: `token=abc`, `"session": "abc"`, `Cookie: a=b` → the value is replaced.
fn redact_key_values(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    while let Some((start, end)) = next_secret_value(&lower, pos) {
        out.push_str(&text[pos..start]);
        out.push_str(REDACTED);
        pos = end;
    }
    out.push_str(&text[pos..]);
    out
}

/// The byte range of the next value that follows a secret-looking key at or after `from`.
fn next_secret_value(lower: &str, from: usize) -> Option<(usize, usize)> {
    let mut search = from;
    loop {
        let (word_at, word) = SECRET_KEY_WORDS
            .iter()
            .filter_map(|w| lower[search..].find(w).map(|i| (search + i, *w)))
            .min_by_key(|(i, _)| *i)?;
        let after_key = skip_key_rest(lower, word_at + word.len());
        if let Some(range) = value_range(lower, after_key) {
            return Some(range);
        }
        search = word_at + word.len();
    }
}

/// Skips the rest of an identifier (`sessToken` → past `Token`) and a closing quote.
fn skip_key_rest(s: &str, mut i: usize) -> usize {
    let b = s.as_bytes();
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'-') {
        i += 1;
    }
    while i < b.len() && (b[i] == b'"' || b[i] == b'\\' || b[i] == b'\'') {
        i += 1;
    }
    i
}

/// After a key: optional spaces, `:` or `=`, optional spaces and quote, then the value up to
/// its delimiter. `None` when no separator follows (the word was not a key).
fn value_range(s: &str, mut i: usize) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    while i < b.len() && b[i] == b' ' {
        i += 1;
    }
    if i >= b.len() || (b[i] != b':' && b[i] != b'=') {
        return None;
    }
    i += 1;
    while i < b.len() && (b[i] == b' ' || b[i] == b'"' || b[i] == b'\\' || b[i] == b'\'') {
        i += 1;
    }
    let start = i;
    let stop = |c: u8| matches!(c, b'"' | b'\'' | b'\\' | b',' | b';' | b'&' | b'}' | b']');
    let marker = REDACTED.to_ascii_lowercase();
    while i < b.len() && !stop(b[i]) && !b[i].is_ascii_whitespace() {
        // An already redacted part is kept whole: its `]` does not end the value.
        i += if b[i..].starts_with(marker.as_bytes()) {
            marker.len()
        } else {
            1
        };
    }
    (i > start && &b[start..i] != marker.as_bytes()).then_some((start, i))
}

/// Cuts `text` to at most `max` bytes on a character boundary, saying how much was cut.
pub(crate) fn cap(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..end], text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor() -> Redactor {
        let tok = SecretString::from("tok-123/+=");
        let tkt = SecretString::from("tkt-456");
        Redactor::new(&[&tok, &tkt])
    }

    #[test]
    fn a_secret_remembered_later_is_redacted_by_every_clone() {
        let r = redactor();
        let clone = r.clone();
        r.remember(&[&SecretString::from("tok-new-789")]);
        assert_eq!(clone.text("x tok-new-789 y"), "x [REDACTED] y");
        assert_eq!(clone.text("a tkt-456"), "a [REDACTED]");
    }

    #[test]
    fn only_the_latest_secrets_are_remembered() {
        let r = Redactor::default();
        for i in 0..(REMEMBERED_SECRETS + 4) {
            r.remember(&[&SecretString::from(format!("secret-number-{i:03}"))]);
        }
        assert_eq!(r.text("secret-number-000"), "secret-number-000");
        let last = format!("secret-number-{:03}", REMEMBERED_SECRETS + 3);
        assert_eq!(r.text(&last), REDACTED);
    }

    #[test]
    fn our_secrets_are_replaced_in_every_wire_form() {
        let r = redactor();
        let b64 = base64::engine::general_purpose::STANDARD.encode("tok-123/+=");
        let text = format!("a tok-123/+= b tok%2D123%2F%2B%3D c {b64} d tkt-456");
        let out = r.body(text.as_bytes());
        assert!(!out.contains("tok-123"), "{out}");
        assert!(!out.contains("tkt-456"), "{out}");
        assert!(!out.contains(&b64), "{out}");
    }

    #[test]
    fn values_under_secret_looking_json_keys_are_replaced() {
        let out = redactor().body(br#"{"sessToken":"abc","nested":{"Password":"p"},"ok":1}"#);
        assert!(!out.contains("abc") && !out.contains("\"p\""), "{out}");
        assert!(out.contains("\"ok\":1"), "{out}");
    }

    #[test]
    fn secret_keys_inside_a_json_string_are_replaced() {
        let body =
            br#"{"metaData":"{\"sessToken\":\"opaque\",\"cgeoip_country_iso_code\":\"RU\"}"}"#;
        let out = redactor().body(body);
        assert!(!out.contains("opaque"), "{out}");
        assert!(out.contains("RU"), "{out}");
    }

    #[test]
    fn key_value_text_that_is_not_json_is_redacted() {
        let out = redactor().text("upstream said: Cookie: AUTH=xyz; session=abc&x=1");
        assert!(!out.contains("xyz") && !out.contains("abc"), "{out}");
        assert!(out.contains("x=1"), "{out}");
    }

    #[test]
    fn a_secret_key_holding_an_object_is_replaced_whole() {
        let out = redactor().body(br#"{"session":{"id":"s-1"},"ok":true}"#);
        assert!(!out.contains("s-1"), "{out}");
    }

    #[test]
    fn cut_json_is_still_redacted_by_key() {
        let out = redactor().body(br#"{"items":[1,2],"token":"abcdef","x":"#);
        assert!(!out.contains("abcdef"), "{out}");
    }

    #[test]
    fn long_bodies_are_capped_on_a_char_boundary() {
        let body = "я".repeat(BODY_CAP);
        let out = redactor().body(body.as_bytes());
        assert!(out.len() < BODY_CAP + 40, "{}", out.len());
        assert!(out.ends_with(&format!("({} bytes in all)", body.len())));
    }

    #[test]
    fn a_value_holding_a_redacted_secret_is_replaced_whole() {
        let out = redactor().text("Cookie: AUTH_TICKET=tkt-456; x=1");
        assert_eq!(out, "Cookie: [REDACTED]; x=1");
    }

    #[test]
    fn non_ascii_values_are_redacted_without_panicking() {
        let out = redactor().text("password=пароль, ok");
        assert_eq!(out, "password=[REDACTED], ok");
    }

    #[test]
    fn words_that_are_not_keys_are_left_alone() {
        let text = "the session expired";
        assert_eq!(redactor().text(text), text);
    }

    #[test]
    fn debug_shows_no_secret() {
        let shown = format!("{:?}", redactor());
        assert!(
            !shown.contains("tok-") && !shown.contains("tkt-"),
            "{shown}"
        );
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn no_text_around_a_secret_lets_it_through(before in ".{0,40}", after in ".{0,40}") {
            let secret = SecretString::from("s3cr3t-canary");
            let r = Redactor::new(&[&secret]);
            let body = format!("{before}s3cr3t-canary{after}");
            prop_assert!(!r.body(body.as_bytes()).contains("s3cr3t-canary"));
            prop_assert!(!r.text(&body).contains("s3cr3t-canary"));
        }
    }
}

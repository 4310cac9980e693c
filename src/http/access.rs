//! Who may read the HTTP endpoint, checked before any route but the probes:
//!
//! 1. **Host allow-list.** The `Host` of a request (or the authority of an absolute URI)
//!    must be a loopback name (`localhost`, `*.localhost`), an IP literal (Prometheus scrapes
//!    by pod IP), or a name given with `--http-allow-host`. A browser tricked by DNS
//!    rebinding sends the attacker's name (`evil.example`) and is refused with 403, so a page
//!    on another site cannot read `/api/v1/...` through the victim's browser.
//! 2. **Token.** With `--http-token-file`, every route but the probes needs the token, as
//!    `Authorization: Bearer TOKEN` or as the password of HTTP Basic auth (any user name),
//!    so a browser can open the status page. Missing or wrong: 401 with a Basic challenge.
//!
//! `/healthz` and `/readyz` need neither: a kubelet probes by IP without credentials, and
//! they say nothing but "alive" and "ready".

use std::fmt;
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use secrecy::{ExposeSecret, SecretString};

use crate::metrics::Metrics;

/// The shortest token accepted: shorter ones can be guessed over the network.
pub(crate) const MIN_TOKEN_LEN: usize = 16;
/// Names a token file may hold at most (one token and a newline).
const MAX_TOKEN_FILE: u64 = 4096;

/// Why an access setting was refused at start.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error(
        "--http-allow-host `{0}` is not a host name (letters, digits, `-` and `.`; no port, no scheme)"
    )]
    BadHost(String),
    #[error("cannot read the HTTP token from {path}: {source}")]
    TokenUnreadable {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "the HTTP token file {path} is empty, longer than 4 KiB, or holds a token shorter than {MIN_TOKEN_LEN} characters or with spaces or control characters"
    )]
    TokenInvalid { path: String },
}

/// The token every route but the probes requires. `Debug` never shows it.
#[derive(Clone)]
pub struct AccessToken(SecretString);

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AccessToken(<redacted>)")
    }
}

impl AccessToken {
    /// Reads the token from `path`: one line, trailing newline trimmed, at least
    /// [`MIN_TOKEN_LEN`] visible ASCII characters. The error names the file, never its content.
    pub(crate) fn from_file(path: &Path) -> Result<AccessToken, AccessError> {
        let shown = path.display().to_string();
        let len = std::fs::metadata(path)
            .map_err(|source| AccessError::TokenUnreadable {
                path: shown.clone(),
                source,
            })?
            .len();
        if len > MAX_TOKEN_FILE {
            return Err(AccessError::TokenInvalid { path: shown });
        }
        let text =
            std::fs::read_to_string(path).map_err(|source| AccessError::TokenUnreadable {
                path: shown.clone(),
                source,
            })?;
        AccessToken::new(text.trim_end_matches(['\n', '\r']))
            .ok_or(AccessError::TokenInvalid { path: shown })
    }

    /// A token of at least [`MIN_TOKEN_LEN`] visible ASCII characters.
    pub fn new(token: &str) -> Option<AccessToken> {
        let ok = token.len() >= MIN_TOKEN_LEN && token.bytes().all(|b| b.is_ascii_graphic());
        ok.then(|| AccessToken(SecretString::from(token.to_string())))
    }

    /// The token itself, to send it (`plan --state-token-file`).
    pub(crate) fn expose(&self) -> &str {
        self.0.expose_secret()
    }

    /// Whether `given` is the token, in time independent of where they differ.
    fn matches(&self, given: &[u8]) -> bool {
        let want = self.0.expose_secret().as_bytes();
        want.len() == given.len() && want.iter().zip(given).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0
    }

    /// Whether the `Authorization` header carries the token: `Bearer TOKEN`, or `Basic`
    /// with the token as the password.
    fn admits(&self, headers: &HeaderMap) -> bool {
        let Some(value) = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
        else {
            return false;
        };
        let (scheme, rest) = value.trim().split_once(' ').unwrap_or((value, ""));
        let rest = rest.trim();
        if scheme.eq_ignore_ascii_case("bearer") {
            return self.matches(rest.as_bytes());
        }
        if scheme.eq_ignore_ascii_case("basic") {
            let Ok(pair) = base64::engine::general_purpose::STANDARD.decode(rest) else {
                return false;
            };
            let password = pair
                .iter()
                .position(|&b| b == b':')
                .map_or(&pair[..0], |i| &pair[i + 1..]);
            return self.matches(password);
        }
        false
    }
}

/// Host names the endpoint answers to besides loopback names and IP literals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedHosts {
    names: Vec<String>,
}

impl AllowedHosts {
    /// `names` as given to `--http-allow-host`: plain DNS names, compared without case and
    /// without a trailing dot.
    pub fn new<S: AsRef<str>>(names: &[S]) -> Result<AllowedHosts, AccessError> {
        let mut out = Vec::with_capacity(names.len());
        for n in names {
            let n = n.as_ref().trim();
            let valid = !n.is_empty()
                && n.len() <= 253
                && n.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
            if !valid {
                return Err(AccessError::BadHost(n.escape_debug().to_string()));
            }
            out.push(n.trim_end_matches('.').to_ascii_lowercase());
        }
        Ok(AllowedHosts { names: out })
    }

    /// Whether a request naming `host` (a `Host` header: name or IP literal, maybe a port)
    /// is answered.
    pub(crate) fn allows(&self, host: &str) -> bool {
        let name = host_part(host.trim());
        if name.is_empty() {
            return false;
        }
        if name.starts_with('[') {
            return name
                .strip_prefix('[')
                .and_then(|n| n.strip_suffix(']'))
                .is_some_and(|ip| ip.parse::<std::net::Ipv6Addr>().is_ok());
        }
        if name.parse::<IpAddr>().is_ok() {
            return true;
        }
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        name == "localhost" || name.ends_with(".localhost") || self.names.contains(&name)
    }
}

/// `host:port` → `host`; `[v6]:port` → `[v6]`.
fn host_part(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |i| &host[..=i]);
    }
    match host.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => host,
    }
}

/// The access rules of one endpoint: the allow-list and, optionally, the token.
#[derive(Debug, Clone, Default)]
pub struct Access {
    pub hosts: AllowedHosts,
    pub token: Option<AccessToken>,
}

/// What the access middleware reads.
#[derive(Clone)]
pub(super) struct Guard {
    pub(crate) access: Arc<Access>,
    pub(crate) metrics: Arc<Metrics>,
}

impl Guard {
    /// Counts a refusal by `reason` (`linkrunner_http_requests_refused_total`) and says
    /// `error` as the answer's JSON body.
    fn refused(&self, reason: &str, error: &str) -> Json<serde_json::Value> {
        let refused = &self.metrics.http.requests_refused_total;
        refused.with_label_values(&[reason]).inc();
        Json(serde_json::json!({ "error": error }))
    }
}

/// The middleware in front of every route but the probes: 403 for a Host not allowed,
/// 401 without the token (when one is set).
pub(super) async fn guard(State(g): State<Guard>, req: Request, next: Next) -> Response {
    let host = req
        .uri()
        .authority()
        .map(|a| {
            a.as_str()
                .rsplit('@')
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .or_else(|| {
            req.headers()
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .map(str::to_string)
        })
        .unwrap_or_default();
    if !g.access.hosts.allows(&host) {
        let body = g.refused(
            "host",
            "host not allowed: use an IP address or localhost, or add this name with --http-allow-host",
        );
        return (StatusCode::FORBIDDEN, body).into_response();
    }
    if let Some(token) = &g.access.token
        && !token.admits(req.headers())
    {
        let body = g.refused(
            "token",
            "a token is required: Authorization: Bearer TOKEN, or the token as the Basic auth password",
        );
        return (
            StatusCode::UNAUTHORIZED,
            [(
                header::WWW_AUTHENTICATE,
                "Basic realm=\"linkrunner\", charset=\"UTF-8\"",
            )],
            body,
        )
            .into_response();
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn loopback_names_and_ip_literals_are_allowed_by_default_and_other_names_are_not() {
        let h = AllowedHosts::default();
        for ok in [
            "localhost",
            "localhost:9464",
            "LOCALHOST.",
            "app.localhost:1",
            "127.0.0.1:9464",
            "10.1.2.3",
            "[::1]:9464",
            "[fe80::1]",
        ] {
            assert!(h.allows(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:9464",
            "localhost.evil.example",
            "",
            "[not-ip]",
            "127.0.0.1.evil.example",
        ] {
            assert!(!h.allows(bad), "{bad}");
        }
    }

    #[test]
    fn configured_names_are_allowed_without_case_or_trailing_dot() {
        let h = AllowedHosts::new(&["Linkrunner.Team.svc."]).unwrap();
        assert!(h.allows("linkrunner.team.svc:9464"));
        assert!(!h.allows("evil.example"));
        assert!(AllowedHosts::new(&["http://x"]).is_err());
        assert!(AllowedHosts::new(&["x:80"]).is_err());
    }

    fn auth(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn the_token_is_accepted_as_bearer_or_as_the_basic_password_only() {
        let t = AccessToken::new("s3cret-token-0123456789").unwrap();
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        assert!(t.admits(&auth("Bearer s3cret-token-0123456789")));
        assert!(t.admits(&auth("bearer s3cret-token-0123456789")));
        assert!(t.admits(&auth(&format!(
            "Basic {}",
            b64("any:s3cret-token-0123456789")
        ))));
        assert!(t.admits(&auth(&format!("Basic {}", b64(":s3cret-token-0123456789")))));
        assert!(!t.admits(&auth("Bearer s3cret-token-012345678")));
        assert!(!t.admits(&auth(&format!("Basic {}", b64("s3cret-token-0123456789:")))));
        assert!(!t.admits(&auth("Basic !!!")));
        assert!(!t.admits(&HeaderMap::new()));
    }

    #[test]
    fn short_or_spaced_tokens_are_refused_and_debug_hides_the_token() {
        assert!(AccessToken::new("short").is_none());
        assert!(AccessToken::new("has a space in it 1234").is_none());
        let t = AccessToken::new("s3cret-token-0123456789").unwrap();
        assert!(!format!("{t:?}").contains("s3cret"));
    }
}

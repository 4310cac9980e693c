//! Who may call the sandbox, as the marketplace's public clients describe the real one:
//!
//! - the configured token and ticket; with `token_ttl`, the configured token expires that
//!   long after the sandbox started, and every token the sandbox issues expires that long
//!   after it was issued (401 `token expired`);
//! - with `login` configured, `POST {prefix}/login` with `{"login", "apiToken"}` answers a
//!   fresh `AUTH_TICKET` cookie, and `GET {prefix}/auth` with a known ticket answers
//!   `{"token": JWT}` whose `exp` is its expiry;
//! - `POST {prefix}/__sandbox/token` issues a token without a login (an external refresher
//!   rotating a file, in tests); `GET {prefix}/__sandbox/auth` answers the [`AuthStats`].
//!
//! Every token and ticket ever issued is kept, so a canary test can look for each of them.
//!
//! Extra accounts ([`crate::SandboxAccount`]) have fixed tokens and tickets that never expire;
//! the login and issued tokens are the default account's. A request is the account's whose
//! token it carries, and its ticket must be that account's too (else 403, as a wrong ticket).

use std::collections::HashMap;
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode, header};
use base64::Engine as _;
use chrono::{DateTime, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::config::{SandboxAuth, SandboxConfig, SandboxLogin};
use super::state::AccountIx;
use crate::clock::SharedClock;

/// What the sandbox's authentication saw, for tests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AuthStats {
    /// Logins accepted and refused.
    pub logins: u64,
    pub logins_refused: u64,
    /// Tokens issued (by `/auth` and by `__sandbox/token`).
    pub tokens_issued: u64,
    /// Requests refused because their token had expired.
    pub expired: u64,
}

/// Why a request is refused: status, ledger outcome, message.
pub(crate) type AuthRefusal = (StatusCode, &'static str, &'static str);

pub(crate) struct Auth {
    scheme: SandboxAuth,
    ttl: Option<Duration>,
    login: Option<SandboxLogin>,
    /// Every accepted token, when it expires (`None`: never) and whose it is.
    tokens: HashMap<String, (Option<DateTime<Utc>>, AccountIx)>,
    /// Every accepted ticket and whose it is.
    tickets: HashMap<String, AccountIx>,
    /// Every token and ticket ever issued or configured, in order.
    issued: Vec<String>,
    /// How many of `issued`, the first ones, are configured (never revoked).
    configured: usize,
    seq: u64,
    nonce: u128,
    pub(crate) stats: AuthStats,
    clock: SharedClock,
}

impl Auth {
    pub(crate) fn new(cfg: &SandboxConfig) -> Auth {
        let now = cfg.clock.now();
        let expiry = cfg.token_ttl.map(|ttl| now + chrono_of(ttl));
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
            ^ u128::from(cfg.seed);
        let issued: Vec<String> = std::iter::once([&cfg.token, &cfg.ticket])
            .chain(cfg.accounts.iter().map(|a| [&a.token, &a.ticket]))
            .flatten()
            .cloned()
            .collect();
        Auth {
            scheme: cfg.auth_scheme,
            ttl: cfg.token_ttl,
            login: cfg.login.clone(),
            tokens: std::iter::once((cfg.token.clone(), (expiry, 0)))
                .chain(
                    cfg.accounts
                        .iter()
                        .enumerate()
                        .map(|(i, a)| (a.token.clone(), (None, i + 1))),
                )
                .collect(),
            tickets: std::iter::once((cfg.ticket.clone(), 0))
                .chain(
                    cfg.accounts
                        .iter()
                        .enumerate()
                        .map(|(i, a)| (a.ticket.clone(), i + 1)),
                )
                .collect(),
            configured: issued.len(),
            issued,
            seq: 0,
            nonce,
            stats: AuthStats::default(),
            clock: cfg.clock.clone(),
        }
    }

    /// Forgets every token issued so far (a server-side logout of every session): a request
    /// carrying one is answered 401 as for an unknown token. Configured tokens stay valid.
    pub(crate) fn revoke_issued(&mut self) {
        let configured: std::collections::HashSet<&String> =
            self.issued[..self.configured].iter().collect();
        self.tokens.retain(|t, _| configured.contains(t));
    }

    /// The token of the `Authorization` header, in the accepted form.
    fn token_of<'h>(&self, headers: &'h HeaderMap) -> Option<&'h str> {
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        match (self.scheme, given) {
            (_, None) => None,
            (SandboxAuth::Bearer, Some(g)) => g.strip_prefix("Bearer "),
            (SandboxAuth::Raw, Some(g)) => Some(g),
            (SandboxAuth::Either, Some(g)) => Some(g.strip_prefix("Bearer ").unwrap_or(g)),
        }
    }

    /// Whose the request is, before it is authorized (its rate limit and counters): its
    /// token's account, the default account's when the token is no one's.
    pub(crate) fn account_of(&self, headers: &HeaderMap) -> AccountIx {
        self.token_of(headers)
            .and_then(|t| self.tokens.get(t))
            .map_or(0, |(_, account)| *account)
    }

    /// Checks the `Authorization` header (token known and not expired) and the ticket (the
    /// same account's); the account the request is of.
    pub(crate) fn authorize(&mut self, headers: &HeaderMap) -> Result<AccountIx, AuthRefusal> {
        let now = self.clock.now();
        let account = match self.token_of(headers).and_then(|t| self.tokens.get(t)) {
            None => {
                return Err((
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "missing or wrong access token",
                ));
            }
            Some((Some(exp), _)) if now >= *exp => {
                self.stats.expired += 1;
                return Err((StatusCode::UNAUTHORIZED, "unauthorized", "token expired"));
            }
            Some((_, account)) => *account,
        };
        if ticket_of(headers).and_then(|t| self.tickets.get(t)) != Some(&account) {
            return Err((
                StatusCode::FORBIDDEN,
                "forbidden",
                "missing or wrong AUTH_TICKET cookie",
            ));
        }
        Ok(account)
    }

    /// `POST /login`: a fresh ticket for the configured login and API key.
    pub(crate) fn login(&mut self, login: &str, api_key: &str) -> Result<String, AuthRefusal> {
        let Some(account) = &self.login else {
            return Err((StatusCode::NOT_FOUND, "not_found", "login is not enabled"));
        };
        if account.login != login || account.api_key != api_key {
            self.stats.logins_refused += 1;
            return Err((
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "wrong login or apiToken",
            ));
        }
        self.stats.logins += 1;
        let ticket = format!("tkt{}", &self.digest("ticket")[..24]);
        self.tickets.insert(ticket.clone(), 0);
        self.issued.push(ticket.clone());
        Ok(ticket)
    }

    /// `GET /auth`: a token for a known ticket.
    pub(crate) fn token_for(&mut self, headers: &HeaderMap) -> Result<String, AuthRefusal> {
        if self.login.is_none() {
            return Err((StatusCode::NOT_FOUND, "not_found", "login is not enabled"));
        }
        if ticket_of(headers).and_then(|t| self.tickets.get(t)) != Some(&0) {
            return Err((
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "missing or wrong AUTH_TICKET cookie",
            ));
        }
        Ok(self.issue_token())
    }

    /// A new JWT-shaped token, expiring after `token_ttl` (never without one).
    pub(crate) fn issue_token(&mut self) -> String {
        let now = self.clock.now();
        let exp = self.ttl.map(|ttl| now + chrono_of(ttl));
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let header = b64.encode(r#"{"alg":"HS256","typ":"JWT"}"#);
        let mut claims =
            serde_json::json!({ "sub": "sandbox", "iat": now.timestamp(), "jti": self.seq + 1 });
        if let Some(e) = exp {
            claims["exp"] = e.timestamp().into();
        }
        let payload = b64.encode(claims.to_string());
        let signature = b64.encode(self.digest("token"));
        let token = format!("{header}.{payload}.{signature}");
        // Expired tokens are kept a while (they answer "token expired"), then forgotten.
        let forget_before = now - chrono_of(self.ttl.unwrap_or_default() * 10);
        self.tokens
            .retain(|_, (e, _)| e.is_none_or(|e| e > forget_before));
        self.tokens.insert(token.clone(), (exp, 0));
        self.issued.push(token.clone());
        self.stats.tokens_issued += 1;
        token
    }

    /// Every token and ticket configured or issued so far.
    pub(crate) fn issued(&self) -> Vec<String> {
        self.issued.clone()
    }

    fn digest(&mut self, what: &str) -> String {
        self.seq += 1;
        let d = Sha256::digest(format!("{what}/{}/{}", self.nonce, self.seq));
        d.iter().map(|b| format!("{b:02x}")).collect()
    }
}

fn ticket_of(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == "AUTH_TICKET")
        .map(|(_, value)| value)
}

fn chrono_of(d: Duration) -> chrono::Duration {
    chrono::Duration::from_std(d).unwrap_or(chrono::Duration::days(365))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{Clock as _, ManualClock};
    use axum::http::HeaderValue;

    fn headers(token: &str, ticket: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        let auth = HeaderValue::from_str(&format!("Bearer {token}")).unwrap();
        h.insert(header::AUTHORIZATION, auth);
        let cookie = HeaderValue::from_str(&format!("AUTH_TICKET={ticket}")).unwrap();
        h.insert(header::COOKIE, cookie);
        h
    }

    fn config(clock: &std::sync::Arc<ManualClock>) -> SandboxConfig {
        let mut cfg = SandboxConfig::new("tok", "tkt");
        cfg.clock = clock.clone();
        cfg.token_ttl = Some(Duration::from_secs(60));
        cfg.login = Some(SandboxLogin::new("me", "key-1"));
        cfg
    }

    #[test]
    fn tokens_expire_after_the_ttl_and_say_so() {
        let clock = ManualClock::new(Utc::now());
        let mut auth = Auth::new(&config(&clock));
        assert!(auth.authorize(&headers("tok", "tkt")).is_ok());
        clock.advance(chrono::Duration::seconds(60));
        let refused = auth.authorize(&headers("tok", "tkt")).unwrap_err();
        assert_eq!(
            (refused.0, refused.2),
            (StatusCode::UNAUTHORIZED, "token expired")
        );
        let fresh = auth.issue_token();
        assert!(auth.authorize(&headers(&fresh, "tkt")).is_ok());
        assert_eq!(auth.stats.expired, 1);
    }

    #[test]
    fn revoking_forgets_the_issued_tokens_and_keeps_the_configured_one() {
        let clock = ManualClock::new(Utc::now());
        let mut auth = Auth::new(&config(&clock));
        let issued = auth.issue_token();
        auth.revoke_issued();
        let refused = auth.authorize(&headers(&issued, "tkt")).unwrap_err();
        assert_eq!(refused.0, StatusCode::UNAUTHORIZED);
        assert!(auth.authorize(&headers("tok", "tkt")).is_ok());
        let fresh = auth.issue_token();
        assert!(auth.authorize(&headers(&fresh, "tkt")).is_ok());
    }

    #[test]
    fn the_login_gives_a_ticket_that_obtains_a_token_with_its_expiry() {
        let clock = ManualClock::new(Utc::now());
        let mut auth = Auth::new(&config(&clock));
        assert!(auth.login("me", "wrong").is_err());
        let ticket = auth.login("me", "key-1").unwrap();
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("AUTH_TICKET={ticket}")).unwrap(),
        );
        let token = auth.token_for(&h).unwrap();
        assert_eq!(
            jwt_exp(&token),
            (clock.now() + chrono::Duration::seconds(60)).timestamp()
        );
        assert!(auth.authorize(&headers(&token, &ticket)).is_ok());
        assert_eq!((auth.stats.logins, auth.stats.logins_refused), (1, 1));
    }

    /// The `exp` claim of a token, read as a client would (the payload is base64url JSON).
    fn jwt_exp(token: &str) -> i64 {
        let payload = token.split('.').nth(1).expect("a JWT has three parts");
        let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .expect("the payload is base64url");
        let claims: serde_json::Value = serde_json::from_slice(&json).expect("JSON claims");
        claims["exp"].as_i64().expect("an integer exp")
    }
}

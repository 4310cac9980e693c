//! The built-in login, as the marketplace's public clients describe it: `POST {base}/login`
//! with `{"login", "apiToken"}` answers the `AUTH_TICKET` cookie; `GET {base}/auth` with that
//! cookie answers the token (a JWT) that every `/rest/` call carries.
//!
//! Neither answer is ever logged, traced or kept: they hold the secrets. Errors carry the
//! step and the HTTP status only. The shape of the `/auth` answer is not documented, so the
//! token is taken from a JSON string, a JSON object's `token` / `accessToken` /
//! `access_token` / `jwt` (also under `data`), or the plain text of the body.

use reqwest::header::{ACCEPT, CONTENT_TYPE, COOKIE, HeaderValue, SET_COOKIE};
use secrecy::{ExposeSecret as _, SecretString};
use serde_json::Value;

use super::super::body::read_capped;
use super::super::classify;
use super::super::settings::BaseUrl;
use super::source::LoginSettings;

/// The login answers are small; anything larger is not a login answer.
const MAX_LOGIN_ANSWER: usize = 64 * 1024;

/// Which request of the login failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LoginStep {
    Login,
    Auth,
}

impl LoginStep {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            LoginStep::Login => "login",
            LoginStep::Auth => "auth",
        }
    }
}

/// Why no token was obtained. Never carries a secret or an answer body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum LoginError {
    /// 401/403: the login name or the API key (or the fresh ticket) was refused.
    #[error("the marketplace refused the {} step of the login (HTTP {status}); check --login and the API key file", step.as_str())]
    Refused { step: LoginStep, status: u16 },
    /// Not reached, timed out, 429 or 5xx: worth trying again shortly.
    #[error("the {} step of the login failed: {reason}", step.as_str())]
    Transient { step: LoginStep, reason: String },
    /// An answer we cannot use (no cookie, no token, another 4xx).
    #[error("the {} step of the login gave no usable answer: {reason}", step.as_str())]
    Unusable { step: LoginStep, reason: String },
}

/// A fresh ticket and token.
pub(super) struct Obtained {
    pub(crate) ticket: SecretString,
    pub(crate) token: SecretString,
}

/// Performs the two requests with the client's own HTTP client (no redirects, timeouts).
pub(super) async fn obtain(
    http: &reqwest::Client,
    base: &BaseUrl,
    settings: &LoginSettings,
    api_key: &SecretString,
) -> Result<Obtained, LoginError> {
    let ticket = login(http, base, settings, api_key).await?;
    let token = auth(http, base, settings, &ticket).await?;
    Ok(Obtained { ticket, token })
}

async fn login(
    http: &reqwest::Client,
    base: &BaseUrl,
    settings: &LoginSettings,
    api_key: &SecretString,
) -> Result<SecretString, LoginError> {
    let step = LoginStep::Login;
    let body = serde_json::json!({
        "login": settings.login,
        "apiToken": api_key.expose_secret(),
    });
    let bytes = serde_json::to_vec(&body).map_err(|e| unusable(step, e.to_string()))?;
    let url = url_for(base, &settings.login_path, step)?;
    let json = HeaderValue::from_static("application/json");
    let request = http
        .post(url)
        .header(CONTENT_TYPE, json.clone())
        .header(ACCEPT, json)
        .body(bytes);
    let mut response = request.send().await.map_err(|e| transport(step, e))?;
    check_status(step, response.status().as_u16())?;
    let from_cookie = ticket_from_cookies(
        response
            .headers()
            .get_all(SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok()),
    );
    let answer = read_capped(&mut response, MAX_LOGIN_ANSWER).await;
    from_cookie
        .or_else(|| ticket_from_body(&answer.bytes))
        .map(SecretString::from)
        .ok_or_else(|| unusable(step, "the answer set no AUTH_TICKET cookie".into()))
}

async fn auth(
    http: &reqwest::Client,
    base: &BaseUrl,
    settings: &LoginSettings,
    ticket: &SecretString,
) -> Result<SecretString, LoginError> {
    let step = LoginStep::Auth;
    let url = url_for(base, &settings.auth_path, step)?;
    let mut cookie = HeaderValue::from_str(&format!("AUTH_TICKET={}", ticket.expose_secret()))
        .map_err(|_| unusable(step, "the ticket cannot go into a cookie".into()))?;
    cookie.set_sensitive(true);
    let request = http
        .get(url)
        .header(COOKIE, cookie)
        .header(ACCEPT, HeaderValue::from_static("application/json"));
    let mut response = request.send().await.map_err(|e| transport(step, e))?;
    check_status(step, response.status().as_u16())?;
    let answer = read_capped(&mut response, MAX_LOGIN_ANSWER).await;
    if answer.problem.is_some() {
        return Err(LoginError::Transient {
            step,
            reason: "the answer was cut short or too large".into(),
        });
    }
    token_from_answer(&answer.bytes)
        .map(SecretString::from)
        .ok_or_else(|| unusable(step, "the answer holds no token".into()))
}

fn url_for(base: &BaseUrl, path: &str, step: LoginStep) -> Result<url::Url, LoginError> {
    let url = base
        .join(path)
        .map_err(|e| unusable(step, format!("cannot form the URL: {e}")))?;
    if url.origin() != base.origin() {
        return Err(unusable(
            step,
            "the path would leave the marketplace's origin".into(),
        ));
    }
    Ok(url)
}

fn check_status(step: LoginStep, status: u16) -> Result<(), LoginError> {
    match status {
        200..=299 => Ok(()),
        401 | 403 => Err(LoginError::Refused { step, status }),
        429 | 500..=599 => Err(LoginError::Transient {
            step,
            reason: format!("HTTP {status}"),
        }),
        _ => Err(unusable(step, format!("HTTP {status}"))),
    }
}

fn transport(step: LoginStep, e: reqwest::Error) -> LoginError {
    // The URL holds no secret, but keep errors uniform with the client's.
    LoginError::Transient {
        step,
        reason: classify::chain(&e.without_url()),
    }
}

fn unusable(step: LoginStep, reason: String) -> LoginError {
    LoginError::Unusable { step, reason }
}

/// The `AUTH_TICKET` value among `Set-Cookie` header values.
fn ticket_from_cookies<'a>(values: impl Iterator<Item = &'a str>) -> Option<String> {
    values
        .filter_map(|v| v.split(';').next())
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, value)| *name == "AUTH_TICKET" && !value.is_empty())
        .map(|(_, value)| value.trim_matches('"').to_string())
}

/// A ticket in the login answer's body, for a server that sends it there instead.
fn ticket_from_body(body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    ["AUTH_TICKET", "authTicket", "ticket"]
        .iter()
        .find_map(|k| v.get(k)?.as_str())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The token in the `/auth` answer (see the module doc for the forms accepted).
fn token_from_answer(body: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?.trim();
    let found = match serde_json::from_str::<Value>(text) {
        Ok(Value::String(s)) => Some(s),
        Ok(v @ Value::Object(_)) => token_in(&v).or_else(|| v.get("data").and_then(token_in)),
        Ok(_) => None,
        Err(_) => Some(text.to_string()),
    }?;
    let ok = !found.is_empty() && found.bytes().all(|b| (0x21..0x7f).contains(&b));
    ok.then_some(found)
}

fn token_in(v: &Value) -> Option<String> {
    ["token", "accessToken", "access_token", "jwt"]
        .iter()
        .find_map(|k| v.get(k)?.as_str())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ticket_is_the_auth_ticket_cookie() {
        let cookies = ["lang=en; Path=/", "AUTH_TICKET=tkt-1; Path=/; HttpOnly"];
        assert_eq!(
            ticket_from_cookies(cookies.into_iter()).as_deref(),
            Some("tkt-1")
        );
        assert_eq!(
            ticket_from_cookies(["AUTH_TICKET=; Path=/"].into_iter()),
            None
        );
    }

    #[test]
    fn the_token_is_found_in_every_answer_form() {
        for body in [
            r#""eyJ.a.b""#,
            r#"{"token":"eyJ.a.b"}"#,
            r#"{"accessToken":"eyJ.a.b","user":1}"#,
            r#"{"data":{"jwt":"eyJ.a.b"}}"#,
            "eyJ.a.b\n",
        ] {
            assert_eq!(
                token_from_answer(body.as_bytes()).as_deref(),
                Some("eyJ.a.b"),
                "{body}"
            );
        }
    }

    #[test]
    fn an_answer_without_a_token_gives_none() {
        assert_eq!(token_from_answer(br#"{"ok":true}"#), None);
        assert_eq!(token_from_answer(b"two words"), None);
        assert_eq!(token_from_answer(b""), None);
    }

    #[test]
    fn refusals_and_transient_statuses_are_told_apart() {
        assert!(matches!(
            check_status(LoginStep::Login, 401),
            Err(LoginError::Refused { .. })
        ));
        assert!(matches!(
            check_status(LoginStep::Auth, 503),
            Err(LoginError::Transient { .. })
        ));
        assert!(matches!(
            check_status(LoginStep::Auth, 404),
            Err(LoginError::Unusable { .. })
        ));
    }
}

//! Credentials and the headers that carry them.
//!
//! The token and the ticket live in [`SecretString`]s; they are exposed only to build the
//! `Authorization` and `Cookie` header values, which are marked sensitive so that no
//! `Debug` of a request shows them.

use reqwest::header::{AUTHORIZATION, COOKIE, HeaderMap, HeaderValue};
use secrecy::{ExposeSecret, SecretString};

/// How the token goes into the `Authorization` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthScheme {
    /// `Authorization: Bearer <token>`
    #[default]
    Bearer,
    /// `Authorization: <token>`
    Raw,
}

/// Why credentials were refused. Never carries the secret itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialsError {
    #[error("the {what} is empty")]
    Empty { what: &'static str },
    #[error(
        "the {what} contains characters not allowed in an HTTP header (control characters or non-ASCII)"
    )]
    NotHeaderSafe { what: &'static str },
    #[error("the auth ticket contains `;`, `,`, a space or a quote, which cannot go into a cookie")]
    NotCookieSafe,
    #[error("the {what}: {source}")]
    File {
        what: &'static str,
        source: super::credentials::secret_file::SecretFileError,
    },
}

/// The API token and the `AUTH_TICKET` cookie value. `Debug` prints `[REDACTED]`.
#[derive(Clone)]
pub struct Credentials {
    token: SecretString,
    ticket: SecretString,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credentials { token: [REDACTED], ticket: [REDACTED] }")
    }
}

impl Credentials {
    /// Checks that both values can travel in headers; the error names which one failed.
    pub fn new(token: SecretString, ticket: SecretString) -> Result<Credentials, CredentialsError> {
        check_header_safe(token.expose_secret(), "API token")?;
        check_header_safe(ticket.expose_secret(), "auth ticket")?;
        let cookie_breaking = |c: char| matches!(c, ';' | ',' | ' ' | '"' | '\\');
        if ticket.expose_secret().contains(cookie_breaking) {
            return Err(CredentialsError::NotCookieSafe);
        }
        Ok(Credentials { token, ticket })
    }

    /// The token and the ticket, still secret.
    pub(crate) fn into_parts(self) -> (SecretString, SecretString) {
        (self.token, self.ticket)
    }

    pub(crate) fn token(&self) -> &SecretString {
        &self.token
    }

    pub(crate) fn ticket(&self) -> &SecretString {
        &self.ticket
    }

    /// `Authorization` and `Cookie: AUTH_TICKET=…`, both marked sensitive.
    pub(crate) fn headers(&self, scheme: AuthScheme) -> Result<HeaderMap, CredentialsError> {
        let token = self.token.expose_secret();
        let auth = match scheme {
            AuthScheme::Bearer => sensitive(&format!("Bearer {token}"), "API token")?,
            AuthScheme::Raw => sensitive(token, "API token")?,
        };
        let cookie = sensitive(
            &format!("AUTH_TICKET={}", self.ticket.expose_secret()),
            "auth ticket",
        )?;
        let mut map = HeaderMap::new();
        map.insert(AUTHORIZATION, auth);
        map.insert(COOKIE, cookie);
        Ok(map)
    }
}

fn check_header_safe(value: &str, what: &'static str) -> Result<(), CredentialsError> {
    if value.is_empty() {
        return Err(CredentialsError::Empty { what });
    }
    if !value.bytes().all(|b| (0x21..0x7f).contains(&b)) {
        return Err(CredentialsError::NotHeaderSafe { what });
    }
    Ok(())
}

fn sensitive(value: &str, what: &'static str) -> Result<HeaderValue, CredentialsError> {
    let mut v =
        HeaderValue::from_str(value).map_err(|_| CredentialsError::NotHeaderSafe { what })?;
    v.set_sensitive(true);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn creds(token: &str, ticket: &str) -> Result<Credentials, CredentialsError> {
        Credentials::new(SecretString::from(token), SecretString::from(ticket))
    }

    /// The headers of token `t1` and ticket `k1` under `scheme`.
    fn headers(scheme: AuthScheme) -> HeaderMap {
        creds("t1", "k1").unwrap().headers(scheme).unwrap()
    }

    #[test]
    fn bearer_scheme_prefixes_the_token() {
        let h = headers(AuthScheme::Bearer);
        assert_eq!(h[AUTHORIZATION], "Bearer t1");
        assert_eq!(h[COOKIE], "AUTH_TICKET=k1");
    }

    #[test]
    fn raw_scheme_sends_the_bare_token() {
        let h = headers(AuthScheme::Raw);
        assert_eq!(h[AUTHORIZATION], "t1");
    }

    #[test]
    fn header_values_are_marked_sensitive() {
        let h = headers(AuthScheme::Bearer);
        assert!(h[AUTHORIZATION].is_sensitive() && h[COOKIE].is_sensitive());
    }

    #[test]
    fn a_token_with_a_newline_is_refused_without_echoing_it() {
        let err = creds("abc\ndef", "k").unwrap_err();
        assert_eq!(err, CredentialsError::NotHeaderSafe { what: "API token" });
        assert!(!err.to_string().contains("abc"));
    }

    #[test]
    fn a_ticket_that_would_break_the_cookie_is_refused() {
        assert_eq!(
            creds("t", "a;b").unwrap_err(),
            CredentialsError::NotCookieSafe
        );
    }

    #[test]
    fn empty_secrets_are_refused() {
        assert_eq!(
            creds("", "k").unwrap_err(),
            CredentialsError::Empty { what: "API token" }
        );
    }

    #[test]
    fn debug_prints_redacted() {
        let shown = format!("{:?}", creds("tok-x", "tkt-y").unwrap());
        assert!(!shown.contains("tok-x") && !shown.contains("tkt-y"));
        assert!(shown.contains("[REDACTED]"));
    }
}

//! [`ClientConfig`]: everything the marketplace client needs, checked once at start.

use std::num::NonZeroU32;
use std::time::Duration;

use super::auth::AuthScheme;
use super::credentials::source::CredentialSource;
use super::field_map::FieldMap;

/// Why a client configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("the marketplace base URL is not a valid URL: {0}")]
    BadUrl(String),
    #[error("the marketplace base URL must use http or https, not `{0}`")]
    BadScheme(String),
    #[error(
        "the marketplace base URL must not carry a user name or password; use the token and ticket files"
    )]
    UrlCredentials,
    #[error("the marketplace base URL must not carry a query or fragment")]
    UrlQuery,
    #[error("{0} must be greater than zero")]
    Zero(&'static str),
    #[error(
        "the marketplace base URL uses plain http:// to `{0}`, which is not this machine: the token and ticket would cross the network in clear. Use https://, or pass --allow-insecure-http (LINKRUNNER_ALLOW_INSECURE_HTTP=true) if you must"
    )]
    InsecureHttp(String),
}

/// The base address the operation paths are appended to, e.g. `https://host/api/v2`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseUrl {
    url: url::Url,
}

impl BaseUrl {
    pub(crate) fn parse(text: &str) -> Result<BaseUrl, ConfigError> {
        let url = url::Url::parse(text.trim()).map_err(|e| ConfigError::BadUrl(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ConfigError::BadScheme(url.scheme().to_string()));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(ConfigError::UrlCredentials);
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(ConfigError::UrlQuery);
        }
        if url.host().is_none() {
            return Err(ConfigError::BadUrl("it has no host".into()));
        }
        Ok(BaseUrl { url })
    }

    /// `base` + `path_and_query` (which starts with `/` and is already percent-encoded).
    pub(crate) fn join(&self, path_and_query: &str) -> Result<url::Url, url::ParseError> {
        let base = self.url.as_str().trim_end_matches('/');
        url::Url::parse(&format!("{base}{path_and_query}"))
    }

    /// Host and port of the marketplace: the only origin the client ever contacts.
    pub(crate) fn origin(&self) -> url::Origin {
        self.url.origin()
    }

    pub(crate) fn as_str(&self) -> &str {
        self.url.as_str()
    }

    /// Plain `http://` to a host that is not this machine (loopback IPs, `localhost`,
    /// `*.localhost`): the credentials would cross a network unencrypted.
    pub(crate) fn is_insecure(&self) -> bool {
        if self.url.scheme() != "http" {
            return false;
        }
        match self.url.host() {
            Some(url::Host::Ipv4(ip)) => !ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => !ip.is_loopback(),
            Some(url::Host::Domain(d)) => {
                let d = d.trim_end_matches('.').to_ascii_lowercase();
                d != "localhost" && !d.ends_with(".localhost")
            }
            None => true,
        }
    }
}

/// Settings of [`super::client::MarketClient`]. `Debug` shows no secret.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub(crate) base_url: BaseUrl,
    /// Where the token and ticket come from (fixed, files re-read on change, or the login).
    pub credentials: CredentialSource,
    pub auth_scheme: AuthScheme,
    pub field_map: FieldMap,
    /// Client-side limit: requests per second.
    pub rate_limit: NonZeroU32,
    /// How requests are spaced under it (the benchmark compares both).
    pub pacing: super::throttle::Pacing,
    /// At most this many requests in flight.
    pub max_concurrency: usize,
    /// End to end, including reading the answer.
    pub request_timeout: Duration,
    pub connect_timeout: Duration,
    /// Answers longer than this are not read further (and classified as uncertain).
    pub max_answer_bytes: usize,
    /// Request bodies longer than this are refused before sending.
    pub(crate) max_request_bytes: usize,
    /// How many times a read (search result, link list) is retried after a transient failure.
    pub read_retries: usize,
    /// A `Retry-After` longer than this is not waited out by the client; the error goes up.
    pub(crate) max_retry_after: Duration,
    /// Whether plain `http://` to a host other than this machine is accepted
    /// (`--allow-insecure-http`); refused by [`ClientConfig::validate`] otherwise.
    pub(crate) allow_insecure_http: bool,
    /// The deployment's account this client calls for (`account::DEFAULT_ACCOUNT` unless
    /// `App::build` says another): the `account` label of its calls' metrics.
    pub(crate) account: String,
}

impl ClientConfig {
    pub(crate) const DEFAULT_MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;
    pub(crate) const DEFAULT_MAX_REQUEST_BYTES: usize = 1024 * 1024;
    pub(crate) const DEFAULT_READ_RETRIES: usize = 3;

    /// Defaults: bearer auth, 5 requests/s, 4 in flight, 30 s per request, 10 s to connect,
    /// 4 MiB answers, 1 MiB requests, 3 read retries, Retry-After waited up to 60 s.
    pub fn new(
        base_url: &str,
        credentials: impl Into<CredentialSource>,
    ) -> Result<ClientConfig, ConfigError> {
        Ok(ClientConfig {
            base_url: BaseUrl::parse(base_url)?,
            credentials: credentials.into(),
            auth_scheme: AuthScheme::Bearer,
            field_map: FieldMap::default(),
            rate_limit: NonZeroU32::new(5).expect("5 is not zero"),
            pacing: super::throttle::Pacing::Even,
            max_concurrency: 4,
            request_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            max_answer_bytes: Self::DEFAULT_MAX_ANSWER_BYTES,
            max_request_bytes: Self::DEFAULT_MAX_REQUEST_BYTES,
            read_retries: Self::DEFAULT_READ_RETRIES,
            max_retry_after: Duration::from_secs(60),
            allow_insecure_http: false,
            account: linkrunner_domain::account::DEFAULT_ACCOUNT.to_string(),
        })
    }

    /// Requests in flight when the operator does not say: one second's worth at `rate_limit`
    /// (at least 4, at most 256). Fewer would make latency, not the rate limit, the bound
    /// (200 requests/s at 50 ms each need 10 in flight); more than a second's worth cannot
    /// be admitted by the limiter anyway.
    pub fn auto_concurrency(rate_limit: NonZeroU32) -> usize {
        (rate_limit.get() as usize).clamp(4, 256)
    }

    /// Refuses zero limits, which would block every call forever, and plain `http://` to
    /// another machine unless [`ClientConfig::allow_insecure_http`] says so.
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        if self.base_url.is_insecure() && !self.allow_insecure_http {
            let host = self.base_url.url.host_str().unwrap_or_default().to_string();
            return Err(ConfigError::InsecureHttp(host));
        }
        let zero = [
            (self.max_concurrency == 0, "max concurrency"),
            (self.request_timeout.is_zero(), "request timeout"),
            (self.connect_timeout.is_zero(), "connect timeout"),
            (self.max_answer_bytes == 0, "max answer size"),
            (self.max_request_bytes == 0, "max request size"),
        ];
        match zero.into_iter().find(|(bad, _)| *bad) {
            Some((_, what)) => Err(ConfigError::Zero(what)),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_url_path_prefix_is_kept_when_joining() {
        let base = BaseUrl::parse("https://m.example/api/v2/").unwrap();
        let url = base.join("/rest/SearchFilter").unwrap();
        assert_eq!(url.as_str(), "https://m.example/api/v2/rest/SearchFilter");
    }

    #[test]
    fn base_url_with_credentials_is_refused() {
        assert_eq!(
            BaseUrl::parse("https://u:p@m.example").unwrap_err(),
            ConfigError::UrlCredentials
        );
    }

    #[test]
    fn base_url_with_other_scheme_is_refused() {
        assert!(matches!(
            BaseUrl::parse("ftp://m.example"),
            Err(ConfigError::BadScheme(_))
        ));
    }

    #[test]
    fn plain_http_is_insecure_only_to_another_machine() {
        for local in [
            "http://127.0.0.1:8480",
            "http://127.1.2.3/api",
            "http://[::1]:1",
            "http://localhost:8480",
            "http://sandbox.localhost",
            "https://market.example",
        ] {
            assert!(!BaseUrl::parse(local).unwrap().is_insecure(), "{local}");
        }
        for remote in [
            "http://market.example",
            "http://10.0.0.5:80",
            "http://localhost.evil.example",
        ] {
            assert!(BaseUrl::parse(remote).unwrap().is_insecure(), "{remote}");
        }
    }

    #[test]
    fn plain_http_to_another_machine_is_refused_unless_allowed() {
        let creds = crate::market::Credentials::new("t".to_string().into(), "k".to_string().into())
            .unwrap();
        let mut c = ClientConfig::new("http://market.example/api", creds).unwrap();
        assert!(matches!(c.validate(), Err(ConfigError::InsecureHttp(h)) if h == "market.example"));
        c.allow_insecure_http = true;
        assert!(c.validate().is_ok());
    }

    #[test]
    fn base_url_with_query_is_refused() {
        assert_eq!(
            BaseUrl::parse("https://m.example/?a=1").unwrap_err(),
            ConfigError::UrlQuery
        );
    }
}

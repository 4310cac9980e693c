//! The marketplace client as the client suites build it directly (not through the app):
//! credentials, and a configuration whose limits throttle no test that does not mean it.

use std::time::Duration;

use linkrunner::market::{ClientConfig, Credentials};
use secrecy::SecretString;

pub fn credentials(token: &str, ticket: &str) -> Credentials {
    Credentials::new(SecretString::from(token), SecretString::from(ticket)).unwrap()
}

/// A configuration for `base` with these credentials: 1,000 requests/s, 5 s per request and
/// two read retries.
pub fn fast_config(base: &str, token: &str, ticket: &str) -> ClientConfig {
    let mut c = ClientConfig::new(base, credentials(token, ticket)).unwrap();
    c.rate_limit = std::num::NonZeroU32::new(1000).unwrap();
    c.request_timeout = Duration::from_secs(5);
    c.read_retries = 2;
    c
}

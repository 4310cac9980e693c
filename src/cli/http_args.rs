//! `run`'s HTTP security flags: the probe port, the Host allow-list, the access token and
//! the connection cap (docs/http-security.md). Turned into [`HttpOptions`] here; a bad value
//! fails the start naming its flag.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;

use super::ranges;
use crate::http::{AccessToken, AllowedHosts, HttpOptions, ServeLimits};

#[derive(Debug, Clone, Args)]
pub(crate) struct HttpArgs {
    /// Address of a listener for /healthz and /readyz only, with its own connection cap, so
    /// probes answer while the main port is busy (the Kubernetes manifests and the systemd
    /// watchdog use it).
    #[arg(long, env = "LINKRUNNER_PROBE_LISTEN")]
    pub(crate) probe_listen: Option<SocketAddr>,
    /// A host name the HTTP endpoint answers to besides `localhost` and IP addresses
    /// (repeat, or comma-separate in the variable), e.g. the Service's DNS name.
    #[arg(
        long,
        env = "LINKRUNNER_HTTP_ALLOW_HOSTS",
        value_delimiter = ',',
        value_name = "NAME"
    )]
    http_allow_host: Vec<String>,
    /// File holding a token that the status page, /metrics and /api/... require (as
    /// `Authorization: Bearer TOKEN` or as the Basic auth password). Probes never need it.
    #[arg(long, env = "LINKRUNNER_HTTP_TOKEN_FILE")]
    http_token_file: Option<PathBuf>,
    /// Connections the main HTTP port keeps open at once; more are closed at once.
    #[arg(
        long,
        env = "LINKRUNNER_HTTP_MAX_CONNECTIONS",
        default_value_t = ServeLimits::MAIN.max_connections,
        value_parser = ranges::usize_in(1..=65_535)
    )]
    http_max_connections: usize,
}

impl HttpArgs {
    pub(crate) fn options(&self) -> anyhow::Result<HttpOptions> {
        let mut o = HttpOptions::default();
        o.access.hosts = AllowedHosts::new(&self.http_allow_host)
            .context("--http-allow-host / LINKRUNNER_HTTP_ALLOW_HOSTS")?;
        if let Some(path) = &self.http_token_file {
            o.access.token = Some(
                AccessToken::from_file(path)
                    .context("--http-token-file / LINKRUNNER_HTTP_TOKEN_FILE")?,
            );
        }
        o.main.max_connections = self.http_max_connections;
        Ok(o)
    }
}

//! Settings shared by commands that talk to the marketplace: flags with `LINKRUNNER_*`
//! environment fallbacks. Secrets (token, ticket, the login's API key) come from files —
//! including systemd's `$CREDENTIALS_DIRECTORY` — or the environment; never from flags or
//! campaign files. Files are re-read by the client when they change; `--login` makes the
//! client obtain the token and ticket itself.
//! [`ApiArgs::client_config`] turns the flags into a [`ClientConfig`]; the secret lookup is in
//! [`super::secrets`].

use std::ffi::OsString;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum};

use super::{ranges, secrets};
use crate::market::{
    AuthScheme, ClientConfig, CredentialSource, Credentials, CredentialsMode, FieldMap,
    LoginSettings,
};

/// `--auth-scheme`: the command line's names for [`AuthScheme`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub(crate) enum AuthArg {
    /// `Authorization: Bearer <token>`
    #[default]
    Bearer,
    /// `Authorization: <token>`
    Raw,
}

impl From<AuthArg> for AuthScheme {
    fn from(a: AuthArg) -> AuthScheme {
        match a {
            AuthArg::Bearer => AuthScheme::Bearer,
            AuthArg::Raw => AuthScheme::Raw,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub(crate) struct ApiArgs {
    /// Base URL of the marketplace; operation paths are appended (it may carry a path).
    #[arg(long, env = "LINKRUNNER_API_BASE_URL", global = true)]
    api_base_url: Option<String>,
    /// File holding the API token (else $LINKRUNNER_API_TOKEN, else $CREDENTIALS_DIRECTORY/api-token).
    #[arg(long, env = "LINKRUNNER_API_TOKEN_FILE", global = true)]
    api_token_file: Option<PathBuf>,
    /// File holding the AUTH_TICKET cookie value (else $LINKRUNNER_AUTH_TICKET, else $CREDENTIALS_DIRECTORY/auth-ticket).
    #[arg(long, env = "LINKRUNNER_AUTH_TICKET_FILE", global = true)]
    auth_ticket_file: Option<PathBuf>,
    /// Log in with this account name and obtain the token and ticket ourselves (POST login,
    /// GET auth), refreshing the token before it expires; needs the API key.
    #[arg(long, env = "LINKRUNNER_LOGIN", global = true)]
    login: Option<String>,
    /// File holding the long-lived API key used by --login (else $LINKRUNNER_API_KEY, else $CREDENTIALS_DIRECTORY/api-key).
    #[arg(long, env = "LINKRUNNER_API_KEY_FILE", global = true)]
    api_key_file: Option<PathBuf>,
    /// Path of the login request under the base URL (--login).
    #[arg(long, env = "LINKRUNNER_LOGIN_PATH", default_value = LoginSettings::DEFAULT_LOGIN_PATH, global = true)]
    login_path: String,
    /// Path of the token request under the base URL (--login).
    #[arg(long, env = "LINKRUNNER_AUTH_PATH", default_value = LoginSettings::DEFAULT_AUTH_PATH, global = true)]
    auth_path: String,
    /// How the token goes into the Authorization header.
    #[arg(
        long,
        env = "LINKRUNNER_AUTH_SCHEME",
        value_enum,
        default_value = "bearer",
        global = true
    )]
    auth_scheme: AuthArg,
    /// Field names or dotted paths that differ from the documented ones, e.g.
    /// `price=priceRent,link_id=placementId` or `price=prices.rent,url_id=url.id`.
    #[arg(long, env = "LINKRUNNER_FIELD_MAP", global = true)]
    field_map: Option<String>,
    /// Client-side limit on marketplace requests per second.
    #[arg(
        long,
        env = "LINKRUNNER_RATE_LIMIT",
        default_value_t = 5,
        value_parser = ranges::u32_in(1..=10_000),
        global = true
    )]
    pub(crate) rate_limit: u32,
    /// At most this many marketplace requests in flight at once. Default: one second's worth
    /// at `--rate-limit` (at least 4, at most 256), so the rate limit is the bound.
    #[arg(long, env = "LINKRUNNER_MAX_CONCURRENCY", global = true, value_parser = ranges::usize_in(1..=1024))]
    max_concurrency: Option<usize>,
    /// Seconds a marketplace request may take, end to end.
    #[arg(
        long,
        env = "LINKRUNNER_REQUEST_TIMEOUT",
        default_value_t = 30,
        value_parser = ranges::u64_in(1..=3600),
        global = true
    )]
    request_timeout: u64,
    /// Seconds connecting to the marketplace may take.
    #[arg(
        long,
        env = "LINKRUNNER_CONNECT_TIMEOUT",
        default_value_t = 10,
        value_parser = ranges::u64_in(1..=600),
        global = true
    )]
    connect_timeout: u64,
    /// Marketplace answers longer than this many bytes are not read (the call counts as uncertain).
    #[arg(
        long,
        env = "LINKRUNNER_MAX_ANSWER_BYTES",
        default_value_t = ClientConfig::DEFAULT_MAX_ANSWER_BYTES,
        value_parser = ranges::usize_in(1024..=1 << 30),
        global = true
    )]
    max_answer_bytes: usize,
    /// How often a read (search result, link list) is retried after a transient failure.
    /// Calls that change something are never retried.
    #[arg(
        long,
        env = "LINKRUNNER_READ_RETRIES",
        default_value_t = ClientConfig::DEFAULT_READ_RETRIES,
        value_parser = ranges::usize_in(0..=20),
        global = true
    )]
    read_retries: usize,
    /// Accept a plain `http://` base URL to a host other than this machine (the token and
    /// ticket then cross the network unencrypted). Loopback needs no flag.
    #[arg(long, env = "LINKRUNNER_ALLOW_INSECURE_HTTP", global = true)]
    allow_insecure_http: bool,
}

impl ApiArgs {
    /// The marketplace client's configuration, with secrets loaded from the process
    /// environment and files. Errors name the flag, variable or file, never a secret.
    pub(crate) fn client_config(&self) -> anyhow::Result<ClientConfig> {
        self.client_config_with(&|name| std::env::var_os(name))
    }

    /// As [`ApiArgs::client_config`], reading environment variables through `env` (tests pass a map).
    pub(crate) fn client_config_with(
        &self,
        env: &dyn Fn(&str) -> Option<OsString>,
    ) -> anyhow::Result<ClientConfig> {
        let base = self.api_base_url.as_deref().filter(|u| !u.trim().is_empty()).context(
            "no marketplace base URL: set --api-base-url or LINKRUNNER_API_BASE_URL (e.g. https://market.example/api)",
        )?;
        let credentials = self.credential_source(env)?;
        let mut config = ClientConfig::new(base, credentials)
            .context("--api-base-url / LINKRUNNER_API_BASE_URL")?;
        config.auth_scheme = self.auth_scheme();
        config.field_map = self.field_map()?;
        self.apply_limits(&mut config)?;
        Ok(config)
    }

    /// `--auth-scheme`: also the scheme of an account of the accounts file that names none.
    pub(crate) fn auth_scheme(&self) -> AuthScheme {
        self.auth_scheme.into()
    }

    /// `--field-map`: also the field map of an account of the accounts file that gives none.
    pub(crate) fn field_map(&self) -> anyhow::Result<FieldMap> {
        Ok(FieldMap::parse(
            self.field_map.as_deref().unwrap_or_default(),
        )?)
    }

    /// `--max-concurrency` when given (else each client's follows its own rate limit).
    pub(crate) fn max_concurrency(&self) -> Option<usize> {
        self.max_concurrency
    }

    /// The client's limits (rate, requests in flight, timeouts, answer size, read retries) onto
    /// `config`: also the demo's, whose marketplace and credentials are its own.
    pub(crate) fn apply_limits(&self, config: &mut ClientConfig) -> anyhow::Result<()> {
        config.rate_limit = NonZeroU32::new(self.rate_limit).context(
            "--rate-limit / LINKRUNNER_RATE_LIMIT must be at least 1 request per second",
        )?;
        config.max_concurrency = self
            .max_concurrency
            .unwrap_or_else(|| ClientConfig::auto_concurrency(config.rate_limit));
        config.request_timeout = Duration::from_secs(self.request_timeout);
        config.connect_timeout = Duration::from_secs(self.connect_timeout);
        config.max_answer_bytes = self.max_answer_bytes;
        config.read_retries = self.read_retries;
        config.allow_insecure_http = self.allow_insecure_http;
        config.validate().context("marketplace client settings")?;
        Ok(())
    }

    /// The built-in login with `--login`, else the token and ticket where they are found.
    /// Given values are checked here (readable, sendable), so a bad one fails the start.
    fn credential_source(
        &self,
        env: &dyn Fn(&str) -> Option<OsString>,
    ) -> anyhow::Result<CredentialSource> {
        let Some(login) = self.login.as_deref().filter(|l| !l.trim().is_empty()) else {
            let token = secrets::locate(&secrets::TOKEN, self.api_token_file.as_deref(), env)?;
            let ticket = secrets::locate(&secrets::TICKET, self.auth_ticket_file.as_deref(), env)?;
            Credentials::new(token.read()?, ticket.read()?)?;
            return Ok(CredentialSource::Given { token, ticket });
        };
        if self.api_token_file.is_some() || self.auth_ticket_file.is_some() {
            anyhow::bail!(
                "--login obtains the token and the ticket itself: drop --api-token-file and \
                 --auth-ticket-file (LINKRUNNER_API_TOKEN_FILE, LINKRUNNER_AUTH_TICKET_FILE), or drop --login"
            );
        }
        let api_key = secrets::locate(&secrets::API_KEY, self.api_key_file.as_deref(), env)?;
        let mut settings = LoginSettings::new(login.trim(), api_key);
        for (path, flag) in [
            (&self.login_path, "--login-path"),
            (&self.auth_path, "--auth-path"),
        ] {
            if !path.starts_with('/') {
                anyhow::bail!("{flag} must start with `/` (e.g. /login), not `{path}`");
            }
        }
        settings.login_path = self.login_path.clone();
        settings.auth_path = self.auth_path.clone();
        Ok(CredentialSource::Login(settings))
    }

    /// How credentials would be obtained with these settings, without reading any secret
    /// (`status` says it).
    pub(crate) fn credentials_mode(
        &self,
        env: &dyn Fn(&str) -> Option<OsString>,
    ) -> CredentialsMode {
        if self.login.as_deref().is_some_and(|l| !l.trim().is_empty()) {
            return CredentialsMode::Login;
        }
        let file = |flag: &Option<PathBuf>, src: &secrets::Source| {
            flag.is_some()
                || (env(src.var).is_none()
                    && env("CREDENTIALS_DIRECTORY")
                        .is_some_and(|d| PathBuf::from(d).join(src.credential).exists()))
        };
        if file(&self.api_token_file, &secrets::TOKEN)
            || file(&self.auth_ticket_file, &secrets::TICKET)
        {
            CredentialsMode::Files
        } else {
            CredentialsMode::Fixed
        }
    }
}

#[cfg(test)]
mod tests;

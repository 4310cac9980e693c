//! Settings shared by commands that talk to the marketplace: flags with `LINKRUNNER_*`
//! environment fallbacks. Secrets (token, ticket) come from files — including systemd's
//! `$CREDENTIALS_DIRECTORY` — or the environment; never from flags or campaign files.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum AuthScheme {
    /// `Authorization: Bearer <token>`
    #[default]
    Bearer,
    /// `Authorization: <token>`
    Raw,
}

#[derive(Debug, Clone, Args)]
pub struct ApiArgs {
    /// Base URL of the marketplace; operation paths are appended (it may carry a path).
    #[arg(long, env = "LINKRUNNER_API_BASE_URL", global = true)]
    pub api_base_url: Option<String>,
    /// File holding the API token (else $LINKRUNNER_API_TOKEN, else $CREDENTIALS_DIRECTORY/api-token).
    #[arg(long, env = "LINKRUNNER_API_TOKEN_FILE", global = true)]
    pub api_token_file: Option<PathBuf>,
    /// File holding the AUTH_TICKET cookie value (else $LINKRUNNER_AUTH_TICKET, else $CREDENTIALS_DIRECTORY/auth-ticket).
    #[arg(long, env = "LINKRUNNER_AUTH_TICKET_FILE", global = true)]
    pub auth_ticket_file: Option<PathBuf>,
    /// How the token goes into the Authorization header.
    #[arg(
        long,
        env = "LINKRUNNER_AUTH_SCHEME",
        value_enum,
        default_value = "bearer",
        global = true
    )]
    pub auth_scheme: AuthScheme,
    /// Field names that differ from the documented ones, e.g. `price=priceRent,link_id=placementId`.
    #[arg(long, env = "LINKRUNNER_FIELD_MAP", global = true)]
    pub field_map: Option<String>,
    /// Client-side limit on marketplace requests per second.
    #[arg(
        long,
        env = "LINKRUNNER_RATE_LIMIT",
        default_value_t = 5,
        global = true
    )]
    pub rate_limit: u32,
    /// At most this many marketplace requests in flight at once.
    #[arg(
        long,
        env = "LINKRUNNER_MAX_CONCURRENCY",
        default_value_t = 4,
        global = true
    )]
    pub max_concurrency: usize,
    /// Seconds a marketplace request may take, end to end.
    #[arg(
        long,
        env = "LINKRUNNER_REQUEST_TIMEOUT",
        default_value_t = 30,
        global = true
    )]
    pub request_timeout: u64,
}

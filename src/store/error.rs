//! [`StoreError`]: what went wrong in the journal, and whether the database itself is away.
//! No variant carries a database URL's password.

/// An error of the journal.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be opened; `url` has its password redacted.
    #[error("cannot connect to the database at {url}: {source}")]
    Connect {
        url: String,
        #[source]
        source: sqlx::Error,
    },
    #[error("cannot migrate the database schema: {source}")]
    Migrate {
        #[source]
        source: sqlx::migrate::MigrateError,
    },
    #[error("database error in {op}: {source}")]
    Database {
        op: &'static str,
        #[source]
        source: sqlx::Error,
    },
    /// A stored value the code cannot read (unknown state, bad JSON): a bug or a foreign write.
    #[error("journal holds an unreadable value: {what}")]
    Corrupt { what: String },
    #[error("not in the journal: {what}")]
    NotFound { what: String },
    /// The caller's campaign lease is no longer current: another process owns the campaign.
    #[error("the lease on campaign `{campaign}` is no longer held by this process (fenced)")]
    Fenced { campaign: String },
    /// The requested change does not apply to the record's current state.
    #[error("not allowed in the current state: {what}")]
    InvalidState { what: String },
}

impl StoreError {
    /// True when the database could not be reached (connection, pool or I/O level): the
    /// caller should wait and retry rather than treat the operation as refused.
    pub fn is_unavailable(&self) -> bool {
        match self {
            StoreError::Connect { .. } => true,
            StoreError::Database { source, .. } => matches!(
                source,
                sqlx::Error::Io(_)
                    | sqlx::Error::Tls(_)
                    | sqlx::Error::PoolTimedOut
                    | sqlx::Error::PoolClosed
                    | sqlx::Error::WorkerCrashed
            ),
            _ => false,
        }
    }

    /// A closed, secret-free label for readiness reports and logs.
    pub(crate) fn kind_label(&self) -> &'static str {
        match self {
            e if e.is_unavailable() => "database unreachable",
            StoreError::Connect { .. } => "cannot connect",
            StoreError::Migrate { .. } => "migration failed",
            StoreError::Database { .. } => "database error",
            StoreError::Corrupt { .. } => "unreadable journal value",
            StoreError::NotFound { .. } => "not found",
            StoreError::Fenced { .. } => "lease lost",
            StoreError::InvalidState { .. } => "invalid state",
        }
    }

    pub(crate) fn corrupt(what: impl Into<String>) -> Self {
        StoreError::Corrupt { what: what.into() }
    }

    pub(crate) fn invalid(what: impl Into<String>) -> Self {
        StoreError::InvalidState { what: what.into() }
    }
}

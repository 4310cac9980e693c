//! [`EngineError`]: why a step of the engine stopped, with a closed label for logs and metrics.

use crate::market::MarketError;
use crate::store::StoreError;

/// Why a step of the engine stopped.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("journal: {0}")]
    Store(#[from] StoreError),
    #[error(
        "{0}; all spending of this campaign's account is stopped until its credentials work again"
    )]
    Auth(MarketError),
    #[error("the campaign's lease was lost (or could not be renewed); stopping this pass")]
    Fenced,
    #[error("{0}")]
    Market(MarketError),
    #[error("{0}")]
    Blocked(String),
    #[error("shutting down")]
    Cancelled,
}

impl EngineError {
    /// A closed label set for logs and metrics.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            EngineError::Store(_) => "database",
            EngineError::Auth(_) => "credentials_rejected",
            EngineError::Fenced => "lease_lost",
            EngineError::Market(_) => "marketplace",
            EngineError::Blocked(_) => "blocked",
            EngineError::Cancelled => "cancelled",
        }
    }

    /// The same step may well succeed later without anyone changing anything: the journal or
    /// the marketplace was unavailable, the lease moved, credentials were rejected (they are
    /// re-read and a halt clears itself), or the process is shutting down. A daemon round that
    /// ended this way is tried again within its slot.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            EngineError::Store(_)
            | EngineError::Fenced
            | EngineError::Auth(_)
            | EngineError::Cancelled => true,
            EngineError::Market(e) => e.is_transient(),
            EngineError::Blocked(_) => false,
        }
    }

    /// A step that ended this way left nothing that may have executed behind it (refused by
    /// a cap, a missing id, or a marketplace answer that executed nothing), so the actions
    /// after it that do not depend on it may run.
    pub(crate) fn leaves_nothing_uncertain(&self) -> bool {
        match self {
            EngineError::Blocked(_) => true,
            EngineError::Market(e) => e.executed() == crate::market::Executed::No,
            _ => false,
        }
    }
}

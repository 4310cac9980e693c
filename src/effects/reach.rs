//! Whether the marketplace can be reached at all (issue 25, point 8). When connecting fails,
//! every campaign would otherwise end its pass `blocked` with the same long error: instead the
//! pass says it once — `marketplace_unreachable`, since when, the last error — and the
//! campaigns not begun yet are not tried against it. A connect error sent nothing, so nothing
//! is left uncertain by stopping there.

use chrono::{DateTime, Utc};

use super::error::EngineError;
use crate::market::MarketError;
use linkrunner_domain::outage::{Outage, OutageCell};

/// Shared by every clone of the engine: a daemon keeps "since" across passes.
#[derive(Debug, Default)]
pub(crate) struct MarketReach {
    down: OutageCell,
}

impl MarketReach {
    /// Notes that connecting failed with `error`; returns since when it has been failing.
    pub(crate) fn unreachable(&self, error: String, now: DateTime<Utc>) -> DateTime<Utc> {
        self.down.failed(error, now).0
    }

    /// A pass reached the marketplace: it is not down (any more).
    pub(crate) fn reachable(&self) {
        if let Some(d) = self.down.ended() {
            tracing::info!(since = %d.since, "the marketplace can be reached again");
        }
    }

    /// Since when the marketplace could not be connected to, and the last error.
    pub(crate) fn down(&self) -> Option<Outage> {
        self.down.current()
    }
}

/// The connect error a step ended with, if that is how it ended.
pub(crate) fn connect_error(e: &EngineError) -> Option<&MarketError> {
    match e {
        EngineError::Market(m @ MarketError::Connect { .. }) => Some(m),
        _ => None,
    }
}

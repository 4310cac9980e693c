//! Whether the marketplace can be reached at all (issue 25, point 8). When connecting fails,
//! every campaign would otherwise end its pass `blocked` with the same long error: instead the
//! pass says it once — `marketplace_unreachable`, since when, the last error — and the
//! campaigns not begun yet are not tried against it. A connect error sent nothing, so nothing
//! is left uncertain by stopping there.

use std::sync::Mutex;

use chrono::{DateTime, Utc};

use super::error::EngineError;
use crate::market::MarketError;

/// The marketplace could not be connected to: since when, and the last error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Down {
    pub(crate) since: DateTime<Utc>,
    pub(crate) error: String,
}

/// Shared by every clone of the engine: a daemon keeps "since" across passes.
#[derive(Debug, Default)]
pub(crate) struct MarketReach {
    down: Mutex<Option<Down>>,
}

impl MarketReach {
    /// Notes that connecting failed with `error`; returns since when it has been failing.
    pub(crate) fn unreachable(&self, error: String, now: DateTime<Utc>) -> DateTime<Utc> {
        let mut down = self.down.lock().unwrap_or_else(|e| e.into_inner());
        let since = down.as_ref().map_or(now, |d| d.since);
        *down = Some(Down { since, error });
        since
    }

    /// A pass reached the marketplace: it is not down (any more).
    pub(crate) fn reachable(&self) {
        if let Some(d) = self.down.lock().unwrap_or_else(|e| e.into_inner()).take() {
            tracing::info!(since = %d.since, "the marketplace can be reached again");
        }
    }

    pub(crate) fn down(&self) -> Option<Down> {
        self.down.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The connect error a step ended with, if that is how it ended.
pub(crate) fn connect_error(e: &EngineError) -> Option<&MarketError> {
    match e {
        EngineError::Market(m @ MarketError::Connect { .. }) => Some(m),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_is_the_first_failure_and_the_error_the_last_until_reached_again() {
        let r = MarketReach::default();
        let t0 = Utc::now();
        let t1 = t0 + chrono::Duration::seconds(30);
        assert_eq!(r.unreachable("refused".into(), t0), t0);
        assert_eq!(r.unreachable("timed out".into(), t1), t0);
        assert_eq!(r.down().map(|d| d.error), Some("timed out".into()));
        r.reachable();
        assert_eq!(r.down(), None);
        assert_eq!(r.unreachable("refused".into(), t1), t1);
    }
}

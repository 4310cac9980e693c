//! A fault that lasts: something (the marketplace, the journal) failing call after call, kept
//! as since when (the first failure in a row) and the last error, until a call succeeds. The
//! engine keeps one for the marketplace (`effects/reach.rs`: say "unreachable since" once
//! instead of every campaign's error) and the journal one for its writes
//! (`store/writes.rs`: `/readyz` and `linkrunner_journal_writable`). Shared by threads: every
//! clone of the engine, every pool connection.

use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde::Serialize;

/// Failing since `since` (the first failure in a row); `error`: the last failure's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outage {
    pub since: DateTime<Utc>,
    pub error: String,
}

/// The outage in force, if any.
#[derive(Debug, Default)]
pub struct OutageCell {
    now: Mutex<Option<Outage>>,
}

impl OutageCell {
    /// Notes a failure with `error` at `at`: the outage begins, or goes on with `since` kept.
    /// Since when it has been failing, and whether this failure began it.
    pub fn failed(&self, error: String, at: DateTime<Utc>) -> (DateTime<Utc>, bool) {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        let began = now.is_none();
        let since = now.as_ref().map_or(at, |o| o.since);
        *now = Some(Outage { since, error });
        (since, began)
    }

    /// Notes a success: the outage it ends, if one was in force.
    pub fn ended(&self) -> Option<Outage> {
        self.now.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    pub fn current(&self) -> Option<Outage> {
        self.now.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_is_the_first_failure_and_the_error_the_last_until_reached_again() {
        let cell = OutageCell::default();
        let t0 = Utc::now();
        let t1 = t0 + chrono::Duration::seconds(30);
        assert_eq!(cell.failed("refused".into(), t0), (t0, true));
        assert_eq!(cell.failed("timed out".into(), t1), (t0, false));
        assert_eq!(cell.current().map(|o| o.error), Some("timed out".into()));
        assert_eq!(cell.ended().map(|o| o.since), Some(t0));
        assert_eq!(cell.current(), None);
        assert_eq!(cell.ended(), None);
        assert_eq!(cell.failed("refused".into(), t1), (t1, true));
    }
}

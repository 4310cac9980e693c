//! Waiting for something to happen, with a deadline: every "eventually" in the suites.

use std::future::Future;
use std::time::Duration;

/// How long anything a test expects may take before it counts as a failure, where the test
/// has no tighter bound of its own.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// How often a condition is checked again.
const EVERY: Duration = Duration::from_millis(20);

/// Checks `f` until it returns `Some`; `None` once `limit` has passed.
pub async fn poll_until<T, F, Fut>(limit: Duration, mut f: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if let Some(v) = f().await {
            return Some(v);
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(EVERY).await;
    }
}

/// Checks `f` until it returns `Some`, or panics naming `what` once `limit` has passed.
pub async fn within<T, F, Fut>(limit: Duration, what: &str, f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    match poll_until(limit, f).await {
        Some(v) => v,
        None => panic!("{what}: not within {limit:?}"),
    }
}

//! Client conveniences only tests use, compiled with the `test-hooks` feature (which every
//! test build has, and `cargo build` and releases do not).

use std::time::Duration;

use super::Market as _;
use super::client::MarketClient;
use super::error::MarketError;
use linkrunner_domain::market::{SearchJob, SearchPoll};

impl MarketClient {
    /// Polls a search until it is ready or `deadline` has passed (then the last not-ready
    /// answer, `Pending` or `NotFound`), waiting `interval` between polls. The engine runs its own loop around
    /// [`super::Market::search_result`]; this is for tests that just want the donors.
    pub async fn poll_search(
        &self,
        job: &SearchJob,
        deadline: Duration,
        interval: Duration,
    ) -> Result<SearchPoll, MarketError> {
        let until = tokio::time::Instant::now() + deadline;
        loop {
            let poll = self.search_result(job).await?;
            let now = tokio::time::Instant::now();
            if matches!(poll, SearchPoll::Ready { .. }) || now >= until {
                return Ok(poll);
            }
            tokio::time::sleep(interval.min(until - now)).await;
        }
    }
}

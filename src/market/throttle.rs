//! The client's own limits, because the marketplace documents none: a `governor` rate
//! limiter (requests per second) and a semaphore bounding requests in flight. Waits for the
//! limiter are counted in `linkrunner_rate_limit_waits_total` and
//! `linkrunner_rate_limit_wait_seconds_total`.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Instant;

use governor::clock::Clock as _;
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::metrics::Metrics;

pub(crate) struct Throttle {
    limiter: DefaultDirectRateLimiter,
    in_flight: Arc<Semaphore>,
    metrics: Arc<Metrics>,
}

impl Throttle {
    pub fn new(per_second: NonZeroU32, max_concurrency: usize, metrics: Arc<Metrics>) -> Throttle {
        Throttle {
            limiter: RateLimiter::direct(Quota::per_second(per_second)),
            in_flight: Arc::new(Semaphore::new(max_concurrency)),
            metrics,
        }
    }

    /// Waits for a slot in flight, then for the rate limiter. The permit is held until the
    /// answer has been read.
    pub async fn admit(&self) -> OwnedSemaphorePermit {
        let permit = Arc::clone(&self.in_flight)
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        let started = Instant::now();
        let mut waited = false;
        while let Err(not_until) = self.limiter.check() {
            waited = true;
            let wait = not_until.wait_time_from(self.limiter.clock().now());
            tokio::time::sleep(wait).await;
        }
        if waited {
            self.metrics.rate_limit_waits_total.inc();
            self.metrics
                .rate_limit_wait_seconds_total
                .inc_by(started.elapsed().as_secs_f64());
        }
        permit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn requests_past_the_burst_wait_and_are_counted() {
        let metrics = Arc::new(Metrics::new());
        let t = Throttle::new(NonZeroU32::new(20).unwrap(), 4, Arc::clone(&metrics));
        for _ in 0..22 {
            drop(t.admit().await);
        }
        assert!(metrics.rate_limit_waits_total.get() >= 1);
        assert!(metrics.rate_limit_wait_seconds_total.get() > 0.0);
    }

    #[tokio::test]
    async fn requests_within_the_burst_do_not_wait() {
        let metrics = Arc::new(Metrics::new());
        let t = Throttle::new(NonZeroU32::new(20).unwrap(), 4, Arc::clone(&metrics));
        for _ in 0..5 {
            drop(t.admit().await);
        }
        assert_eq!(metrics.rate_limit_waits_total.get(), 0);
    }
}

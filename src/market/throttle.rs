//! The client's own limits, because the marketplace documents none: a rate limiter (requests
//! per second) and a semaphore bounding requests in flight. Waits for the limiter are counted
//! in `linkrunner_rate_limit_waits_total` and `linkrunner_rate_limit_wait_seconds_total`.
//!
//! The limiter keeps the send times of the last `per_second` requests and admits a request
//! only when fewer than `per_second` were sent within the last second plus [`GUARD`]. So no
//! window of one second — wherever a server starts counting it — sees more than `per_second`
//! requests, even when answers arrive a little late or early. A token bucket of one second
//! (`governor`'s `Quota::per_second`) does not give that: its full burst plus the steady
//! refill lets up to twice the limit through in the first second, which a server counting in
//! fixed one-second windows answers with 429.
//!
//! [`Pacing::Even`], the default, is what the kept crate offers: `governor` with a burst of
//! 1, which spaces requests `1/per_second` apart, so no one-second window holds more than
//! `per_second` of them either. `linkrunner bench --pacing window` measures the hand-written
//! window beside it; on the flow benchmark (1,000 campaigns, 200 requests/s) even pacing was
//! as fast or faster and received no 429 where the window received 5 (README, "Benchmark").

use std::collections::VecDeque;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::metrics::Metrics;

/// Slack added to the one-second window for jitter between sending a request and the server
/// counting it (scheduling, the network). It costs 2% of the rate.
pub(crate) const GUARD: Duration = Duration::from_millis(20);

/// How requests are spaced under the rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pacing {
    /// At most `per_second` within any second (plus [`GUARD`]): bursts allowed, never more.
    Window,
    /// Evenly, `1/per_second` apart (`governor`, burst 1).
    #[default]
    Even,
}

type EvenLimiter = governor::DefaultDirectRateLimiter;

pub(crate) struct Throttle {
    per_second: usize,
    sent: Mutex<VecDeque<Instant>>,
    even: Option<EvenLimiter>,
    in_flight: Arc<Semaphore>,
    metrics: Arc<Metrics>,
}

impl Throttle {
    pub fn new(
        per_second: NonZeroU32,
        pacing: Pacing,
        max_concurrency: usize,
        metrics: Arc<Metrics>,
    ) -> Throttle {
        let even = (pacing == Pacing::Even).then(|| {
            let quota = governor::Quota::per_second(per_second).allow_burst(NonZeroU32::MIN);
            governor::RateLimiter::direct(quota)
        });
        let per_second = per_second.get() as usize;
        Throttle {
            per_second,
            sent: Mutex::new(VecDeque::with_capacity(if even.is_some() {
                0
            } else {
                per_second
            })),
            even,
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
        if let Some(even) = &self.even {
            waited = even.check().is_err();
            if waited {
                even.until_ready().await;
            }
        } else {
            while let Some(wait) = self.try_send(Instant::now()) {
                waited = true;
                tokio::time::sleep(wait).await;
            }
        }
        if waited {
            self.metrics.rate_limit_waits_total.inc();
            self.metrics
                .rate_limit_wait_seconds_total
                .inc_by(started.elapsed().as_secs_f64());
        }
        permit
    }

    /// Records a send at `now` if the window allows it; otherwise how long until it may.
    fn try_send(&self, now: Instant) -> Option<Duration> {
        let window = Duration::from_secs(1) + GUARD;
        let mut sent = self.sent.lock().unwrap_or_else(|e| e.into_inner());
        while sent.front().is_some_and(|t| now - *t >= window) {
            sent.pop_front();
        }
        if sent.len() < self.per_second {
            sent.push_back(now);
            return None;
        }
        sent.front().map(|oldest| *oldest + window - now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn throttle(per_second: u32) -> (Throttle, Arc<Metrics>) {
        let metrics = Arc::new(Metrics::new());
        let t = Throttle::new(
            NonZeroU32::new(per_second).unwrap(),
            Pacing::Window,
            4,
            Arc::clone(&metrics),
        );
        (t, metrics)
    }

    /// The most requests any one-second window starting at a send holds.
    fn busiest_second(sent: &[Instant]) -> Option<usize> {
        sent.iter()
            .map(|s| {
                sent.iter()
                    .filter(|t| **t >= *s && **t - *s < Duration::from_secs(1))
                    .count()
            })
            .max()
    }

    #[tokio::test]
    async fn requests_past_the_limit_wait_and_are_counted() {
        let (t, metrics) = throttle(20);
        for _ in 0..22 {
            drop(t.admit().await);
        }
        assert!(metrics.rate_limit_waits_total.get() >= 1);
        assert!(metrics.rate_limit_wait_seconds_total.get() > 0.0);
    }

    #[tokio::test]
    async fn requests_within_the_limit_do_not_wait() {
        let (t, metrics) = throttle(20);
        for _ in 0..5 {
            drop(t.admit().await);
        }
        assert_eq!(metrics.rate_limit_waits_total.get(), 0);
    }

    #[tokio::test]
    async fn no_second_ever_sees_more_requests_than_the_limit() {
        let (t, _) = throttle(10);
        let mut sent = Vec::new();
        for _ in 0..15 {
            drop(t.admit().await);
            sent.push(Instant::now());
        }
        let busiest = busiest_second(&sent);
        assert_eq!(busiest, Some(10));
    }

    #[tokio::test]
    async fn even_pacing_never_lets_a_second_see_more_than_the_limit() {
        let metrics = Arc::new(Metrics::new());
        let t = Throttle::new(NonZeroU32::new(10).unwrap(), Pacing::Even, 4, metrics);
        let mut sent = Vec::new();
        for _ in 0..15 {
            drop(t.admit().await);
            sent.push(Instant::now());
        }
        let busiest = busiest_second(&sent);
        assert!(busiest <= Some(10), "{busiest:?}");
    }

    #[tokio::test]
    async fn even_pacing_spaces_requests_one_interval_apart() {
        let metrics = Arc::new(Metrics::new());
        let t = Throttle::new(NonZeroU32::new(20).unwrap(), Pacing::Even, 4, metrics);
        let mut sent = Vec::new();
        for _ in 0..6 {
            drop(t.admit().await);
            sent.push(std::time::Instant::now());
        }
        // 20 per second: 50 ms apart, give or take the timer.
        for pair in sent.windows(2) {
            let gap = pair[1] - pair[0];
            assert!(gap >= Duration::from_millis(40), "{gap:?}");
        }
    }
}

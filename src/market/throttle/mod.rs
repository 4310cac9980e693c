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
//! [`Pacing::Even`], the default, spaces requests evenly: each goes at the next free turn,
//! `(1 s + EVEN_GUARD) / per_second` after the one before; once requests queue, a due buy
//! round's calls take the next turn before reconciliation's (`gate`, "rounds first"). A
//! wake-up late by less than a turn does not move the turns after it, so while requests queue
//! the rate is the limit (less the guard), and no one-second window holds more than
//! `per_second` of them. `governor` with a burst of 1 (the kept crate) paces the same way
//! but lets every waiter race for each token and restarts the spacing from a late winner: with
//! 400 campaigns queueing it sent 181 requests/s against a limit of 200; this pacer sends 198
//! (docs/contributing.md#benchmark, where both are measured). `linkrunner-bench --pacing window` measures
//! the hand-written window beside it.
//!
//! The marketplace counts a request when it arrives, not when it was admitted here: an
//! answer slower than its operation's fastest moves its request later in the window
//! (`window`, capped at [`window::MAX_LATE`]), so a request that first had to open a connection
//! does not start the marketplace's second late and let one too many into it.
//!
//! May import: crate::metrics.

mod gate;
mod window;

use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;

use crate::metrics::Metrics;
use crate::metrics::load::Purpose;
use gate::{Gate, Priority};
use window::Window;

/// Slack added to the one-second window for jitter between sending a request and the server
/// counting it (scheduling, the network). It costs 2% of the rate.
pub(crate) const GUARD: Duration = Duration::from_millis(20);

/// Slack in even pacing's spacing for jitter between sending a request and the server counting
/// it: 200 requests take 1.01 s, not 1 s. It costs 1% of the rate.
pub(crate) const EVEN_GUARD: Duration = Duration::from_millis(10);

/// How requests are spaced under the rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pacing {
    /// At most `per_second` within any second (plus [`GUARD`]): bursts allowed, never more.
    Window,
    /// Evenly, `(1 s + EVEN_GUARD) / per_second` apart, first come first served.
    #[default]
    Even,
}

pub(crate) struct Throttle {
    per_second: usize,
    sent: Mutex<Window>,
    pacing: Pacing,
    /// Places in flight and even pacing's turns, rounds first (`gate`).
    gate: Gate,
    metrics: Arc<Metrics>,
}

impl Throttle {
    pub(super) fn new(
        per_second: NonZeroU32,
        pacing: Pacing,
        max_concurrency: usize,
        metrics: Arc<Metrics>,
    ) -> Throttle {
        let interval = match pacing {
            Pacing::Even => (Duration::from_secs(1) + EVEN_GUARD) / per_second.get(),
            Pacing::Window => Duration::ZERO,
        };
        let per_second = per_second.get() as usize;
        Throttle {
            per_second,
            sent: Mutex::new(Window::with_capacity(per_second)),
            pacing,
            gate: Gate::new(interval, max_concurrency),
            metrics,
        }
    }

    /// The limit, in requests per second.
    pub(super) fn per_second(&self) -> usize {
        self.per_second
    }

    /// Counts the last second as used up, as if the limit's worth of requests were sent now:
    /// the next request waits one window. For an account this process has just taken from
    /// another (`daemon::division`): the marketplace counts what that process sent in its
    /// last second too, which this throttle never saw (target 7 of the bench: one or two 429s
    /// when the accounts changed hands in the first second).
    pub(super) fn assume_window_used(&self) {
        self.window().fill(Instant::now(), self.per_second);
    }

    fn window(&self) -> std::sync::MutexGuard<'_, Window> {
        self.sent.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for a place in flight and its turn (a due round's calls first, `gate`), then
    /// for the rate limiter's window. The permit is held until the answer has been read; say
    /// when the answer came ([`Admitted::answered`]).
    pub(super) async fn admit(&self) -> Admitted<'_> {
        let priority = match crate::metrics::load::current_purpose() {
            Purpose::Buy => Priority::Round,
            _ => Priority::Rest,
        };
        self.admit_as(priority).await
    }

    async fn admit_as(&self, priority: Priority) -> Admitted<'_> {
        let started = Instant::now();
        let (permit, mut waited) = self.gate.enter(priority).await;
        // Then, with either pacing, no more than `per_second` in the last second and its
        // slack: a late wake-up can bring two turns' requests closer together than their
        // spacing. Even pacing's slack is its spacing's own (`EVEN_GUARD`): queued requests
        // already go `(1 s + EVEN_GUARD) / per_second` apart, so it costs them nothing, and
        // a request that reaches the server a little later than it was sent (a busy
        // machine) no longer puts one too many into the server's second (target 7 of the
        // bench saw one 429 in 5,841 calls on one process with a window of exactly 1 s).
        let window = match self.pacing {
            Pacing::Even => Duration::from_secs(1) + EVEN_GUARD,
            Pacing::Window => Duration::from_secs(1) + GUARD,
        };
        // The instant the window records is the one the answer's time is measured from.
        let (seq, at) = loop {
            let now = Instant::now();
            let tried = self.window().try_send(now, self.per_second, window);
            match tried {
                Ok(seq) => break (seq, now),
                Err(wait) => {
                    waited = true;
                    tokio::time::sleep(wait).await;
                }
            }
        };
        if waited {
            self.metrics.rate_limit_waits_total.inc();
            self.metrics
                .rate_limit_wait_seconds_total
                .inc_by(started.elapsed().as_secs_f64());
        }
        Admitted {
            throttle: self,
            seq,
            at,
            _permit: permit,
        }
    }
}

/// A request let through: its place in flight, held until it is dropped, and its place in
/// the rate limiter's window.
pub(super) struct Admitted<'a> {
    throttle: &'a Throttle,
    seq: u64,
    at: Instant,
    _permit: OwnedSemaphorePermit,
}

impl Admitted<'_> {
    /// The answer (or the failure) of operation `op` came back now: a late one moves the
    /// request later in the window.
    pub(super) fn answered(&self, op: &'static str) {
        self.throttle
            .window()
            .answered(self.seq, op, self.at.elapsed());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn throttle(per_second: u32) -> (Throttle, Arc<Metrics>) {
        paced(per_second, Pacing::Window, 4)
    }

    /// A throttle of `per_second` paced `pacing` with `in_flight` requests at once, and the
    /// metrics it counts its waits in.
    fn paced(per_second: u32, pacing: Pacing, in_flight: usize) -> (Throttle, Arc<Metrics>) {
        let metrics = Arc::new(Metrics::new());
        let t = Throttle::new(
            NonZeroU32::new(per_second).unwrap(),
            pacing,
            in_flight,
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
        let (t, _) = paced(10, Pacing::Even, 4);
        let mut sent = Vec::new();
        for _ in 0..15 {
            drop(t.admit().await);
            sent.push(Instant::now());
        }
        let busiest = busiest_second(&sent);
        assert!(busiest <= Some(10), "{busiest:?}");
        // Nor one of 1 s and the slack: a request a server counts late stays in its second.
        // Less 1 ms: the times are read after `admit` returns, a few microseconds after the
        // throttle's own, and those microseconds differ from one request to the next (a
        // window of exactly 1 s would still fail by 9 ms).
        let slack = Duration::from_secs(1) + EVEN_GUARD - Duration::from_millis(1);
        let busiest = sent
            .iter()
            .map(|s| {
                sent.iter()
                    .filter(|t| **t >= *s && **t - *s < slack)
                    .count()
            })
            .max();
        assert!(busiest <= Some(10), "{busiest:?} within {slack:?}");
    }

    #[tokio::test]
    async fn even_pacing_spaces_requests_one_interval_apart() {
        let (t, _) = paced(20, Pacing::Even, 4);
        let start = std::time::Instant::now();
        let mut sent = Vec::new();
        for _ in 0..6 {
            drop(t.admit().await);
            sent.push(start.elapsed());
        }
        // 20 per second: the k-th request waits for its slot, k intervals after the first.
        // A late wake-up (a loaded machine) only sends later: slots are reserved ahead, so
        // the bound is on each request's time since the start, not on the gap to the last.
        for (k, at) in sent.iter().enumerate() {
            let slot = Duration::from_millis(50) * u32::try_from(k).unwrap();
            assert!(
                *at >= slot,
                "request {k} sent at {at:?}, before its slot {slot:?}"
            );
        }
    }

    /// Many requests queueing at once get the limit, not less (governor's even limiter sent
    /// 181 of 200 per second here), and no second holds more than the limit.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn queued_requests_are_sent_at_the_limit_and_never_above_it() {
        let t = Arc::new(paced(100, Pacing::Even, 64).0);
        let sent = Arc::new(Mutex::new(Vec::new()));
        let started = Instant::now();
        let tasks: Vec<_> = (0..64)
            .map(|_| {
                let (t, sent) = (t.clone(), sent.clone());
                tokio::spawn(async move {
                    for _ in 0..5 {
                        let permit = t.admit().await;
                        sent.lock().unwrap().push(Instant::now());
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        drop(permit);
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        let sent = sent.lock().unwrap().clone();
        let took = sent.iter().max().unwrap().duration_since(started);
        // 320 requests at 100/s (less the 1% guard): the last one leaves after about 3.2 s.
        assert!(took < Duration::from_millis(3450), "{took:?}");
        assert!(
            busiest_second(&sent) <= Some(100),
            "{:?}",
            busiest_second(&sent)
        );
    }

    /// A request whose answer came 60 ms later than the fastest (it opened a connection, say)
    /// reached the server that much later: it keeps its place in the window 60 ms longer.
    #[tokio::test]
    async fn a_request_answered_late_keeps_its_place_in_the_window_longer() {
        let (t, _) = throttle(5);
        let start = std::time::Instant::now();
        let first = t.admit().await;
        tokio::time::sleep(Duration::from_millis(60)).await;
        first.answered("op");
        drop(first);
        for _ in 0..4 {
            t.admit().await.answered("op");
        }
        drop(t.admit().await);
        // Without the lateness the sixth would go at 1 s + GUARD.
        let bound = Duration::from_secs(1) + GUARD + Duration::from_millis(50);
        assert!(start.elapsed() >= bound, "{:?}", start.elapsed());
    }

    /// An account this process has just taken waits one window before its first request:
    /// the process that worked it may have used the marketplace's second already.
    #[tokio::test]
    async fn an_account_just_taken_sends_nothing_for_one_window() {
        let (t, _) = paced(10, Pacing::Even, 4);
        t.assume_window_used();
        let start = std::time::Instant::now();
        drop(t.admit().await);
        assert!(
            start.elapsed() >= Duration::from_secs(1),
            "{:?}",
            start.elapsed()
        );
    }

    /// Rounds first (issue 34): a buy round's call asking behind a queue of reconciliation
    /// calls is sent before them (first come first served sent it last).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_rounds_call_is_sent_before_queued_reconciliation_calls() {
        use crate::metrics::load::with_purpose;
        let t = Arc::new(paced(10, Pacing::Even, 2).0);
        let order = Arc::new(Mutex::new(Vec::new()));
        let spawn = |purpose: Purpose, what: &'static str| {
            let (t, order) = (Arc::clone(&t), Arc::clone(&order));
            tokio::spawn(with_purpose(purpose, async move {
                let permit = t.admit().await;
                order.lock().unwrap().push(what);
                tokio::time::sleep(Duration::from_millis(30)).await;
                drop(permit);
            }))
        };
        let mut tasks: Vec<_> = (0..20)
            .map(|_| spawn(Purpose::Reconcile, "reconcile"))
            .collect();
        tokio::time::sleep(Duration::from_millis(50)).await;
        tasks.push(spawn(Purpose::Buy, "round"));
        for task in tasks {
            task.await.unwrap();
        }
        let order = order.lock().unwrap().clone();
        let at = order.iter().position(|w| *w == "round").unwrap();
        assert!(
            at <= 3,
            "the round's call went {at}th of {}: {order:?}",
            order.len()
        );
    }
}

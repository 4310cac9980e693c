//! The client's queue: who sends next when requests wait (issue 34, item 6, "rounds first").
//!
//! A request waits here for two things: a place among the requests in flight (the
//! concurrency bound) and, with even pacing, its turn `interval` after the one before. While
//! nothing waits, a request takes both at once and goes. Once requests queue, one dispatcher
//! task hands out each place-and-turn to the **first waiting request of the highest
//! priority**: a due buy round's calls go before reconciliation's, whenever they arrived, so
//! a round mostly sitting in poll waits is not queued behind a whole cycle of link-list reads;
//! reconciliation takes the capacity the rounds leave idle. Within one priority, first come
//! first served.
//!
//! Why one dispatcher and not a fair semaphore plus a slot clock: a semaphore serves in
//! arrival order, so a round's call would wait for every reconciliation call that asked
//! before it (the concurrency bound is the real queue when answers are slow), and slots
//! reserved on arrival would keep that order too.
//!
//! A waiter that gives up (its future dropped: a cancelled pass) is skipped and its place goes
//! to the next; the place is never lost. The rate limit's hard bound (no second holds more
//! than the limit) is checked after this, right before sending (`throttle.rs`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};
use tokio::time::Instant;

/// Which queue a request waits in: the first non-empty one in this order is served first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Priority {
    /// A due buy round's calls: they run against the clock of their slot.
    Round,
    /// Everything else: reconciliation, settlement, commands.
    Rest,
}

impl Priority {
    fn index(self) -> usize {
        match self {
            Priority::Round => 0,
            Priority::Rest => 1,
        }
    }
}

type Waiter = oneshot::Sender<OwnedSemaphorePermit>;

struct Queue {
    /// The earliest time the next request may go (even pacing; `now` otherwise).
    next: Instant,
    waiting: [VecDeque<Waiter>; 2],
    /// Whether a dispatcher task is serving the queue.
    dispatching: bool,
}

/// Places in flight and turns, served by priority once requests queue.
pub(crate) struct Gate {
    interval: Duration,
    in_flight: Arc<Semaphore>,
    queue: Arc<Mutex<Queue>>,
}

impl Gate {
    /// `interval` between requests' turns (zero: no spacing), at most `max_in_flight` at once.
    pub(crate) fn new(interval: Duration, max_in_flight: usize) -> Gate {
        Gate {
            interval,
            in_flight: Arc::new(Semaphore::new(max_in_flight)),
            queue: Arc::new(Mutex::new(Queue {
                next: Instant::now(),
                waiting: [VecDeque::new(), VecDeque::new()],
                dispatching: false,
            })),
        }
    }

    /// Waits for a place in flight and this request's turn; the permit is held until the
    /// answer has been read. Whether it had to wait.
    pub(crate) async fn enter(&self, priority: Priority) -> (OwnedSemaphorePermit, bool) {
        let rx = {
            let mut q = lock(&self.queue);
            if !q.dispatching
                && let Some(permit) = self.go_now(&mut q)
            {
                return (permit, false);
            }
            let (tx, rx) = oneshot::channel();
            q.waiting[priority.index()].push_back(tx);
            if !q.dispatching {
                q.dispatching = true;
                tokio::spawn(dispatch(
                    Arc::clone(&self.queue),
                    Arc::clone(&self.in_flight),
                    self.interval,
                ));
            }
            rx
        };
        // The dispatcher answers every waiter it pops; it ends only when none is left.
        let permit = rx.await.expect("the dispatcher serves every waiter");
        (permit, true)
    }

    /// The place and the turn at once, when both are free now.
    fn go_now(&self, q: &mut Queue) -> Option<OwnedSemaphorePermit> {
        let now = Instant::now();
        if q.next > now {
            return None;
        }
        let permit = Arc::clone(&self.in_flight).try_acquire_owned().ok()?;
        q.next = now + self.interval;
        Some(permit)
    }
}

fn lock(q: &Mutex<Queue>) -> std::sync::MutexGuard<'_, Queue> {
    q.lock().unwrap_or_else(|e| e.into_inner())
}

/// Serves the queue until it is empty: a place, then the turn, then the first waiter of the
/// highest priority still waiting.
async fn dispatch(queue: Arc<Mutex<Queue>>, in_flight: Arc<Semaphore>, interval: Duration) {
    let mut held: Option<OwnedSemaphorePermit> = None;
    loop {
        let permit = match held.take() {
            Some(p) => p,
            None => Arc::clone(&in_flight)
                .acquire_owned()
                .await
                .expect("the semaphore is never closed"),
        };
        let turn = lock(&queue).next;
        tokio::time::sleep_until(turn).await;
        let mut q = lock(&queue);
        match hand_over(&mut q.waiting, permit) {
            Ok(()) => {
                // A wake-up late by less than one interval does not move the turns after it
                // (queued requests keep the full rate); after a longer gap (an idle queue, a
                // wait for a place in flight) the next turn is one interval from now.
                let now = Instant::now();
                let floor = now.checked_sub(interval).unwrap_or(now);
                q.next = q.next.max(floor) + interval;
            }
            // Nobody left: the dispatcher ends under the lock a new waiter would take.
            Err(_) => {
                q.dispatching = false;
                return;
            }
        }
    }
}

/// Gives `permit` to the first live waiter, highest priority first; the permit back when
/// nobody waits (waiters that gave up are dropped on the way).
fn hand_over(
    waiting: &mut [VecDeque<Waiter>; 2],
    mut permit: OwnedSemaphorePermit,
) -> Result<(), OwnedSemaphorePermit> {
    for q in waiting.iter_mut() {
        while let Some(tx) = q.pop_front() {
            match tx.send(permit) {
                Ok(()) => return Ok(()),
                Err(back) => permit = back,
            }
        }
    }
    Err(permit)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Until `n` requests wait at `priority`. The tests order their requests by this, not by
    /// sleeping: under the whole suite's load a spawned task may ask later than one spawned
    /// after it, and the test then checked the scheduler's order, not the gate's (seen once).
    async fn until_waiting(gate: &Gate, priority: Priority, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while lock(&gate.queue).waiting[priority.index()].len() < n {
            assert!(Instant::now() < deadline, "{n} requests never waited");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// A round's call that asks after a queue of reconciliation calls is served before them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_rounds_call_goes_before_reconciliation_calls_that_asked_first() {
        let gate = Arc::new(Gate::new(Duration::from_millis(20), 1));
        let order = Arc::new(Mutex::new(Vec::new()));
        let first = gate.enter(Priority::Rest).await.0;
        let mut tasks = Vec::new();
        for i in 0..6 {
            let (g, order) = (Arc::clone(&gate), Arc::clone(&order));
            tasks.push(tokio::spawn(async move {
                let _p = g.enter(Priority::Rest).await;
                order.lock().unwrap().push(format!("reconcile {i}"));
            }));
            until_waiting(&gate, Priority::Rest, i + 1).await;
        }
        let (g, o) = (Arc::clone(&gate), Arc::clone(&order));
        tasks.push(tokio::spawn(async move {
            let _p = g.enter(Priority::Round).await;
            o.lock().unwrap().push("round".to_string());
        }));
        until_waiting(&gate, Priority::Round, 1).await;
        drop(first);
        for t in tasks {
            t.await.unwrap();
        }
        let order = order.lock().unwrap().clone();
        assert_eq!(order[0], "round", "{order:?}");
        let rest: Vec<_> = (0..6).map(|i| format!("reconcile {i}")).collect();
        assert_eq!(
            order[1..],
            rest[..],
            "first come first served within a priority"
        );
    }

    /// A waiter that gives up does not take a place with it: the next one is served.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_waiter_that_gives_up_loses_no_place() {
        let gate = Arc::new(Gate::new(Duration::ZERO, 1));
        let first = gate.enter(Priority::Rest).await.0;
        let g = Arc::clone(&gate);
        let gave_up = tokio::spawn(async move { g.enter(Priority::Round).await });
        until_waiting(&gate, Priority::Round, 1).await;
        gave_up.abort();
        let g = Arc::clone(&gate);
        let next = tokio::spawn(async move { g.enter(Priority::Rest).await.1 });
        until_waiting(&gate, Priority::Rest, 1).await;
        drop(first);
        let waited = tokio::time::timeout(Duration::from_secs(2), next)
            .await
            .expect("the next waiter was served")
            .unwrap();
        assert!(waited);
    }

    /// Turns stay `interval` apart however requests arrive: the k-th request goes no
    /// earlier than k intervals after the first (a late wake-up only sends later).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn turns_are_an_interval_apart() {
        let gate = Arc::new(Gate::new(Duration::from_millis(25), 8));
        let sent = Arc::new(Mutex::new(Vec::new()));
        let start = Instant::now();
        let tasks: Vec<_> = (0..8)
            .map(|i| {
                let (gate, sent) = (Arc::clone(&gate), Arc::clone(&sent));
                let p = if i % 2 == 0 {
                    Priority::Round
                } else {
                    Priority::Rest
                };
                tokio::spawn(async move {
                    let _p = gate.enter(p).await;
                    sent.lock().unwrap().push(Instant::now());
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        let mut sent = sent.lock().unwrap().clone();
        sent.sort();
        for (k, at) in sent.iter().enumerate() {
            let turn = Duration::from_millis(25) * u32::try_from(k).unwrap();
            assert!(*at - start >= turn, "request {k} went before its turn");
        }
    }
}

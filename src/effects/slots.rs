//! Campaign slots: at most `campaign_concurrency` campaigns *working* at once. A campaign
//! that waits for a search result gives its slot back for the wait and takes one again
//! before its next call, so waiting never keeps another campaign from using the
//! marketplace: the rate limiter and the client's request bound are what limit the load.
//!
//! The slot a pass holds lives in a task-local, so the wait deep inside a buy round
//! ([`Slots::idle`]) finds it without every layer passing it along. A campaign's pass runs in
//! one task and polls its searches one after another, so at most one wait holds it at a time.

use std::cell::RefCell;
use std::future::Future;
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

tokio::task_local! {
    static HELD: RefCell<Option<OwnedSemaphorePermit>>;
}

/// One slot, taken by [`Slots::take`]; [`Slot::run`] works in it.
#[derive(Debug)]
pub(crate) struct Slot(Option<OwnedSemaphorePermit>);

impl Slot {
    /// Runs `work` in this slot; a wait inside it ([`Slots::idle`]) lends the slot out.
    pub(crate) async fn run<F: Future>(self, work: F) -> F::Output {
        HELD.scope(RefCell::new(self.0), work).await
    }
}

/// The engine's campaign slots; clones share them.
#[derive(Debug, Clone)]
pub(crate) struct Slots {
    sem: Arc<Semaphore>,
}

impl Slots {
    pub(crate) fn new(n: usize) -> Slots {
        Slots {
            sem: Arc::new(Semaphore::new(n.max(1))),
        }
    }

    /// Runs `work` holding a slot (waiting for one first).
    #[cfg(test)]
    pub(crate) async fn run<F: Future>(&self, work: F) -> F::Output {
        let slot = self.take().await;
        slot.run(work).await
    }

    /// Waits for a free slot: a pass takes it before it creates a campaign's task, so tasks
    /// exist only for campaigns that work or wait, never for all of them up front.
    pub(crate) async fn take(&self) -> Slot {
        Slot(self.sem.clone().acquire_owned().await.ok())
    }

    /// Runs `wait` without the slot the current task holds, then takes a slot again. Outside
    /// a slot (a task that holds none) it just runs `wait`.
    pub(crate) async fn idle<F: Future>(&self, wait: F) -> F::Output {
        let had = HELD.try_with(|h| h.borrow_mut().take()).ok().flatten();
        match had {
            Some(permit) => {
                drop(permit);
                let out = wait.await;
                let again = self.sem.clone().acquire_owned().await.ok();
                let _ = HELD.try_with(|h| *h.borrow_mut() = again);
                out
            }
            None => wait.await,
        }
    }

    /// Slots free right now (for tests and the benchmark).
    #[cfg(test)]
    pub(crate) fn available(&self) -> usize {
        self.sem.available_permits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_waiting_campaign_lends_its_slot_and_takes_one_back_after() {
        let slots = Slots::new(1);
        let s = slots.clone();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let waiting = tokio::spawn(async move {
            s.run(async {
                assert_eq!(s.available(), 0);
                s.idle(async { rx.await.ok() }).await;
                assert_eq!(s.available(), 0, "the slot is held again after the wait");
            })
            .await
        });
        // While the first campaign waits, a second one gets the only slot and finishes.
        let second = tokio::time::timeout(Duration::from_secs(5), slots.run(async { 7 }))
            .await
            .expect("the second campaign got the slot during the first one's wait");
        assert_eq!(second, 7);
        tx.send(()).unwrap();
        waiting.await.unwrap();
        assert_eq!(slots.available(), 1);
    }

    #[tokio::test]
    async fn working_campaigns_never_exceed_the_slots() {
        let slots = Slots::new(2);
        let busy = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let peak = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let (s, busy, peak) = (slots.clone(), busy.clone(), peak.clone());
            tasks.push(tokio::spawn(async move {
                s.run(async {
                    use std::sync::atomic::Ordering::SeqCst;
                    for _ in 0..3 {
                        let now = busy.fetch_add(1, SeqCst) + 1;
                        peak.fetch_max(now, SeqCst);
                        tokio::time::sleep(Duration::from_millis(2)).await;
                        busy.fetch_sub(1, SeqCst);
                        s.idle(tokio::time::sleep(Duration::from_millis(3))).await;
                    }
                })
                .await
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert!(peak.load(std::sync::atomic::Ordering::SeqCst) <= 2);
        assert_eq!(slots.available(), 2);
    }

    #[tokio::test]
    async fn outside_a_slot_a_wait_just_waits() {
        let slots = Slots::new(1);
        assert_eq!(slots.idle(async { 3 }).await, 3);
        assert_eq!(slots.available(), 1);
    }
}

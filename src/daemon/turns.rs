//! Whose turn it is to be reconciled (issue 27): the bookkeeping of the daemon's
//! reconciler (`reconciler.rs`), pure but for the lock — times are given, nothing is called.
//!
//! Order: campaigns pushed as urgent (a changed file; at start, something uncertain), then
//! those whose last pass left something open once `--reconcile-interval` passed since it,
//! then every other campaign, the longest unreconciled first, once the interval passed. A
//! buy round's pass counts as its campaign's reconciliation.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use tokio::time::Instant;

/// Which campaign to reconcile next, and when (pure bookkeeping; times are given).
#[derive(Debug, Default)]
pub(crate) struct Queue {
    /// Reconciled before anything else, in order.
    urgent: VecDeque<String>,
    urgent_set: HashSet<String>,
    /// Every campaign, the longest unreconciled first: (name, stamp); an entry whose stamp
    /// is not the campaign's current one is stale (it was reconciled again since).
    rotation: VecDeque<(String, u64)>,
    /// name → (stamp, when its last pass started; `None`: never in this process).
    last: HashMap<String, (u64, Option<Instant>)>,
    /// Campaigns whose last pass left something open.
    attention: HashSet<String>,
    stamp: u64,
    /// Campaigns not yet reconciled in the current cycle, and when it began.
    cycle_left: HashSet<String>,
    cycle_began: Option<Instant>,
}

impl Queue {
    /// Makes the queue hold exactly `names`; campaigns new to it are urgent.
    pub(crate) fn set_roster(&mut self, names: &[String]) {
        let keep: HashSet<&String> = names.iter().collect();
        self.last.retain(|n, _| keep.contains(n));
        self.attention.retain(|n| keep.contains(n));
        self.cycle_left.retain(|n| keep.contains(n));
        self.urgent.retain(|n| keep.contains(n));
        self.urgent_set.retain(|n| keep.contains(n));
        for n in names {
            if !self.last.contains_key(n) {
                self.stamp += 1;
                self.last.insert(n.clone(), (self.stamp, None));
                self.rotation.push_back((n.clone(), self.stamp));
                self.cycle_left.insert(n.clone());
                self.push_urgent(n);
            }
        }
    }

    /// Reconciles `name` before anything else (a changed file, something uncertain at start).
    pub(crate) fn push_urgent(&mut self, name: &str) {
        if self.last.contains_key(name) && self.urgent_set.insert(name.to_string()) {
            self.urgent.push_back(name.to_string());
        }
    }

    /// The next campaign due at `now`, marked as reconciled now.
    pub(crate) fn next(&mut self, now: Instant, interval: Duration) -> Option<String> {
        let due = |t: Option<Instant>| t.is_none_or(|t| now.duration_since(t) >= interval);
        let name = if let Some(n) = self.urgent.pop_front() {
            self.urgent_set.remove(&n);
            Some(n)
        } else if let Some(n) = self
            .attention
            .iter()
            .find(|n| self.last.get(*n).is_some_and(|l| due(l.1)))
            .cloned()
        {
            Some(n)
        } else {
            self.drop_stale();
            match self.rotation.front() {
                Some((n, _)) if self.last.get(n).is_some_and(|l| due(l.1)) => {
                    self.rotation.pop_front().map(|e| e.0)
                }
                _ => None,
            }
        }?;
        self.started(&name, now);
        Some(name)
    }

    /// Records that `name`'s pass (a reconciliation or a buy round) started at `now`.
    pub(crate) fn started(&mut self, name: &str, now: Instant) {
        let Some(entry) = self.last.get_mut(name) else {
            return;
        };
        self.stamp += 1;
        *entry = (self.stamp, Some(now));
        self.rotation.push_back((name.to_string(), self.stamp));
        self.cycle_left.remove(name);
        if self.rotation.len() > 2 * self.last.len() + 64 {
            self.compact();
        }
    }

    /// How `name`'s pass ended: an open end brings it back before the rotation.
    pub(crate) fn finished(&mut self, name: &str, open: bool) {
        if open && self.last.contains_key(name) {
            self.attention.insert(name.to_string());
        } else {
            self.attention.remove(name);
        }
    }

    /// Campaigns due at `now` and not reconciled yet.
    pub(crate) fn backlog(&self, now: Instant, interval: Duration) -> usize {
        let due = |t: Option<Instant>| t.is_none_or(|t| now.duration_since(t) >= interval);
        let rotation = self
            .rotation
            .iter()
            .filter(|(n, s)| self.last.get(n).is_some_and(|l| l.0 == *s))
            .take_while(|(n, _)| self.last.get(n).is_some_and(|l| due(l.1)))
            .filter(|(n, _)| !self.urgent_set.contains(n))
            .count();
        self.urgent.len() + rotation
    }

    /// When the next campaign comes due, if none is due now.
    pub(crate) fn next_due(&self, interval: Duration) -> Option<Instant> {
        let fresh = |(n, s): &(String, u64)| self.last.get(n).filter(|l| l.0 == *s);
        let rotation = self.rotation.iter().find_map(fresh).and_then(|l| l.1);
        let attention = self
            .attention
            .iter()
            .filter_map(|n| self.last.get(n).and_then(|l| l.1))
            .min();
        [rotation, attention]
            .into_iter()
            .flatten()
            .min()
            .map(|t| t + interval)
    }

    /// When every campaign has been reconciled once since the cycle began: how long the
    /// cycle took, and a new one begins.
    pub(crate) fn cycle_done(&mut self, now: Instant) -> Option<Duration> {
        // The first look begins the first cycle: a restarted daemon's first full cycle is
        // measured too (at 10,000 campaigns on the defaults it takes most of an hour, and
        // the gauge would otherwise say 0 until the end of the second).
        if self.cycle_began.is_none() && !self.cycle_left.is_empty() {
            self.cycle_began = Some(now);
        }
        if !self.cycle_left.is_empty() || self.last.is_empty() {
            return None;
        }
        let took = self.cycle_began.map(|b| now.duration_since(b));
        self.cycle_began = Some(now);
        self.cycle_left = self.last.keys().cloned().collect();
        took
    }

    pub(crate) fn len(&self) -> usize {
        self.last.len()
    }

    fn drop_stale(&mut self) {
        while let Some((n, s)) = self.rotation.front() {
            if self.last.get(n).is_some_and(|l| l.0 == *s) {
                return;
            }
            self.rotation.pop_front();
        }
    }

    fn compact(&mut self) {
        let last = &self.last;
        self.rotation
            .retain(|(n, s)| last.get(n).is_some_and(|l| l.0 == *s));
    }
}

/// The reconciler's state, shared by the daemon's loop, its rounds and its own task.
#[derive(Debug, Default)]
pub(crate) struct Reconciler {
    queue: std::sync::Mutex<Queue>,
    /// Something became due (a reload, a roster change).
    pub(super) wake: tokio::sync::Notify,
}

impl Reconciler {
    pub(super) fn queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `names` go first (their files changed).
    pub(crate) fn urgent(&self, names: &[String]) {
        let mut q = self.queue();
        names.iter().for_each(|n| q.push_urgent(n));
        drop(q);
        self.wake.notify_one();
    }

    /// A buy round's pass of `name` started: it reconciles the campaign too.
    pub(crate) fn round_started(&self, name: &str) {
        self.queue().started(name, Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("c{i:03}")).collect()
    }

    const MIN: Duration = Duration::from_secs(60);

    /// A queue of `n` campaigns that has handed out each once at `t0`, and `t0`.
    fn reconciled_once(n: usize) -> (Queue, Instant) {
        let mut q = Queue::default();
        q.set_roster(&names(n));
        let t0 = Instant::now();
        while q.next(t0, MIN).is_some() {}
        (q, t0)
    }

    #[test]
    fn every_campaign_is_reconciled_once_then_again_only_after_the_interval() {
        let mut q = Queue::default();
        q.set_roster(&names(3));
        let t0 = Instant::now();
        let first: Vec<_> = std::iter::from_fn(|| q.next(t0, MIN)).collect();
        assert_eq!(first, names(3));
        assert_eq!(q.next(t0 + MIN / 2, MIN), None);
        assert_eq!(q.backlog(t0 + MIN / 2, MIN), 0);
        assert_eq!(q.next_due(MIN), Some(t0 + MIN));
        assert_eq!(q.backlog(t0 + MIN, MIN), 3);
        assert_eq!(q.next(t0 + MIN, MIN).as_deref(), Some("c000"));
    }

    #[test]
    fn changed_files_go_first_then_what_was_left_open_then_the_oldest() {
        let (mut q, t0) = reconciled_once(4);
        q.finished("c003", true);
        let later = t0 + 2 * MIN;
        q.push_urgent("c002");
        assert_eq!(q.next(later, MIN).as_deref(), Some("c002"));
        assert_eq!(q.next(later, MIN).as_deref(), Some("c003"));
        assert_eq!(q.next(later, MIN).as_deref(), Some("c000"));
        assert_eq!(q.next(later, MIN).as_deref(), Some("c001"));
        assert_eq!(q.next(later, MIN), None);
    }

    #[test]
    fn a_round_counts_as_the_campaigns_reconciliation() {
        let (mut q, t0) = reconciled_once(2);
        q.started("c000", t0 + MIN / 2);
        assert_eq!(q.next(t0 + MIN, MIN).as_deref(), Some("c001"));
        assert_eq!(q.next(t0 + MIN, MIN), None);
    }

    #[test]
    fn a_cycle_ends_when_every_campaign_was_reconciled_and_removed_ones_leave_the_roster() {
        let mut q = Queue::default();
        q.set_roster(&names(2));
        let t0 = Instant::now();
        assert_eq!(
            q.cycle_done(t0),
            None,
            "the first look begins the first cycle"
        );
        while q.next(t0, MIN).is_some() {}
        assert_eq!(q.cycle_done(t0 + MIN / 2), Some(MIN / 2));
        while q.next(t0 + MIN, MIN).is_some() {}
        assert_eq!(q.cycle_done(t0 + 2 * MIN), Some(MIN + MIN / 2));
        q.set_roster(&names(1));
        assert_eq!(q.len(), 1);
        while q.next(t0 + 3 * MIN, MIN).is_some() {}
        assert_eq!(q.next(t0 + 5 * MIN, MIN).as_deref(), Some("c000"));
        assert_eq!(q.next(t0 + 5 * MIN, MIN), None);
    }
}

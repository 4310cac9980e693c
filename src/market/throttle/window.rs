//! The limiter's memory: when each of the last requests counts as sent, so that no one-second
//! window at the marketplace holds more than the limit.
//!
//! A request is recorded when it is admitted, but the marketplace counts it when it arrives,
//! and the time between the two is not the same for every request: the first request on an
//! account (or the first after a pause) opens a connection first, so it arrives some
//! milliseconds later than the ones after it, which find the connection open. The marketplace
//! starts its second at that late request, and the tenth request after it, admitted a whole
//! window after the first was, arrives inside that second: a 429. Target 7 of the benchmark saw
//! exactly that on a loaded machine, once per account, the first call taking 65-80 ms where
//! the others took 53 ms, and the server's first ten gaps adding up to 985-999 ms.
//!
//! So when an answer comes back, its request is moved later by how much longer it took than
//! the fastest answer of the same operation ([`Window::answered`]): the excess was spent before
//! the request arrived (connecting) or after (the server working), and the limiter cannot tell
//! which, so it assumes the first, which is the safe side. The shift is at most [`MAX_LATE`],
//! so a slow answer holds its place in the window a little longer, never for long. The fastest
//! answer is kept per operation, because operations differ in what the server does for them
//! (a page of the link list against a switch), and that difference is not lateness.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

/// The most an answer's lateness moves its request: a new connection with TLS to a distant
/// host takes two or three round trips, well within it; an answer later than that is the
/// server working, and holding its place longer would only cost throughput.
pub(crate) const MAX_LATE: Duration = Duration::from_millis(250);

/// One request in the window.
#[derive(Debug, Clone, Copy)]
struct Sent {
    /// When it counts as sent: when it was admitted, moved later by its answer's lateness.
    at: Instant,
    admitted: Instant,
    /// Its number, to find it when its answer comes back.
    seq: u64,
    /// Its operation and how long its answer took, once it came back.
    answer: Option<(&'static str, Duration)>,
}

impl Sent {
    /// When it counts as sent, given its operation's fastest answer.
    fn counted_at(&self, fastest: Duration) -> Instant {
        match self.answer {
            Some((_, took)) => self.admitted + took.saturating_sub(fastest).min(MAX_LATE),
            None => self.admitted,
        }
    }
}

/// The last requests, ordered by when they count as sent, and each operation's fastest answer.
#[derive(Debug, Default)]
pub(super) struct Window {
    sent: VecDeque<Sent>,
    next_seq: u64,
    fastest: Vec<(&'static str, Duration)>,
}

impl Window {
    pub(super) fn with_capacity(n: usize) -> Window {
        Window {
            sent: VecDeque::with_capacity(n),
            ..Window::default()
        }
    }

    /// Records a send at `now` if fewer than `limit` requests count within `window` before
    /// it, and returns its number; otherwise how long until one may be sent.
    pub(super) fn try_send(
        &mut self,
        now: Instant,
        limit: usize,
        window: Duration,
    ) -> Result<u64, Duration> {
        while self.sent.front().is_some_and(|s| now - s.at >= window) {
            self.sent.pop_front();
        }
        if self.sent.len() >= limit {
            let oldest = self.sent.front().map_or(now, |s| s.at);
            return Err(oldest + window - now);
        }
        Ok(self.push(now))
    }

    /// Counts `n` requests as sent at `now`, whatever was sent before (an account taken from
    /// another process, whose last second this limiter never saw).
    pub(super) fn fill(&mut self, now: Instant, n: usize) {
        self.sent.clear();
        for _ in 0..n {
            self.push(now);
        }
    }

    /// Records a request admitted at `now`, after the ones moved later than it by their lateness.
    fn push(&mut self, now: Instant) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        let later = self.sent.iter().rev().take_while(|s| s.at > now).count();
        let sent = Sent {
            at: now,
            admitted: now,
            seq,
            answer: None,
        };
        self.sent.insert(self.sent.len() - later, sent);
        seq
    }

    /// The answer to request `seq` (operation `op`) came back `took` after it was admitted:
    /// the request moves later by the answer's lateness. When this answer is the operation's
    /// fastest so far, the requests of that operation still in the window are measured again
    /// against it (the first request of all was measured against itself).
    pub(super) fn answered(&mut self, seq: u64, op: &'static str, took: Duration) {
        let (fastest, faster) = self.fastest_of(op, took);
        let Some(i) = self.sent.iter().rposition(|s| s.seq == seq) else {
            return; // already out of the window
        };
        self.sent[i].answer = Some((op, took));
        if faster {
            for s in self.sent.iter_mut() {
                if s.answer.is_some_and(|(o, _)| o == op) {
                    s.at = s.counted_at(fastest);
                }
            }
            self.sent.make_contiguous().sort_by_key(|s| s.at);
        } else if let Some(mut s) = self.sent.remove(i) {
            s.at = s.counted_at(fastest);
            let to = i + self.sent.range(i..).take_while(|o| o.at <= s.at).count();
            self.sent.insert(to, s);
        }
    }

    /// The fastest answer of `op` with `took` counted, and whether `took` is it.
    fn fastest_of(&mut self, op: &'static str, took: Duration) -> (Duration, bool) {
        match self.fastest.iter_mut().find(|(o, _)| *o == op) {
            Some((_, f)) if took < *f => {
                *f = took;
                (took, true)
            }
            Some((_, f)) => (*f, false),
            None => {
                self.fastest.push((op, took));
                (took, true)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Ten requests 100 ms apart, each answered after 50 ms but the `late`-th, answered after
    /// `took` ms; then requests tried at `(ms after the first, expected)` in turn: `Ok(())`
    /// sent, `Err(n)` told to wait `n` ms.
    fn check(late: u64, took: u64, tries: &[(u64, Result<(), u64>)]) {
        let mut w = Window::with_capacity(10);
        let t0 = Instant::now();
        for k in 0..10 {
            let seq = w.try_send(t0 + ms(100 * k), 10, SECOND).expect("room");
            w.answered(seq, "op", ms(if k == late { took } else { 50 }));
        }
        for (after, expected) in tries {
            let got = w.try_send(t0 + ms(*after), 10, SECOND);
            assert_eq!(got.map(|_| ()), expected.map_err(ms), "at {after} ms");
        }
    }

    #[test]
    fn on_time_answers_leave_the_window_as_it_was() {
        // The eleventh may go exactly one window after the first.
        check(0, 50, &[(950, Err(50)), (1000, Ok(()))]);
    }

    /// The case target 7 saw: the first request took 25 ms longer (a new connection), so it
    /// reached the server 25 ms late, and the eleventh must wait those 25 ms too.
    #[test]
    fn a_late_first_answer_delays_the_request_a_window_after_it() {
        check(0, 75, &[(1000, Err(25)), (1025, Ok(()))]);
    }

    #[test]
    fn a_late_answer_in_the_middle_moves_only_its_own_request() {
        // The first still leaves at one window; the fifth stays 40 ms longer than it would.
        let tries = [1000, 1100, 1200, 1300].map(|at| (at, Ok(())));
        check(4, 90, &[&tries[..], &[(1400, Err(40))]].concat());
    }

    /// A request admitted after one that was moved later goes before it in the window.
    #[test]
    fn a_request_moved_later_stays_in_order_with_the_ones_after_it() {
        // The first counts at 250 ms (the cap): the second, at 100 ms, leaves first.
        let tries = [
            (1000, Err(100)),
            (1100, Ok(())),
            (1200, Ok(())),
            (1240, Err(10)),
        ];
        check(0, 300, &tries);
    }

    #[test]
    fn lateness_is_capped() {
        let mut w = Window::with_capacity(2);
        let t0 = Instant::now();
        let fast = w.try_send(t0, 2, SECOND).expect("room");
        w.answered(fast, "op", ms(50));
        let slow = w.try_send(t0 + ms(10), 2, SECOND).expect("room");
        w.answered(slow, "op", ms(5_050));
        assert!(w.try_send(t0 + SECOND, 2, SECOND).is_ok());
        // The slow one counts as sent 250 ms after it was, not 5 s.
        let free_at = t0 + ms(10) + MAX_LATE + SECOND;
        assert_eq!(
            w.try_send(t0 + SECOND + ms(1), 2, SECOND),
            Err(free_at - (t0 + SECOND + ms(1)))
        );
    }

    /// A slow operation is not late: each is measured against its own fastest answer.
    #[test]
    fn operations_are_measured_against_their_own_fastest_answer() {
        let mut w = Window::with_capacity(10);
        let t0 = Instant::now();
        for k in 0..10 {
            let seq = w.try_send(t0 + ms(100 * k), 10, SECOND).expect("room");
            let (op, took) = if k % 2 == 0 {
                ("list", ms(200))
            } else {
                ("switch", ms(50))
            };
            w.answered(seq, op, took);
        }
        assert!(w.try_send(t0 + SECOND, 10, SECOND).is_ok());
    }

    #[test]
    fn an_answer_after_its_request_left_the_window_changes_nothing() {
        let mut w = Window::with_capacity(2);
        let t0 = Instant::now();
        let first = w.try_send(t0, 2, SECOND).expect("room");
        w.try_send(t0 + ms(10), 2, SECOND).expect("room");
        w.try_send(t0 + SECOND, 2, SECOND).expect("room");
        w.answered(first, "op", ms(100));
        assert_eq!(w.try_send(t0 + SECOND, 2, SECOND), Err(ms(10)));
    }

    #[test]
    fn a_filled_window_admits_nothing_for_one_window() {
        let mut w = Window::with_capacity(3);
        let t0 = Instant::now();
        w.fill(t0, 3);
        assert_eq!(w.try_send(t0 + ms(1), 3, SECOND), Err(ms(999)));
        assert!(w.try_send(t0 + SECOND, 3, SECOND).is_ok());
    }
}

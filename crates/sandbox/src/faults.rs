//! Injected faults, deterministic for a seed: errors before execution, fixed latency, a
//! rate limit per account answered with 429 (the default account's is `rate_limit`, each
//! extra account's its own, each in its own one-second window), answers cut short after the change was made,
//! answers whose JSON is truncated though the HTTP answer is whole, and changes made but
//! answered as errors (`isError: true`, or 422, with the ids of what was done).
//!
//! One PRNG (splitmix64) serves every draw in request arrival order, so the same seed and the
//! same sequence of requests give the same sequence of faults.

use std::collections::BTreeSet;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::ops::Op;

/// What goes wrong, and where. Rates are probabilities in `[0, 1]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Faults {
    /// Chance of a 5xx answer before anything is executed.
    pub error_rate: f64,
    /// Operations that may get those errors; `None` means all.
    pub error_ops: Option<BTreeSet<Op>>,
    /// Delay added to every call.
    pub latency_ms: u64,
    /// Up to this much more delay per call, drawn uniformly (`0`: a fixed latency, and no
    /// draw, so the other faults' sequence is unchanged).
    pub latency_jitter_ms: u64,
    /// Requests per second of the default account (every request whose token is no extra
    /// account's); beyond it, 429 with `Retry-After: 1`.
    pub rate_limit: Option<u32>,
    /// Chance that a successful change is answered with a body cut short.
    pub drop_after_commit_rate: f64,
    /// Operations that may be cut; `None` means all changing operations.
    pub drop_ops: Option<BTreeSet<Op>>,
    /// Chance that a successful answer arrives whole at the HTTP level but with its JSON cut
    /// in half (a proxy or an overloaded server): `Content-Length` matches, the body is not JSON.
    pub truncate_rate: f64,
    /// Operations whose answers may be truncated; `None` means the reads (`search_result`,
    /// `list_links`).
    pub truncate_ops: Option<BTreeSet<Op>>,
    /// Chance that a successful change is answered as an error that still carries the ids
    /// of what was done: `{"isError":true,"message":"partially failed","placementIds":[..]}`
    /// (or HTTP 422 with `"error"` in the `http` error style).
    pub executed_error_rate: f64,
    /// Operations that may get those answers; `None` means all changing operations.
    pub executed_error_ops: Option<BTreeSet<Op>>,
}

impl Faults {
    pub(crate) fn latency(&self) -> Duration {
        Duration::from_millis(self.latency_ms)
    }

    fn errors_apply_to(&self, op: Op) -> bool {
        self.error_ops.as_ref().is_none_or(|s| s.contains(&op))
    }

    fn drops_apply_to(&self, op: Op) -> bool {
        match &self.drop_ops {
            Some(s) => s.contains(&op),
            None => op.is_change(),
        }
    }

    fn truncates_apply_to(&self, op: Op) -> bool {
        match &self.truncate_ops {
            Some(s) => s.contains(&op),
            None => matches!(op, Op::SearchResult | Op::ListLinks),
        }
    }

    fn executed_errors_apply_to(&self, op: Op) -> bool {
        match &self.executed_error_ops {
            Some(s) => s.contains(&op),
            None => op.is_change(),
        }
    }

    /// Rejects rates outside `[0, 1]`.
    pub(crate) fn validate(&self) -> Result<(), String> {
        for (name, rate) in [
            ("error_rate", self.error_rate),
            ("drop_after_commit_rate", self.drop_after_commit_rate),
            ("truncate_rate", self.truncate_rate),
            ("executed_error_rate", self.executed_error_rate),
        ] {
            if !(0.0..=1.0).contains(&rate) {
                return Err(format!("{name} must be between 0 and 1, got {rate}"));
            }
        }
        Ok(())
    }
}

/// splitmix64: tiny, fast and good enough for fault injection.
#[derive(Debug, Clone)]
pub struct Prng(u64);

impl Prng {
    pub fn new(seed: u64) -> Self {
        Prng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform draw in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniform draw in `[lo, hi]`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi - lo).max(0) as u64 + 1;
        lo + (self.next_u64() % span) as i64
    }
}

/// One account's one-second rate-limit window.
#[derive(Debug, Clone, Default)]
struct Window {
    start: Option<Instant>,
    count: u32,
}

impl Window {
    /// Counts the request; false when over `limit` in the current second.
    fn admit(&mut self, limit: u32, now: Instant) -> bool {
        let fresh = self
            .start
            .is_none_or(|s| now.duration_since(s) >= Duration::from_secs(1));
        if fresh {
            self.start = Some(now);
            self.count = 0;
        }
        self.count += 1;
        self.count <= limit
    }
}

/// The live fault state: current settings, the PRNG and each account's rate-limit window.
#[derive(Debug)]
pub struct FaultState {
    faults: Faults,
    rng: Prng,
    /// By account index: the default account's first.
    windows: Vec<Window>,
    /// The extra accounts' rate limits (the default's is `faults.rate_limit`).
    extra_limits: Vec<Option<u32>>,
}

impl FaultState {
    pub fn new(faults: Faults, seed: u64) -> Self {
        // A different stream from the inventory's, which is seeded with `seed` itself.
        let rng = Prng::new(seed ^ 0xFA17_FA17_FA17_FA17);
        FaultState {
            faults,
            rng,
            windows: vec![Window::default()],
            extra_limits: Vec::new(),
        }
    }

    /// The extra accounts' rate limits, in account order after the default account.
    #[must_use]
    pub fn with_account_limits(mut self, limits: Vec<Option<u32>>) -> Self {
        self.windows = vec![Window::default(); limits.len() + 1];
        self.extra_limits = limits;
        self
    }

    pub(crate) fn faults(&self) -> &Faults {
        &self.faults
    }

    pub(crate) fn set(&mut self, faults: Faults) {
        self.faults = faults;
    }

    /// Counts the request against its account's one-second window; false when over the
    /// account's limit.
    pub(crate) fn admit(&mut self, account: usize, now: Instant) -> bool {
        let limit = match account {
            0 => self.faults.rate_limit,
            n => self.extra_limits.get(n - 1).copied().flatten(),
        };
        let (Some(limit), Some(window)) = (limit, self.windows.get_mut(account)) else {
            return true;
        };
        window.admit(limit, now)
    }

    /// The delay of this call: the latency, plus a uniform draw up to the jitter.
    pub(crate) fn draw_latency(&mut self) -> Duration {
        let jitter = match self.faults.latency_jitter_ms {
            0 => 0,
            j => self.rng.range(0, j.min(i64::MAX as u64) as i64) as u64,
        };
        self.faults.latency() + Duration::from_millis(jitter)
    }

    /// Whether this call fails with a 5xx before executing.
    pub fn draw_error(&mut self, op: Op) -> bool {
        self.faults.error_rate > 0.0
            && self.faults.errors_apply_to(op)
            && self.rng.unit() < self.faults.error_rate
    }

    /// Whether this executed change is answered as an error (with its ids).
    pub(crate) fn draw_executed_error(&mut self, op: Op) -> bool {
        self.faults.executed_error_rate > 0.0
            && self.faults.executed_errors_apply_to(op)
            && self.rng.unit() < self.faults.executed_error_rate
    }

    /// Whether this executed change gets its answer cut short.
    pub(crate) fn draw_drop(&mut self, op: Op) -> bool {
        self.faults.drop_after_commit_rate > 0.0
            && self.faults.drops_apply_to(op)
            && self.rng.unit() < self.faults.drop_after_commit_rate
    }

    /// Whether this successful answer gets its JSON truncated.
    pub(crate) fn draw_truncate(&mut self, op: Op) -> bool {
        self.faults.truncate_rate > 0.0
            && self.faults.truncates_apply_to(op)
            && self.rng.unit() < self.faults.truncate_rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_error_sequence() {
        let faults = Faults {
            error_rate: 0.5,
            ..Faults::default()
        };
        let draw = |seed| {
            let mut s = FaultState::new(faults.clone(), seed);
            (0..64)
                .map(|_| s.draw_error(Op::AddProject))
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
    }

    #[test]
    fn drops_default_to_changing_operations_only() {
        let mut s = FaultState::new(
            Faults {
                drop_after_commit_rate: 1.0,
                ..Faults::default()
            },
            1,
        );
        assert!(s.draw_drop(Op::BuyLinks));
        assert!(!s.draw_drop(Op::ListLinks));
    }

    #[test]
    fn truncation_defaults_to_the_reads_only() {
        let mut s = FaultState::new(
            Faults {
                truncate_rate: 1.0,
                ..Faults::default()
            },
            1,
        );
        assert!(s.draw_truncate(Op::SearchResult) && s.draw_truncate(Op::ListLinks));
        assert!(!s.draw_truncate(Op::BuyLinks));
    }

    #[test]
    fn executed_errors_default_to_changing_operations_only() {
        let mut s = FaultState::new(
            Faults {
                executed_error_rate: 1.0,
                ..Faults::default()
            },
            1,
        );
        assert!(s.draw_executed_error(Op::BuyLinks));
        assert!(!s.draw_executed_error(Op::ListLinks));
        assert!(
            Faults {
                executed_error_rate: 1.5,
                ..Faults::default()
            }
            .validate()
            .is_err()
        );
    }

    #[test]
    fn jitter_adds_up_to_its_bound_and_none_without_it() {
        let fixed = Faults {
            latency_ms: 50,
            ..Faults::default()
        };
        let mut s = FaultState::new(fixed, 7);
        assert_eq!(s.draw_latency(), Duration::from_millis(50));
        let jittery = Faults {
            latency_ms: 50,
            latency_jitter_ms: 20,
            ..Faults::default()
        };
        let mut s = FaultState::new(jittery, 7);
        let draws: Vec<Duration> = (0..200).map(|_| s.draw_latency()).collect();
        assert!(
            draws
                .iter()
                .all(|d| *d >= Duration::from_millis(50) && *d <= Duration::from_millis(70))
        );
        assert!(draws.iter().any(|d| *d != draws[0]), "the jitter varies");
    }

    #[test]
    fn requests_beyond_the_rate_limit_in_one_second_are_refused() {
        let mut s = FaultState::new(
            Faults {
                rate_limit: Some(2),
                ..Faults::default()
            },
            1,
        );
        let t0 = Instant::now();
        let admitted: Vec<bool> = (0..3).map(|_| s.admit(0, t0)).collect();
        assert_eq!(admitted, [true, true, false]);
        assert!(s.admit(0, t0 + Duration::from_secs(1)));
    }

    #[test]
    fn each_account_has_its_own_limit_and_window() {
        let faults = Faults {
            rate_limit: Some(1),
            ..Faults::default()
        };
        let mut s = FaultState::new(faults, 1).with_account_limits(vec![Some(2), None]);
        let t0 = Instant::now();
        let default: Vec<bool> = (0..2).map(|_| s.admit(0, t0)).collect();
        let first: Vec<bool> = (0..3).map(|_| s.admit(1, t0)).collect();
        let second: Vec<bool> = (0..5).map(|_| s.admit(2, t0)).collect();
        assert_eq!(default, [true, false]);
        assert_eq!(first, [true, true, false]);
        assert!(second.iter().all(|a| *a), "no limit");
    }
}

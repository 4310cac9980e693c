//! How the benchmark prints a target: `target N: <what> = <figure> (goal <goal>) OK|MISSED by X`.

use std::time::Duration;

/// One measured target against its goal.
#[derive(Debug, Clone)]
pub(crate) struct Verdict {
    target: u8,
    what: String,
    figure: String,
    goal: String,
    /// `None`: met; `Some(by)`: missed by that much.
    missed_by: Option<String>,
}

impl Verdict {
    /// A figure that must stay at or below `goal`.
    pub(crate) fn at_most(target: u8, what: &str, value: f64, goal: f64, unit: &str) -> Verdict {
        Verdict {
            target,
            what: what.into(),
            figure: format!("{} {unit}", fmt_num(value)).trim_end().into(),
            goal: format!("<= {} {unit}", fmt_num(goal)).trim_end().into(),
            missed_by: (value > goal).then(|| {
                format!(
                    "{} {unit} ({:.1}%)",
                    fmt_num(value - goal),
                    (value / goal - 1.0) * 100.0
                )
                .replace("  ", " ")
            }),
        }
    }

    /// A figure that must reach `goal` at least (a rate).
    pub(crate) fn at_least(target: u8, what: &str, value: f64, goal: f64, unit: &str) -> Verdict {
        Verdict {
            target,
            what: what.into(),
            figure: format!("{} {unit}", fmt_num(value)).trim_end().into(),
            goal: format!(">= {} {unit}", fmt_num(goal)).trim_end().into(),
            missed_by: (value < goal).then(|| {
                format!(
                    "{} {unit} ({:.1}%)",
                    fmt_num(goal - value),
                    (1.0 - value / goal) * 100.0
                )
                .replace("  ", " ")
            }),
        }
    }

    /// A count that must equal `goal` exactly.
    pub(crate) fn exactly(target: u8, what: &str, value: f64, goal: f64) -> Verdict {
        Verdict {
            target,
            what: what.into(),
            figure: fmt_num(value),
            goal: format!("= {}", fmt_num(goal)),
            missed_by: (value != goal).then(|| fmt_num((value - goal).abs())),
        }
    }

    /// A figure the issue asks to report without a bound.
    pub(crate) fn reported(target: u8, what: &str, figure: String) -> Verdict {
        Verdict {
            target,
            what: what.into(),
            figure,
            goal: "reported, no bound".into(),
            missed_by: None,
        }
    }

    pub(crate) fn print(&self) {
        println!("target {}: {}", self.target, self.describe());
    }

    /// The line [`Verdict::print`] prints, without `target N: `.
    pub(crate) fn describe(&self) -> String {
        let state = match &self.missed_by {
            None => "OK".to_string(),
            Some(by) => format!("MISSED by {by}"),
        };
        format!(
            "{} = {} (goal {}) {state}",
            self.what, self.figure, self.goal
        )
    }

    pub(crate) fn met(&self) -> bool {
        self.missed_by.is_none()
    }
}

/// Numbers with as many decimals as they need: 3, 1.05, 0.012.
pub(crate) fn fmt_num(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else if v.abs() >= 0.1 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The `q` quantile (0..=1) of `samples`, which it sorts.
pub(crate) fn quantile(samples: &mut [Duration], q: f64) -> Duration {
    if samples.is_empty() {
        return Duration::ZERO;
    }
    samples.sort_unstable();
    let idx = ((samples.len() as f64 - 1.0) * q).round() as usize;
    samples[idx.min(samples.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_over_its_goal_is_missed_by_the_difference() {
        let v = Verdict::at_most(1, "wall time", 63.0, 60.0, "s");
        assert_eq!(v.missed_by.as_deref(), Some("3 s (5.0%)"));
    }

    #[test]
    fn a_rate_under_its_goal_is_missed_by_the_difference() {
        let v = Verdict::at_least(3, "throughput", 50.0, 500.0, "calls/s");
        assert_eq!(v.missed_by.as_deref(), Some("450 calls/s (90.0%)"));
        assert!(Verdict::at_least(3, "throughput", 500.0, 500.0, "calls/s").met());
    }

    #[test]
    fn a_figure_at_its_goal_is_met() {
        assert!(Verdict::at_most(5, "validate", 1.0, 1.0, "s").met());
    }

    #[test]
    fn the_median_of_an_odd_sample_is_its_middle() {
        let mut s: Vec<Duration> = [5, 1, 3].map(Duration::from_millis).to_vec();
        assert_eq!(quantile(&mut s, 0.5), Duration::from_millis(3));
    }
}

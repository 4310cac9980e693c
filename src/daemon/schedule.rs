//! Buy-round schedules. Five-field cron, read by `croner` (standard semantics: day-of-month
//! and day-of-week are ORed). The timer only triggers; the store decides whether a slot ran
//! (`Store::claim_round`), so restarts and replicas neither skip nor double a round.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use chrono::{DateTime, Utc};
use croner::Cron;
use croner::parser::{CronParser, Seconds};

#[derive(Debug, thiserror::Error)]
#[error("schedule `{pattern}` is not a five-field cron expression: {reason}")]
pub(crate) struct ScheduleError {
    pattern: String,
    reason: String,
}

pub(crate) fn parse(pattern: &str) -> Result<Cron, ScheduleError> {
    CronParser::builder()
        .seconds(Seconds::Disallowed)
        .build()
        .parse(pattern)
        .map_err(|e| ScheduleError {
            pattern: pattern.into(),
            reason: e.to_string(),
        })
}

/// Parsed schedules shared by pattern. A parsed [`Cron`] holds about 5 KiB (a bitfield for
/// every year it can name), which at 10,000 campaigns was 50 MiB, and campaigns mostly
/// share a few patterns. Entries whose last user is gone are dropped as the map grows.
#[derive(Debug, Default)]
pub(crate) struct Patterns {
    parsed: HashMap<String, Weak<Cron>>,
    prune_at: usize,
}

impl Patterns {
    /// [`parse`], or the `Cron` already parsed for the same pattern while one is in use.
    pub(crate) fn parse(&mut self, pattern: &str) -> Result<Arc<Cron>, ScheduleError> {
        if let Some(cron) = self.parsed.get(pattern).and_then(Weak::upgrade) {
            return Ok(cron);
        }
        let cron = Arc::new(parse(pattern)?);
        if self.parsed.len() >= self.prune_at {
            // Amortised: a full sweep only each time the map doubled since the last one.
            self.parsed.retain(|_, w| w.strong_count() > 0);
            self.prune_at = (self.parsed.len() * 2).max(64);
        }
        self.parsed
            .insert(pattern.to_owned(), Arc::downgrade(&cron));
        Ok(cron)
    }

    /// Patterns that have a parsed `Cron` in use.
    #[cfg(test)]
    fn in_use(&self) -> usize {
        self.parsed
            .values()
            .filter(|w| w.strong_count() > 0)
            .count()
    }
}

/// When the timer should next wake for this schedule.
pub(crate) fn next_slot(cron: &Cron, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    cron.find_next_occurrence(&now, false).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 22, h, m, 0).unwrap()
    }

    #[test]
    fn one_parsed_schedule_serves_every_campaign_with_its_pattern() {
        let mut p = Patterns::default();
        let a = p.parse("0 9 * * *").unwrap();
        let b = p.parse("0 9 * * *").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        let c = p.parse("30 9 * * *").unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(p.in_use(), 2);
        drop((a, b));
        assert_eq!(p.in_use(), 1);
        // Parsed again once nobody held it, and still correct.
        let again = p.parse("0 9 * * *").unwrap();
        assert_eq!(next_slot(&again, t(8, 0)), Some(t(9, 0)));
        assert!(p.parse("nonsense").is_err());
    }

    #[test]
    fn unused_patterns_do_not_pile_up() {
        let mut p = Patterns::default();
        for m in 0..1000 {
            drop(p.parse(&format!("{} {} * * *", m % 60, m / 60)).unwrap());
        }
        assert!(p.parsed.len() <= 128, "{} entries kept", p.parsed.len());
    }

    #[test]
    fn six_field_and_nonsense_patterns_are_refused() {
        assert!(parse("0 0 9 * * *").is_err());
        assert!(parse("every day").is_err());
        assert!(parse("61 * * * *").is_err());
    }

    #[test]
    fn day_of_month_and_day_of_week_are_ored() {
        // The 1st of the month OR any Monday: 2026-11-23 is a Monday, not the 1st.
        let c = parse("0 9 1 * 1").unwrap();
        let monday = Utc.with_ymd_and_hms(2026, 11, 23, 9, 0, 0).unwrap();
        assert_eq!(next_slot(&c, t(12, 0)), Some(monday));
    }
}

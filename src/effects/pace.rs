//! How long searches take on this marketplace, learned as rounds finish them (issue 27): the
//! age at which a search answered ready, smoothed. A round's first poll of a search waits
//! no longer than `--poll-initial` and no longer than half what searches took lately, never
//! less than [`FLOOR`]; later polls keep the doubling of [`crate::decide::round::next_poll_wait`],
//! and `--search-deadline` still ends a search. So on a marketplace whose searches are
//! ready in a second, a round's tail is a second or two, not the default's two to eight.
//!
//! The pace survives a restart: a process's first round starts from the journal's latest
//! ready searches ([`SearchPace::remember`]), so `once` and a restarted daemon do not go back
//! to the default's waits.

use std::sync::Mutex;
use std::time::Duration;

/// The shortest first wait, whatever searches took.
pub(crate) const FLOOR: Duration = Duration::from_millis(250);

/// How many of the journal's latest ready searches a process starts from: with the
/// smoothing's weight of a quarter, older ones would count for nothing.
pub(crate) const MEMORY: u32 = 50;

/// The learned pace; shared by every clone of the engine.
#[derive(Debug, Default)]
pub(crate) struct SearchPace {
    /// Smoothed age at which searches answered ready; `None` until one did.
    ready_after: Mutex<Option<Duration>>,
    /// Set once the journal's searches were read into the pace (or the read failed).
    remembered: tokio::sync::OnceCell<()>,
}

impl SearchPace {
    /// A search answered ready `age` after it started.
    pub(crate) fn ready_after(&self, age: Duration) {
        let mut r = self.ready_after.lock().unwrap_or_else(|e| e.into_inner());
        *r = Some(match *r {
            Some(old) => old.mul_f64(0.75) + age.mul_f64(0.25),
            None => age,
        });
    }

    /// Seeds the pace, once per process, with what `recall` reads from the journal: how
    /// long the latest searches took, oldest first. A read that fails only costs the
    /// default's waits, so it is logged and not retried.
    pub(crate) async fn remember<F, E>(&self, recall: F)
    where
        F: Future<Output = Result<Vec<Duration>, E>>,
        E: std::fmt::Display,
    {
        self.remembered
            .get_or_init(|| async {
                match recall.await {
                    Ok(ages) => ages.into_iter().for_each(|age| self.ready_after(age)),
                    Err(e) => {
                        tracing::warn!(error = %e, "could not read how long searches took from the journal; the first polls wait --poll-initial")
                    }
                }
            })
            .await;
    }

    /// The wait before a search's first poll, at most `initial` (`--poll-initial`).
    pub(crate) fn first_wait(&self, initial: Duration) -> Duration {
        let r = *self.ready_after.lock().unwrap_or_else(|e| e.into_inner());
        match r {
            Some(typical) => (typical / 2).clamp(FLOOR.min(initial), initial),
            None => initial,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECS: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn without_news_the_first_wait_is_the_configured_one() {
        assert_eq!(SearchPace::default().first_wait(SECS(2)), SECS(2));
    }

    #[test]
    fn quick_searches_are_polled_sooner_and_slow_ones_never_later_than_configured() {
        let quick = SearchPace::default();
        for _ in 0..20 {
            quick.ready_after(Duration::from_millis(800));
        }
        assert_eq!(quick.first_wait(SECS(2)), Duration::from_millis(400));
        let slow = SearchPace::default();
        slow.ready_after(SECS(60));
        assert_eq!(slow.first_wait(SECS(2)), SECS(2));
        let instant = SearchPace::default();
        instant.ready_after(Duration::ZERO);
        assert_eq!(instant.first_wait(SECS(2)), FLOOR);
        assert_eq!(
            instant.first_wait(Duration::from_millis(20)),
            Duration::from_millis(20)
        );
    }

    #[tokio::test]
    async fn the_journal_s_searches_seed_the_pace_once_per_process() {
        let p = SearchPace::default();
        let recalled = || async { Ok::<_, String>(vec![Duration::from_millis(600); 5]) };
        p.remember(recalled()).await;
        assert_eq!(p.first_wait(SECS(2)), Duration::from_millis(300));
        // Later reads change nothing: the process's own rounds teach it from now on.
        p.remember(async { Ok::<_, String>(vec![SECS(30)]) }).await;
        assert_eq!(p.first_wait(SECS(2)), Duration::from_millis(300));
        let failed = SearchPace::default();
        failed
            .remember(async { Err::<Vec<Duration>, _>("locked") })
            .await;
        assert_eq!(failed.first_wait(SECS(2)), SECS(2));
    }

    #[test]
    fn the_pace_follows_a_marketplace_that_slows_down() {
        let p = SearchPace::default();
        p.ready_after(SECS(1));
        let before = p.first_wait(SECS(10));
        for _ in 0..10 {
            p.ready_after(SECS(8));
        }
        assert!(p.first_wait(SECS(10)) > before);
        assert!(p.first_wait(SECS(10)) <= SECS(4));
    }
}

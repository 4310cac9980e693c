//! A removal is a decision too (issue 32). Teams edit campaign files all the time, and
//! sometimes a git checkout or a ConfigMap mount comes up empty: money must not move because
//! of that. Given the live set at the last unheld state, the removals seen within the window
//! and the operator's word, [`judge`] says whether the campaigns whose files are gone are
//! reconciled as removed (their autobuyers stop) or held as recorded (nothing stopped).
//!
//! - The removals that count ("the burst") are those seen within `window` of now, whatever
//!   became of them, and every one still held, however old: a hold lasts until the files
//!   return or an operator speaks, never merely until time passes; and removals spread over
//!   several reloads inside the window count together, so they cannot dodge the share.
//! - The live set at the last unheld state is what is present now plus the burst.
//! - Hold when the burst is more than `share` of that live set, and always when no file is
//!   left while a removal waits. One file removed among many proceeds, as it always did.
//! - The operator's word (`resolved`) takes those removals out of the judgement: they
//!   proceed, and the set they leave is the new baseline.

use std::time::Duration;

use chrono::{DateTime, Utc};

use linkrunner_domain::records::{RemovalRow, RemovalState};

/// When removals are held: `--removal-hold-share` and `--removal-window`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RemovalRule {
    /// Hold when more than this share (0 to 1) of the live campaigns vanish within the window.
    pub(crate) share: f64,
    /// Removals seen this close together count as one burst.
    pub(crate) window: Duration,
}

impl Default for RemovalRule {
    fn default() -> Self {
        RemovalRule {
            share: 0.5,
            window: Duration::from_secs(600),
        }
    }
}

/// What [`judge`] says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Every removal waiting proceeds: `proceed` are reconciled as removed.
    Proceed { proceed: Vec<String> },
    /// Nothing is stopped: `held` are kept as recorded until the files return or an
    /// operator's `resolve removals`.
    Hold(Hold),
}

/// A held set of removals and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hold {
    /// The campaigns whose removal waits, by name.
    pub(crate) held: Vec<String>,
    /// The removals of the burst (held ones included) and the live set they are a share of.
    burst: usize,
    live: usize,
    /// No campaign file is left at all.
    every_file_gone: bool,
}

impl Hold {
    /// The reason, in one line, for logs, `/readyz`, the page and `status`.
    pub(crate) fn reason(&self, rule: &RemovalRule) -> String {
        let why = if self.every_file_gone {
            "every campaign file is gone".to_string()
        } else {
            format!(
                "{} of {} campaign files vanished within {} s (more than --removal-hold-share {})",
                self.burst,
                self.live,
                rule.window.as_secs(),
                rule.share
            )
        };
        format!(
            "removal of {} campaign(s) held: {why}; nothing of them is stopped until the files return or `linkrunner resolve removals --reason …`",
            self.held.len()
        )
    }
}

/// Whether the removals waiting (`pending` or `held` in `removals`) proceed or are held, with
/// `present` campaign files loaded (or held as invalid) now.
pub(crate) fn judge(
    present: usize,
    removals: &[RemovalRow],
    rule: &RemovalRule,
    now: DateTime<Utc>,
) -> Verdict {
    let waiting = |r: &&RemovalRow| matches!(r.state, RemovalState::Pending | RemovalState::Held);
    let recent = |r: &&RemovalRow| {
        now.signed_duration_since(r.seen_at)
            .to_std()
            .map_or(true, |age| age <= rule.window)
    };
    let burst = removals
        .iter()
        .filter(|r| r.state != RemovalState::Resolved)
        .filter(|r| waiting(r) || recent(r))
        .count();
    let names: Vec<String> = removals
        .iter()
        .filter(waiting)
        .map(|r| r.campaign.clone())
        .collect();
    if names.is_empty() {
        return Verdict::Proceed { proceed: names };
    }
    let live = present + burst;
    let every_file_gone = present == 0;
    // `burst > share × live`, without a float's rounding at the boundary for shares such
    // as 0.5: compared in millionths.
    let share = (rule.share.clamp(0.0, 1.0) * 1e6).round() as u128;
    let over = (burst as u128) * 1_000_000 > share * (live as u128);
    if every_file_gone || over {
        Verdict::Hold(Hold {
            held: names,
            burst,
            live,
            every_file_gone,
        })
    } else {
        Verdict::Proceed { proceed: names }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    fn row(name: &str, seen: i64, state: RemovalState) -> RemovalRow {
        RemovalRow {
            campaign: name.into(),
            seen_at: at(seen),
            state,
            resolved: None,
        }
    }

    fn pending(names: &[&str], seen: i64) -> Vec<RemovalRow> {
        rows(names, seen, RemovalState::Pending)
    }

    /// One row of each of `names`, all seen at `seen` and in `state`.
    fn rows(names: &[&str], seen: i64, state: RemovalState) -> Vec<RemovalRow> {
        names.iter().map(|n| row(n, seen, state)).collect()
    }

    const SIX: [&str; 6] = ["a", "b", "c", "d", "e", "f"];

    fn held(v: &Verdict) -> bool {
        matches!(v, Verdict::Hold(_))
    }

    const RULE: RemovalRule = RemovalRule {
        share: 0.5,
        window: Duration::from_secs(600),
    };

    #[test]
    fn one_file_removed_among_many_proceeds() {
        let v = judge(9, &pending(&["a"], 0), &RULE, at(0));
        assert_eq!(
            v,
            Verdict::Proceed {
                proceed: vec!["a".into()]
            }
        );
    }

    #[test]
    fn every_file_gone_holds_even_a_single_campaign() {
        let v = judge(0, &pending(&["a"], 0), &RULE, at(0));
        let Verdict::Hold(h) = v else { panic!("{v:?}") };
        assert!(h.every_file_gone);
        assert_eq!(h.held, vec!["a".to_string()]);
        assert!(h.reason(&RULE).contains("every campaign file is gone"));
    }

    #[test]
    fn more_than_the_share_holds_and_exactly_the_share_proceeds() {
        // 6 of 10 gone: held. 5 of 10: proceeds (more than half, not half).
        assert!(held(&judge(
            4,
            &pending(&["a", "b", "c", "d", "e", "f"], 0),
            &RULE,
            at(0)
        )));
        assert!(!held(&judge(
            5,
            &pending(&["a", "b", "c", "d", "e"], 0),
            &RULE,
            at(0)
        )));
    }

    #[test]
    fn removals_spread_over_reloads_within_the_window_count_together() {
        // Three proceeded at 0 and 60 s; three more at 300 s: six of ten within the window.
        let mut rows = vec![
            row("a", 0, RemovalState::Proceeded),
            row("b", 0, RemovalState::Proceeded),
            row("c", 60, RemovalState::Proceeded),
        ];
        rows.extend(pending(&["d", "e", "f"], 300));
        let v = judge(4, &rows, &RULE, at(300));
        let Verdict::Hold(h) = v else { panic!("{v:?}") };
        assert_eq!((h.burst, h.live), (6, 10));
        assert_eq!(h.held, vec!["d", "e", "f"]);
        // Past the window the old ones no longer count: three of seven proceed.
        rows.truncate(3);
        rows.extend(pending(&["d", "e", "f"], 900));
        assert!(!held(&judge(4, &rows, &RULE, at(900))));
    }

    #[test]
    fn a_hold_outlasts_the_window_until_the_files_return_or_the_operator_speaks() {
        let mut held_rows = rows(&SIX, 0, RemovalState::Held);
        assert!(held(&judge(4, &held_rows, &RULE, at(86_400))));
        // Four files return (their rows go): two of eight wait, and proceed.
        held_rows.truncate(2);
        assert!(!held(&judge(8, &held_rows, &RULE, at(86_400))));
        // The operator's word: nothing waits, nothing is held, however many.
        let resolved = rows(&SIX, 0, RemovalState::Resolved);
        assert_eq!(
            judge(0, &resolved, &RULE, at(1)),
            Verdict::Proceed { proceed: vec![] }
        );
    }

    #[test]
    fn after_the_operators_word_the_resolved_set_is_the_new_baseline() {
        // Six resolved a minute ago; one more of the four left vanishes: 1 of 4, proceeds.
        let mut resolved = rows(&SIX, 0, RemovalState::Resolved);
        resolved.extend(pending(&["g"], 60));
        assert!(!held(&judge(3, &resolved, &RULE, at(60))));
    }

    fn states() -> impl Strategy<Value = RemovalState> {
        prop::sample::select(RemovalState::ALL.to_vec())
    }

    proptest! {
        /// Whatever the rows: no file left and a removal waiting is always held; a hold names
        /// exactly the waiting removals; nothing waiting is never held.
        #[test]
        fn the_verdict_covers_exactly_the_waiting_removals(
            present in 0usize..20,
            rows in prop::collection::vec((0i64..2000, states()), 0..20),
            share in 0.0f64..=1.0,
            now in 0i64..3000,
        ) {
            let rows: Vec<RemovalRow> = rows
                .iter()
                .enumerate()
                .map(|(i, (seen, s))| row(&format!("c{i}"), *seen, *s))
                .collect();
            let rule = RemovalRule { share, window: Duration::from_secs(600) };
            let waiting: Vec<String> = rows
                .iter()
                .filter(|r| matches!(r.state, RemovalState::Pending | RemovalState::Held))
                .map(|r| r.campaign.clone())
                .collect();
            match judge(present, &rows, &rule, at(now)) {
                Verdict::Hold(h) => {
                    prop_assert_eq!(&h.held, &waiting);
                    prop_assert!(!waiting.is_empty());
                    prop_assert!(h.every_file_gone || h.burst as f64 > share * h.live as f64 - 1e-6);
                }
                Verdict::Proceed { proceed } => {
                    prop_assert_eq!(&proceed, &waiting);
                    prop_assert!(present > 0 || waiting.is_empty());
                }
            }
        }

        /// More removals in the burst never turn a hold into a proceed (monotone in the burst).
        #[test]
        fn another_removal_never_lifts_a_hold(
            present in 1usize..20,
            gone in 1usize..20,
            share in 0.0f64..=1.0,
        ) {
            let names: Vec<String> = (0..gone + 1).map(|i| format!("c{i}")).collect();
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let rule = RemovalRule { share, window: Duration::from_secs(600) };
            let before = judge(present, &pending(&refs[..gone], 0), &rule, at(0));
            // The extra removal was present before: the live set stays the same.
            let after = judge(present - 1, &pending(&refs, 0), &rule, at(0));
            if held(&before) {
                prop_assert!(held(&after));
            }
        }
    }
}

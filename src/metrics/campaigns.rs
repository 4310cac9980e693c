//! The per-campaign series (`linkrunner_campaign_state`, `linkrunner_rounds_total`, …): one
//! row of numbers per campaign, rendered into the exposition by hand.
//!
//! Why not the `prometheus` crate's vectors: they keep every series as an object of its own
//! (its label pairs as owned strings, an atomic, a hash-map entry), and a scrape copies each
//! into a protobuf message before encoding. At 20 series per campaign that was 127 MiB held
//! for 10,000 campaigns, plus 58 MiB per scrape. A row here is about 150 bytes plus the
//! name, and a scrape writes straight from the rows. The families, names, help texts,
//! types and labels are the ones the crate produced; only the order of series differs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

/// The closed set of values of the `state` label of `linkrunner_campaign_state`.
pub(crate) const CAMPAIGN_STATES: [&str; 5] = [
    "active",
    "paused",
    "halted",
    "waiting_for_operator",
    "removed",
];

/// The closed set of values of the `outcome` label of `linkrunner_rounds_total` (a round's
/// `RoundOutcome`).
pub(crate) const ROUND_OUTCOMES: [&str; 5] =
    ["succeeded", "failed", "skipped", "stalled", "deferred"];

/// Outcomes whose series exist from a campaign's first refresh (`deferred` appears with
/// the first deferred round, as before).
const ROUND_OUTCOMES_AT_START: usize = 4;

/// The closed set of values of the `reason` label of `linkrunner_campaign_stalled` (the
/// store's `StallReason`).
pub(crate) const STALL_REASONS: [&str; 5] = [
    "no_readable_price",
    "insufficient_balance",
    "purchase_rejected",
    "search_not_ready",
    "nothing_bought",
];

/// One campaign's gauges, as [`CampaignSeries::set`] takes them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CampaignGaugeValues {
    /// Index into [`CAMPAIGN_STATES`].
    pub(crate) state: usize,
    pub(crate) committed_rubles: f64,
    pub(crate) cap_rubles: f64,
    pub(crate) uncertain: u64,
    pub(crate) held: u64,
    /// Index into [`STALL_REASONS`] of the reason the last round stalled, if it did.
    pub(crate) stalled: Option<usize>,
    /// Unix seconds of the last successful round, if any.
    pub(crate) last_success: Option<f64>,
}

/// A campaign's values; `None` where its series does not exist yet (a family exports only
/// the series that were set, as the crate's vectors did).
#[derive(Debug, Default, Clone)]
struct Row {
    gauges: Option<Gauges>,
    last_success: Option<f64>,
    rounds: [Option<u64>; ROUND_OUTCOMES.len()],
    bought: Option<u64>,
    // --- adoption (issue 24) ---
    /// Links released because they left the project's link list (drift).
    lost: Option<u64>,
    /// URLs on which buying is stopped while the list may be incomplete (set by rounds).
    buying_stopped: Option<u64>,
    /// Pages the link list showed held twice for one URL, each finding once (issue 32).
    held_twice: Option<u64>,
}

impl Row {
    /// Makes the counters that exist from a campaign's first refresh exist, at zero.
    fn init(&mut self) {
        for r in &mut self.rounds[..ROUND_OUTCOMES_AT_START] {
            r.get_or_insert(0);
        }
        self.bought.get_or_insert(0);
        self.lost.get_or_insert(0);
        self.held_twice.get_or_insert(0);
    }
}

#[derive(Debug, Clone, Copy)]
struct Gauges {
    state: u8,
    committed: f64,
    cap: f64,
    uncertain: u64,
    held: u64,
    /// `STALL_REASONS.len()` when the campaign is not stalled.
    stalled: u8,
}

/// Every campaign's row, by name (so a scrape lists campaigns in order).
#[derive(Debug, Default)]
pub(crate) struct CampaignSeries {
    rows: Mutex<BTreeMap<Box<str>, Row>>,
}

impl CampaignSeries {
    fn with_row(&self, campaign: &str, f: impl FnOnce(&mut Row)) {
        // A panic while a row was being changed leaves plain numbers behind: still usable.
        let mut rows = self.rows.lock().unwrap_or_else(|p| p.into_inner());
        match rows.get_mut(campaign) {
            Some(row) => f(row),
            None => f(rows.entry(campaign.into()).or_default()),
        }
    }

    /// Makes the campaign's counters exist at zero, so `increase()` sees their first step.
    #[cfg(test)]
    pub(crate) fn init(&self, campaign: &str) {
        self.with_row(campaign, Row::init);
    }

    /// Sets the campaign's gauges (and makes its counters exist).
    pub(crate) fn set(&self, campaign: &str, v: &CampaignGaugeValues) {
        debug_assert!(v.state < CAMPAIGN_STATES.len());
        self.with_row(campaign, |row| {
            row.gauges = Some(Gauges {
                state: v.state.min(CAMPAIGN_STATES.len() - 1) as u8,
                committed: v.committed_rubles,
                cap: v.cap_rubles,
                uncertain: v.uncertain,
                held: v.held,
                stalled: v
                    .stalled
                    .map_or(STALL_REASONS.len(), |s| s.min(STALL_REASONS.len()))
                    as u8,
            });
            if v.last_success.is_some() {
                row.last_success = v.last_success;
            }
            row.init();
        });
    }

    /// Counts one round of the campaign with `outcome` (one of [`ROUND_OUTCOMES`]).
    pub(crate) fn round(&self, campaign: &str, outcome: &str) {
        let Some(i) = ROUND_OUTCOMES.iter().position(|o| *o == outcome) else {
            debug_assert!(false, "unknown round outcome {outcome}");
            return;
        };
        self.with_row(campaign, |row| *row.rounds[i].get_or_insert(0) += 1);
    }

    /// Counts links the campaign bought.
    pub(crate) fn bought(&self, campaign: &str, links: u64) {
        self.with_row(campaign, |row| *row.bought.get_or_insert(0) += links);
    }

    /// Counts links that left the project's link list, their rent released (drift).
    pub(crate) fn links_lost(&self, campaign: &str, links: u64) {
        self.with_row(campaign, |row| *row.lost.get_or_insert(0) += links);
    }

    /// Counts pages the link list showed held twice for one URL, each finding once.
    pub(crate) fn pages_held_twice(&self, campaign: &str, pages: u64) {
        self.with_row(campaign, |row| *row.held_twice.get_or_insert(0) += pages);
    }

    /// Sets how many of the campaign's URLs a buy round did not buy for because the link
    /// list may be incomplete while others buy there.
    pub(crate) fn buying_stopped(&self, campaign: &str, urls: u64) {
        self.with_row(campaign, |row| row.buying_stopped = Some(urls));
    }

    /// Appends every family in the text exposition format. The lock is taken once per family,
    /// so a round that updates a row waits for one family's lines at most.
    pub(crate) fn render(&self, out: &mut String) {
        for family in FAMILIES {
            let rows = self.rows.lock().unwrap_or_else(|p| p.into_inner());
            family.render(&rows, out);
        }
    }
}

/// One family: its name, help, type, its second label (if any, with its closed set of
/// values) and how a row gives the value for the `i`th value of that label.
struct Family {
    name: &'static str,
    help: &'static str,
    kind: &'static str,
    second: Option<(&'static str, &'static [&'static str])>,
    value: fn(&Row, usize) -> Option<f64>,
}

impl Family {
    fn render(&self, rows: &BTreeMap<Box<str>, Row>, out: &mut String) {
        let mut header = false;
        let values = self.second.map_or(1, |(_, vs)| vs.len());
        for (campaign, row) in rows {
            for i in 0..values {
                let Some(v) = (self.value)(row, i) else {
                    continue;
                };
                if !header {
                    header = true;
                    let _ = writeln!(out, "# HELP {} {}", self.name, escape(self.help, false));
                    let _ = writeln!(out, "# TYPE {} {}", self.name, self.kind);
                }
                let _ = write!(
                    out,
                    "{}{{campaign=\"{}\"",
                    self.name,
                    escape(campaign, true)
                );
                if let Some((label, vs)) = self.second {
                    let _ = write!(out, ",{label}=\"{}\"", vs[i]);
                }
                // `f64`'s `Display`, as the crate's encoder writes values.
                let _ = writeln!(out, "}} {v}");
            }
        }
    }
}

fn escape(s: &str, quote: bool) -> std::borrow::Cow<'_, str> {
    if !(s.contains(['\\', '\n']) || quote && s.contains('"')) {
        return s.into();
    }
    let mut e = String::with_capacity(s.len() + 2);
    for c in s.chars() {
        match c {
            '\\' => e.push_str("\\\\"),
            '\n' => e.push_str("\\n"),
            '"' if quote => e.push_str("\\\""),
            c => e.push(c),
        }
    }
    e.into()
}

fn gauge(row: &Row) -> Option<&Gauges> {
    row.gauges.as_ref()
}

/// In name order, as the crate's `gather` sorted them.
const FAMILIES: [Family; 12] = [
    Family {
        name: "linkrunner_campaign_stalled",
        help: "1 for the reason the campaign's last buy round stalled (no_readable_price, insufficient_balance, purchase_rejected, search_not_ready, nothing_bought), 0 for the others.",
        kind: "gauge",
        second: Some(("reason", &STALL_REASONS)),
        value: |r, i| gauge(r).map(|g| f64::from(u8::from(usize::from(g.stalled) == i))),
    },
    Family {
        name: "linkrunner_campaign_state",
        help: "1 for the state each campaign is in (active, paused, halted, waiting_for_operator).",
        kind: "gauge",
        second: Some(("state", &CAMPAIGN_STATES)),
        value: |r, i| gauge(r).map(|g| f64::from(u8::from(usize::from(g.state) == i))),
    },
    Family {
        name: "linkrunner_last_successful_round_timestamp_seconds",
        help: "Unix time of the campaign's last successful round.",
        kind: "gauge",
        second: None,
        value: |r, _| r.last_success,
    },
    Family {
        name: "linkrunner_links_bought_total",
        help: "Links bought by this process, per campaign.",
        kind: "counter",
        second: None,
        value: |r, _| r.bought.map(|n| n as f64),
    },
    Family {
        name: "linkrunner_links_held",
        help: "Links held (bought and not released), per campaign.",
        kind: "gauge",
        second: None,
        value: |r, _| gauge(r).map(|g| g.held as f64),
    },
    Family {
        name: "linkrunner_links_lost_total",
        help: "Links that left the project's link list (absent from complete reads, or a leaving status), their rent released, per campaign.",
        kind: "counter",
        second: None,
        value: |r, _| r.lost.map(|n| n as f64),
    },
    Family {
        name: "linkrunner_monthly_cap_rubles",
        help: "The campaign's budget.monthly cap.",
        kind: "gauge",
        second: None,
        value: |r, _| gauge(r).map(|g| g.cap),
    },
    Family {
        name: "linkrunner_monthly_commitment_rubles",
        help: "Monthly commitment: held, reserved and uncertain links plus running autobuyers' budgets.",
        kind: "gauge",
        second: None,
        value: |r, _| gauge(r).map(|g| g.committed),
    },
    Family {
        name: "linkrunner_pages_held_twice_total",
        help: "Pages the project's link list showed held twice (two links or more) for one URL, whoever bought them, each finding once, per campaign.",
        kind: "counter",
        second: None,
        value: |r, _| r.held_twice.map(|n| n as f64),
    },
    Family {
        name: "linkrunner_rounds_total",
        help: "Buy rounds by outcome (succeeded, failed, skipped, stalled).",
        kind: "counter",
        second: Some(("outcome", &ROUND_OUTCOMES)),
        value: |r, i| r.rounds[i].map(|n| n as f64),
    },
    Family {
        name: "linkrunner_uncertain_intents",
        help: "Intents whose outcome is unknown and that wait for settlement or an operator.",
        kind: "gauge",
        second: None,
        value: |r, _| gauge(r).map(|g| g.uncertain as f64),
    },
    Family {
        name: "linkrunner_urls_buying_stopped",
        help: "URLs a buy round did not buy for because the link list may be incomplete while others (autobuyers, hand purchases) buy there.",
        kind: "gauge",
        second: None,
        value: |r, _| r.buying_stopped.map(|n| n as f64),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn values(state: usize, stalled: Option<usize>) -> CampaignGaugeValues {
        CampaignGaugeValues {
            state,
            committed_rubles: 1234.5,
            cap_rubles: 5000.0,
            uncertain: 2,
            held: 3,
            stalled,
            last_success: None,
        }
    }

    #[test]
    fn a_campaign_never_seen_exports_nothing() {
        let s = CampaignSeries::default();
        let mut out = String::new();
        s.render(&mut out);
        assert_eq!(out, "");
    }

    #[test]
    fn counters_exist_at_zero_after_init_and_deferred_only_once_counted() {
        let s = CampaignSeries::default();
        s.init("a");
        let mut out = String::new();
        s.render(&mut out);
        assert!(out.contains("linkrunner_rounds_total{campaign=\"a\",outcome=\"stalled\"} 0\n"));
        assert!(out.contains("linkrunner_links_bought_total{campaign=\"a\"} 0\n"));
        assert!(!out.contains("deferred"), "{out}");
        assert!(
            !out.contains("linkrunner_campaign_state"),
            "gauges not set yet: {out}"
        );
        s.round("a", "deferred");
        s.round("a", "succeeded");
        s.round("a", "succeeded");
        s.bought("a", 5);
        let mut out = String::new();
        s.render(&mut out);
        assert!(out.contains("linkrunner_rounds_total{campaign=\"a\",outcome=\"deferred\"} 1\n"));
        assert!(out.contains("linkrunner_rounds_total{campaign=\"a\",outcome=\"succeeded\"} 2\n"));
        assert!(out.contains("linkrunner_links_bought_total{campaign=\"a\"} 5\n"));
    }

    #[test]
    fn gauges_show_one_state_and_one_reason_and_keep_the_last_success() {
        let s = CampaignSeries::default();
        let mut v = values(3, Some(1));
        v.last_success = Some(1_700_000_000.0);
        s.set("b", &v);
        s.set("b", &values(0, None));
        let mut out = String::new();
        s.render(&mut out);
        for (i, st) in CAMPAIGN_STATES.iter().enumerate() {
            let want = u8::from(i == 0);
            assert!(
                out.contains(&format!(
                    "linkrunner_campaign_state{{campaign=\"b\",state=\"{st}\"}} {want}\n"
                )),
                "{out}"
            );
        }
        for r in STALL_REASONS {
            assert!(out.contains(&format!(
                "linkrunner_campaign_stalled{{campaign=\"b\",reason=\"{r}\"}} 0\n"
            )));
        }
        assert!(out.contains("linkrunner_monthly_commitment_rubles{campaign=\"b\"} 1234.5\n"));
        assert!(out.contains("linkrunner_monthly_cap_rubles{campaign=\"b\"} 5000\n"));
        assert!(out.contains("linkrunner_uncertain_intents{campaign=\"b\"} 2\n"));
        assert!(out.contains("linkrunner_links_held{campaign=\"b\"} 3\n"));
        assert!(out.contains(
            "linkrunner_last_successful_round_timestamp_seconds{campaign=\"b\"} 1700000000\n"
        ));
        assert_eq!(
            out.matches("# TYPE linkrunner_campaign_state gauge\n")
                .count(),
            1
        );
        assert_eq!(
            out.matches("# TYPE linkrunner_rounds_total counter\n")
                .count(),
            1
        );
    }

    #[test]
    fn each_family_is_one_block_whatever_the_number_of_campaigns() {
        let s = CampaignSeries::default();
        for c in ["c", "a", "b"] {
            s.set(c, &values(1, Some(4)));
        }
        let mut out = String::new();
        s.render(&mut out);
        let mut seen = Vec::new();
        for line in out.lines().filter(|l| !l.starts_with('#')) {
            let name = &line[..line.find('{').unwrap()];
            if seen.last() != Some(&name) {
                assert!(!seen.contains(&name), "{name} split in two blocks:\n{out}");
                seen.push(name);
            }
        }
        assert_eq!(
            seen.len(),
            FAMILIES.len() - 2,
            "no last success and no URL count of a round was set"
        );
        assert!(
            out.contains(
                "linkrunner_campaign_stalled{campaign=\"a\",reason=\"nothing_bought\"} 1\n"
            )
        );
        let a = out.find("{campaign=\"a\"").unwrap();
        let c = out.find("{campaign=\"c\"").unwrap();
        assert!(a < c, "campaigns in name order");
    }

    #[test]
    fn label_values_are_escaped_as_the_format_requires() {
        assert_eq!(escape("plain-name", true), "plain-name");
        assert_eq!(escape("a\"b\\c\nd", true), "a\\\"b\\\\c\\nd");
        assert_eq!(escape("say \"x\"", false), "say \"x\"");
    }
}

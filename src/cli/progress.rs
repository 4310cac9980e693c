//! `once` while it works and when it ends: progress on stderr (a bar redrawn in place on a
//! terminal, plain lines when piped, so a CI log shows it too) and a totals table on stdout —
//! campaigns by outcome, links bought, the monthly commitment against the caps, what waits for
//! an operator and what failed, each with its reasons. Progress comes from the pass itself
//! ([`PassProgress`]) and the client's counters; nothing here touches the marketplace.
//!
//! Campaign names come from files and details carry the marketplace's error bodies, so every
//! line built here has them escaped ([`shown::line`]): a progress line on stderr reaches the
//! terminal (or a CI log) as it is, and an ESC or CR in an error body must not act there.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedReceiver;

use crate::effects::pass::{CampaignReport, PassOutcome, PassProgress};
use crate::metrics::{API_OUTCOMES, Metrics};
use crate::views::review::diff::rubles;
use linkrunner_domain::money::Money;
use linkrunner_domain::shown;

/// How often the bar is redrawn, and how long plain output stays quiet before a line that
/// says what is still working.
const REDRAW: Duration = Duration::from_millis(250);
const QUIET_LINE: Duration = Duration::from_secs(10);
/// Campaigns named in the "working" part of a progress line, and per reason in the totals.
const NAMED: usize = 3;

/// What the progress display knows.
#[derive(Default)]
struct State {
    total: usize,
    done: usize,
    working: BTreeMap<String, Instant>,
}

/// Draws progress until `rx` closes (the pass ended). On a terminal: one line redrawn.
pub(crate) async fn show(
    mut rx: UnboundedReceiver<PassProgress>,
    metrics: std::sync::Arc<Metrics>,
) {
    let tty = std::io::stderr().is_terminal();
    let mut s = State::default();
    let mut tick = tokio::time::interval(REDRAW);
    let mut last_line = Instant::now();
    loop {
        tokio::select! {
            ev = rx.recv() => match ev {
                None => break,
                Some(PassProgress::Total(n)) => s.total = n,
                Some(PassProgress::Started(name)) => { s.working.insert(name, Instant::now()); }
                Some(PassProgress::Done(r)) => {
                    s.working.remove(&r.campaign);
                    s.done += 1;
                    if !tty {
                        eprintln!("[{}/{}] {}", s.done, s.total, report_line(&r));
                        last_line = Instant::now();
                    }
                }
            },
            _ = tick.tick() => {
                if tty {
                    eprint!("\r\x1b[2K{}", bar_line(&s, &metrics));
                    let _ = std::io::stderr().flush();
                } else if last_line.elapsed() >= QUIET_LINE {
                    eprintln!("… {}", status_line(&s, &metrics));
                    last_line = Instant::now();
                }
            }
        }
    }
    if tty {
        eprint!("\r\x1b[2K");
        let _ = std::io::stderr().flush();
    }
}

/// `acme-shoes: stalled [insufficient_balance] (bought 0, uncertain 0): detail`, escaped.
pub(crate) fn report_line(r: &CampaignReport) -> String {
    let detail = r
        .detail
        .as_deref()
        .map(|d| format!(": {}", shown::line(d)))
        .unwrap_or_default();
    let reason = r.reason.map(|x| format!(" [{x}]")).unwrap_or_default();
    format!(
        "{}: {}{reason} (bought {}, uncertain {}){detail}",
        shown::line(&r.campaign),
        r.outcome,
        r.bought,
        r.uncertain
    )
}

fn bar_line(s: &State, m: &Metrics) -> String {
    const WIDTH: usize = 24;
    let filled = (s.done * WIDTH)
        .checked_div(s.total)
        .unwrap_or(0)
        .min(WIDTH);
    let line = format!(
        "[{}{}] {}",
        "#".repeat(filled),
        "-".repeat(WIDTH - filled),
        status_line(s, m)
    );
    line.chars().take(160).collect()
}

/// `12/200 campaigns done · 340 marketplace calls · 14 rate-limiter waits · working on: a (42 s), b +3`.
fn status_line(s: &State, m: &Metrics) -> String {
    let (calls, waits) = calls_and_waits(m);
    let mut line = format!(
        "{}/{} campaigns done · {calls} marketplace call(s) · {waits} wait(s) for the rate limit",
        s.done, s.total
    );
    if !s.working.is_empty() {
        let mut oldest: Vec<(&String, &Instant)> = s.working.iter().collect();
        oldest.sort_by_key(|(_, t)| **t);
        let named: Vec<String> = oldest
            .iter()
            .take(NAMED)
            .map(|(n, t)| format!("{} ({} s)", shown::line(n), t.elapsed().as_secs()))
            .collect();
        let _ = write!(line, " · waiting on: {}", named.join(", "));
        if oldest.len() > NAMED {
            let _ = write!(line, " +{}", oldest.len() - NAMED);
        }
    }
    line
}

/// Marketplace calls made so far and how often the client waited for its rate limit.
fn calls_and_waits(m: &Metrics) -> (u64, u64) {
    // The ten operations' calls only, as counted before the totals were gathered at once.
    let calls = m
        .api_call_totals()
        .iter()
        .filter(|((op, o), _)| {
            linkrunner_domain::op::ALL.contains(&op.as_str()) && API_OUTCOMES.contains(&o.as_str())
        })
        .map(|(_, n)| n)
        .sum();
    (calls, m.rate_limit_waits_total.get())
}

/// The money the journal holds after the pass, for the totals.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MoneyTotals {
    pub(crate) committed: Money,
    pub(crate) caps: Money,
    pub(crate) uncertain: Money,
}

/// The totals table.
pub(crate) fn totals(reports: &[CampaignReport], money: Option<MoneyTotals>) -> String {
    let mut o = String::from("\ntotals\n");
    let mut by_outcome: BTreeMap<&str, usize> = BTreeMap::new();
    for r in reports {
        *by_outcome.entry(r.outcome.as_str()).or_default() += 1;
    }
    let outcomes: Vec<String> = by_outcome.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let _ = writeln!(
        o,
        "  {:<10} {:>10}   {}",
        "campaigns",
        reports.len(),
        outcomes.join(", ")
    );
    let bought: u64 = reports.iter().map(|r| u64::from(r.bought)).sum();
    let _ = writeln!(o, "  {:<10} {:>10}   link(s)", "bought", bought);
    if let Some(m) = money {
        let _ = writeln!(
            o,
            "  {:<10} {:>10}   RUB/month committed, of {} RUB/month in caps; {} RUB uncertain",
            "committed",
            rubles(m.committed),
            rubles(m.caps),
            rubles(m.uncertain)
        );
    }
    let waiting: Vec<&CampaignReport> = reports.iter().filter(|r| is_waiting(r.outcome)).collect();
    let _ = writeln!(
        o,
        "  {:<10} {:>10}   {}",
        "waiting",
        waiting.len(),
        reasons(&waiting)
    );
    let failed: Vec<&CampaignReport> = reports
        .iter()
        .filter(|r| r.outcome == PassOutcome::Failed)
        .collect();
    let _ = writeln!(
        o,
        "  {:<10} {:>10}   {}",
        "failed",
        failed.len(),
        reasons(&failed)
    );
    o
}

/// Outcomes that wait for something (an operator, money, another process), not failures.
fn is_waiting(o: PassOutcome) -> bool {
    matches!(
        o,
        PassOutcome::Stalled
            | PassOutcome::SpendingStopped
            | PassOutcome::Blocked
            | PassOutcome::Skipped
    )
}

/// `insufficient_balance: acme, bolt; blocked: cap reached: calm` — grouped by reason.
fn reasons(rs: &[&CampaignReport]) -> String {
    let mut groups: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for r in rs {
        let why = match (r.reason, r.detail.as_deref()) {
            (Some(reason), _) => reason.as_str().to_string(),
            (None, Some(d)) => {
                let d: String = d.chars().take(80).collect();
                format!("{}: {}", r.outcome, shown::line(&d))
            }
            (None, None) => r.outcome.as_str().to_string(),
        };
        groups.entry(why).or_default().push(&r.campaign);
    }
    groups
        .iter()
        .map(|(why, names)| {
            let named: Vec<String> = names
                .iter()
                .take(NAMED)
                .map(|n| shown::line(n).into_owned())
                .collect();
            let more = names.len().saturating_sub(NAMED);
            let more = if more > 0 {
                format!(" +{more}")
            } else {
                String::new()
            };
            format!("{why} ({}): {}{more}", names.len(), named.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StallReason;

    fn report(name: &str, outcome: PassOutcome, bought: u32) -> CampaignReport {
        CampaignReport {
            outcome,
            bought,
            ..CampaignReport::new(name)
        }
    }

    #[test]
    fn progress_lines_and_totals_show_hostile_names_and_details_escaped() {
        let hostile = "\u{1b}[2Jx\r\0\u{202e}y\u{9b}";
        let mut r = report(&format!("n{hostile}"), PassOutcome::Blocked, 0);
        r.detail = Some(format!("refused: {hostile}"));
        let mut s = State::default();
        s.working.insert(r.campaign.clone(), Instant::now());

        let surfaces = [
            report_line(&r),
            status_line(&s, &Metrics::new()),
            totals(&[r], None),
        ];

        for text in surfaces {
            assert!(
                !text.chars().any(|c| c != '\n' && shown::is_unsafe(c)),
                "{text:?}"
            );
            assert!(text.contains("\\x1b[2Jx\\r\\0\\u{202e}y"), "{text}");
        }
    }

    #[test]
    fn the_totals_count_outcomes_links_money_and_group_what_waits_or_failed_by_reason() {
        let mut stalled = report("bolt", PassOutcome::Stalled, 0);
        stalled.reason = Some(StallReason::InsufficientBalance);
        let mut failed = report("calm", PassOutcome::Failed, 0);
        failed.detail = Some("marketplace: connection refused".into());
        let rs = vec![report("acme", PassOutcome::Converged, 3), stalled, failed];
        let money = MoneyTotals {
            committed: Money::from_rubles(12_345),
            caps: Money::from_rubles(600_000),
            uncertain: Money::ZERO,
        };

        let t = totals(&rs, Some(money));

        assert!(
            t.contains("  campaigns           3   converged 1, failed 1, stalled 1"),
            "{t}"
        );
        assert!(t.contains("  bought              3   link(s)"), "{t}");
        assert!(
            t.contains(
                "  committed      12,345   RUB/month committed, of 600,000 RUB/month in caps"
            ),
            "{t}"
        );
        assert!(
            t.contains("  waiting             1   insufficient_balance (1): bolt"),
            "{t}"
        );
        assert!(
            t.contains(
                "  failed              1   failed: marketplace: connection refused (1): calm"
            ),
            "{t}"
        );
    }
}

//! `plan --format markdown --base REV`: the pull-request comment that shows what the change
//! under review changes. Only campaigns whose file differs from the base revision are shown,
//! each with its fields old → new, the money effect of the edit (cap and the most the file
//! lets it commit, before and after), and its plan against what the journal holds ("worst
//! case now 2,950 of 3,000"). Every other campaign is counted in one line. Within
//! [`super::MAX_COMMENT_BYTES`]: a bulk edit becomes one line per campaign, the largest
//! money change first, with details for the largest (see `fit`).

use std::collections::HashMap;
use std::fmt::Write as _;

use super::diff::{CampaignDiff, FileChange, money_delta, rubles};
use super::fit::{self, Item};
use super::{MARKER, MAX_COMMENT_BYTES, md, render_plan_body, render_problems};
use crate::decide::plan::{Action, CampaignPlan};
use linkrunner_domain::money::Money;

/// Most field rows shown for one campaign; the rest are counted.
const MAX_FIELD_ROWS: usize = 40;

/// What the comment is made of.
pub(crate) struct Review<'a> {
    /// The base revision's commit.
    pub(crate) base: &'a str,
    /// The campaigns whose file changed ([`super::diff::diff_campaigns`]).
    pub(crate) diffs: &'a [CampaignDiff],
    /// The plan of every campaign of the working tree, and of removed ones the journal knows.
    pub(crate) plans: &'a [CampaignPlan],
    /// Campaign files of the working tree that fail validation.
    pub(crate) problems: &'a [String],
    /// Files of the base revision that did not load (their campaigns count as added).
    pub(crate) base_problems: usize,
    /// Campaign files of the working tree that loaded.
    pub(crate) campaigns: usize,
    /// `--fail-above`: the verdict, said right under the headline.
    pub(crate) fail_above: Option<&'a super::gate::FailAbove>,
}

/// The whole comment.
pub(crate) fn render_review(r: &Review) -> String {
    let plans: HashMap<&str, &CampaignPlan> =
        r.plans.iter().map(|p| (p.campaign.as_str(), p)).collect();
    let mut o = String::new();
    let _ = writeln!(o, "{MARKER}\n{}\n", headline(r));
    if let Some(f) = r.fail_above {
        let _ = writeln!(o, "{}\n", f.markdown());
    }
    render_problems(&mut o, r.problems);
    let tail = unchanged_line(r);
    let mut diffs: Vec<&CampaignDiff> = r.diffs.iter().collect();
    diffs.sort_by(|a, b| {
        b.weight()
            .cmp(&a.weight())
            .then(a.campaign.cmp(&b.campaign))
    });
    let items: Vec<Item> = diffs
        .iter()
        .map(|d| item(d, plans.get(d.campaign.as_str()).copied()))
        .collect();
    let budget = MAX_COMMENT_BYTES.saturating_sub(o.len() + tail.len() + 8);
    o.push_str(&fit::render(
        &items,
        "| campaign | file | fields | money |\n|---|---|---|---|",
        budget,
    ));
    o.push_str("---\n");
    o.push_str(&tail);
    o
}

fn headline(r: &Review) -> String {
    let count = |k: FileChange| r.diffs.iter().filter(|d| d.change == k).count();
    let sum = |f: fn(&CampaignDiff) -> Option<Money>| {
        r.diffs
            .iter()
            .filter_map(f)
            .fold(Money::ZERO, |a, m| a.checked_add(m).unwrap_or(Money::MAX))
    };
    let mut parts = vec![format!(
        "{} of {} campaign(s) change ({} edited, {} added, {} removed)",
        r.diffs.len(),
        r.campaigns,
        count(FileChange::Edited),
        count(FileChange::Added),
        count(FileChange::Removed)
    )];
    let money = [
        ("caps", sum(|d| d.money.cap.0), sum(|d| d.money.cap.1)),
        (
            "commitment at most",
            sum(|d| d.money.worst.0),
            sum(|d| d.money.worst.1),
        ),
    ];
    for (what, old, new) in money {
        if let Some(delta) = money_delta(Some(old), Some(new), "RUB/month") {
            parts.push(format!("{what} {delta}"));
        }
    }
    if !r.problems.is_empty() {
        parts.push(format!("**{} file problem(s)**", r.problems.len()));
    }
    if r.base_problems > 0 {
        parts.push(format!("{} file problem(s) at the base", r.base_problems));
    }
    format!(
        "**linkrunner plan** against `{}`: {}",
        r.base.chars().take(12).collect::<String>(),
        parts.join("; ")
    )
}

/// `cap +500 RUB/month, +20 %; +500 RUB/month commitment, +34 %; worst case now 2,950 of 3,000`.
fn money_phrase(d: &CampaignDiff, plan: Option<&CampaignPlan>) -> String {
    let mut parts = Vec::new();
    if let Some(x) = money_delta(d.money.cap.0, d.money.cap.1, "RUB/month") {
        parts.push(format!("cap {x}"));
    }
    if let Some(x) = money_delta(d.money.worst.0, d.money.worst.1, "RUB/month") {
        parts.push(format!("commitment at most {x}"));
    }
    if let Some(p) = plan.filter(|_| d.change != FileChange::Removed) {
        parts.push(format!(
            "worst case now {} of {}",
            rubles(p.money.worst_after_round),
            rubles(p.money.cap)
        ));
    }
    if parts.is_empty() {
        "no money change".into()
    } else {
        parts.join("; ")
    }
}

fn change_word(c: FileChange) -> &'static str {
    match c {
        FileChange::Added => "new file",
        FileChange::Removed => "file removed",
        FileChange::Edited => "edited",
    }
}

fn item(d: &CampaignDiff, plan: Option<&CampaignPlan>) -> Item {
    let name = d.campaign.replace('`', "'");
    let money = md(&money_phrase(d, plan));
    let mut fields: Vec<&str> = d.fields.iter().take(3).map(|f| f.field.as_str()).collect();
    fields.dedup();
    let more = d.fields.len().saturating_sub(3);
    let line = format!(
        "| `{name}` | {} | {}{} | {money} |",
        change_word(d.change),
        md(&fields.join(", ")),
        if more > 0 {
            format!(" (+{more})")
        } else {
            String::new()
        }
    );
    let mut o = format!("### `{name}`: {} — {money}\n\n", change_word(d.change));
    render_fields(&mut o, d);
    render_money(&mut o, d, plan);
    if let Some(p) = plan {
        render_plan_body(&mut o, p);
    }
    Item { line, detail: o }
}

fn render_fields(o: &mut String, d: &CampaignDiff) {
    if d.fields.is_empty() {
        return;
    }
    o.push_str("| field | before | after | money |\n|---|---|---|---|\n");
    for f in d.fields.iter().take(MAX_FIELD_ROWS) {
        let cell = |v: &Option<String>| v.as_deref().map_or("—".to_string(), md);
        let _ = writeln!(
            o,
            "| `{}` | {} | {} | {} |",
            f.field.replace('`', "'"),
            cell(&f.old),
            cell(&f.new),
            f.money.as_deref().map(md).unwrap_or_default()
        );
    }
    if d.fields.len() > MAX_FIELD_ROWS {
        let _ = writeln!(
            o,
            "| … {} more field(s) | | | |",
            d.fields.len() - MAX_FIELD_ROWS
        );
    }
    o.push('\n');
}

fn render_money(o: &mut String, d: &CampaignDiff, plan: Option<&CampaignPlan>) {
    let side = |m: Option<Money>| m.map_or("—".to_string(), rubles);
    let _ = write!(
        o,
        "**Money** (RUB/month): cap {} → {}; the most the file lets it commit (running autobuyers \
         and one buy round at the worst) {} → {}",
        side(d.money.cap.0),
        side(d.money.cap.1),
        side(d.money.worst.0),
        side(d.money.worst.1),
    );
    if let Some(p) = plan {
        let m = &p.money;
        let _ = write!(
            o,
            "; against the journal: committed {}, worst case after the next pass {} of {}",
            rubles(m.committed),
            rubles(m.worst_after_round),
            rubles(m.cap)
        );
    }
    o.push_str(".\n\n");
}

/// One line for every campaign whose file did not change, with what their next pass does.
fn unchanged_line(r: &Review) -> String {
    let changed: std::collections::HashSet<&str> =
        r.diffs.iter().map(|d| d.campaign.as_str()).collect();
    let rest: Vec<&CampaignPlan> = r
        .plans
        .iter()
        .filter(|p| !changed.contains(p.campaign.as_str()))
        .collect();
    let count = |f: &dyn Fn(&CampaignPlan) -> usize| rest.iter().map(|p| f(p)).sum::<usize>();
    let mut parts = Vec::new();
    for (n, word) in [
        (
            count(&|p| {
                p.actions
                    .iter()
                    .filter(|a| matches!(a, Action::BuyRound { .. }))
                    .count()
            }),
            "buy round(s)",
        ),
        (
            count(&|p| {
                p.actions
                    .iter()
                    .filter(|a| matches!(a, Action::Settle { .. }))
                    .count()
            }),
            "settlement(s) of uncertain calls",
        ),
        (count(&|p| p.cap_changes.len()), "cap(s) to record"),
        (count(&|p| p.unapplied.len()), "step(s) not applied"),
        (
            count(&|p| usize::from(p.spending_stopped.is_some())),
            "campaign(s) with spending stopped",
        ),
    ] {
        if n > 0 {
            parts.push(format!("{n} {word}"));
        }
    }
    let next = if parts.is_empty() {
        "nothing to do".to_string()
    } else {
        parts.join(", ")
    };
    format!(
        "{} other campaign(s) unchanged; their next pass: {next} (`linkrunner plan` shows each).\n",
        rest.len()
    )
}

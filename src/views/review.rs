//! `plan --format markdown`: the plan as a pull-request comment. A one-line summary on top,
//! then per campaign what will be created, bought, started, stopped and settled, what will
//! not be applied and why, and the money (commitment now, worst case after the next pass,
//! headroom). Text from campaign files is escaped so a file under review cannot inject
//! markup, mentions or links into the comment.
//!
//! - `diff`: what a pull request changes in the campaign files, field by field, and in money;
//! - `pr`: the comment for `plan --base REV`: only the campaigns whose file changed;
//! - `fit`: fitting the comment's sections into its size limit;
//! - `gate`: `--fail-above`, the caps' rise against a limit (exit 5).
//!
//! May import: crate::campaign, crate::decide, crate::store.

use std::fmt::Write as _;

use linkrunner_domain::money::Money;

use crate::decide::plan::{Action, CampaignPlan, CapChange};

pub(crate) mod diff;
mod fit;
pub(crate) mod gate;
mod pr;

pub(crate) use pr::{Review, render_review};

/// The comment's first line, also used to find and update an earlier comment.
pub(crate) const MARKER: &str = "<!-- linkrunner-plan -->";

/// The comment's size limit in bytes: a GitHub comment holds 65,536 characters, a GitLab
/// note about 1 MB; what does not fit in detail is one line per campaign.
pub(crate) const MAX_COMMENT_BYTES: usize = 60_000;

/// Most file problems listed one by one; the rest are counted (`linkrunner validate` lists all).
const MAX_PROBLEM_LINES: usize = 50;

/// Most characters of one problem shown: a message can be long (a clash names other files).
const MAX_PROBLEM_CHARS: usize = 400;

/// Most bytes the problems take, so that the campaigns' sections keep most of the comment.
const MAX_PROBLEM_BYTES: usize = MAX_COMMENT_BYTES / 4;

/// The whole comment for `plans`; `problems` are campaign files that failed validation.
pub fn render_markdown(plans: &[CampaignPlan], problems: &[String]) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{MARKER}\n{}\n", summary(plans, problems));
    render_problems(&mut o, problems);
    let mut items: Vec<(i64, fit::Item)> = plans
        .iter()
        .map(|p| {
            let mut detail = String::new();
            render_campaign(&mut detail, p);
            let line = format!(
                "| `{}` | {} | {} → {} of {} |",
                p.campaign.replace('`', "'"),
                if p.has_changes() {
                    "changes"
                } else {
                    "no change"
                },
                p.money.committed,
                p.money.worst_after_round,
                p.money.cap
            );
            (money_moved(p), fit::Item { line, detail })
        })
        .collect();
    let budget = MAX_COMMENT_BYTES.saturating_sub(o.len());
    if !fit::fits_in_detail(items.iter().map(|(_, i)| i), budget) {
        // Too many to show in detail: the largest money movements first.
        items.sort_by_key(|(w, _)| std::cmp::Reverse(*w));
    }
    let items: Vec<fit::Item> = items.into_iter().map(|(_, i)| i).collect();
    o.push_str(&fit::render(
        &items,
        "| campaign | plan | commitment → worst case of cap (RUB/month) |\n|---|---|---|",
        budget,
    ));
    o
}

/// How much money a campaign's plan moves: its commitment to its worst case, and cap edits.
fn money_moved(p: &CampaignPlan) -> i64 {
    let m = &p.money;
    let cap = p.cap_changes.iter().fold(0i64, |acc, c| match c {
        CapChange::Monthly { recorded, file } => {
            acc.saturating_add((file.kopecks() - recorded.kopecks()).abs())
        }
        _ => acc,
    });
    (m.worst_after_round.kopecks() - m.committed.kopecks())
        .abs()
        .saturating_add(cap)
}

/// The files that fail validation: at most [`MAX_PROBLEM_LINES`] of them one by one, each cut
/// at [`MAX_PROBLEM_CHARS`], all within [`MAX_PROBLEM_BYTES`] (200 files that clash each name
/// the other 199: listed whole they would fill the comment many times over).
fn render_problems(o: &mut String, problems: &[String]) {
    if problems.is_empty() {
        return;
    }
    let start = o.len();
    o.push_str("### Files that fail validation (nothing of them is applied)\n\n");
    let mut shown = 0;
    for p in problems.iter().take(MAX_PROBLEM_LINES) {
        let mut text: String = p.chars().take(MAX_PROBLEM_CHARS).collect();
        if text.len() < p.len() {
            text.push('…');
        }
        let line = format!("- {}\n", md(&text));
        if o.len() - start + line.len() > MAX_PROBLEM_BYTES {
            break;
        }
        o.push_str(&line);
        shown += 1;
    }
    if problems.len() > shown {
        let _ = writeln!(
            o,
            "- … and {} more: `linkrunner validate` lists every one",
            problems.len() - shown
        );
    }
    o.push('\n');
}

/// `**linkrunner plan**: 2 of 3 campaign(s) change: …; commitment … → worst case … of … RUB`.
fn summary(plans: &[CampaignPlan], problems: &[String]) -> String {
    let changing = plans.iter().filter(|p| p.has_changes()).count();
    let count = |f: fn(&Action) -> bool| {
        plans
            .iter()
            .flat_map(|p| &p.actions)
            .filter(|a| f(a))
            .count()
    };
    let mut parts = vec![format!("{changing} of {} campaign(s) change", plans.len())];
    for (n, word) in [
        (
            count(|a| matches!(a, Action::AdoptProject { .. })),
            "adoption(s)",
        ),
        (count(is_creation), "creation(s)"),
        (
            count(|a| matches!(a, Action::BuyRound { .. })),
            "buy round(s)",
        ),
        (
            count(|a| matches!(a, Action::SetAutobuyer { running: true, .. })),
            "start(s)",
        ),
        (count(is_stop), "stop(s)"),
        (
            count(|a| matches!(a, Action::ReplaceAutobuyer { .. })),
            "replacement(s)",
        ),
        (
            count(|a| matches!(a, Action::Settle { .. })),
            "settlement(s)",
        ),
    ] {
        if n > 0 {
            parts.push(format!("{n} {word}"));
        }
    }
    let caps = plans.iter().filter(|p| !p.cap_changes.is_empty()).count();
    if caps > 0 {
        parts.push(format!("{caps} cap change(s)"));
    }
    let unapplied: usize = plans.iter().map(|p| p.unapplied.len()).sum();
    if unapplied > 0 {
        parts.push(format!("**{unapplied} not applied**"));
    }
    if !problems.is_empty() {
        parts.push(format!("**{} file problem(s)**", problems.len()));
    }
    let sum = |f: fn(&CampaignPlan) -> Money| {
        plans.iter().fold(Money::ZERO, |a, p| {
            a.checked_add(f(p)).unwrap_or(Money::MAX)
        })
    };
    format!(
        "**linkrunner plan**: {}; commitment {} → worst case {} of {} RUB/month",
        parts.join(", "),
        sum(|p| p.money.committed),
        sum(|p| p.money.worst_after_round),
        sum(|p| p.money.cap)
    )
}

/// Whether an action belongs to a group of the comment.
type ActionTest = fn(&Action) -> bool;

fn is_creation(a: &Action) -> bool {
    matches!(
        a,
        Action::CreateProject { .. }
            | Action::AddTexts { .. }
            | Action::CreateFilter { .. }
            | Action::CreateAutobuyer { .. }
    )
}

/// A step that changes something and that none of the named groups shows.
fn is_other(a: &Action) -> bool {
    a.is_change()
        && !is_creation(a)
        && !is_stop(a)
        && !matches!(
            a,
            Action::BuyRound { .. }
                | Action::SetAutobuyer { running: true, .. }
                | Action::Settle { .. }
        )
}

fn is_stop(a: &Action) -> bool {
    matches!(
        a,
        Action::SetAutobuyer { running: false, .. } | Action::SettleStop { .. }
    )
}

fn render_campaign(o: &mut String, p: &CampaignPlan) {
    let mark = if p.has_changes() {
        "changes"
    } else {
        "no change"
    };
    let _ = writeln!(o, "### `{}`: {mark}\n", p.campaign.replace('`', "'"));
    render_plan_body(o, p);
}

/// A campaign's plan under its heading: what stops spending, each group of steps, what is
/// not applied, and the money.
fn render_plan_body(o: &mut String, p: &CampaignPlan) {
    if let Some(r) = &p.renamed {
        let _ = writeln!(o, "**Rename**\n- {}\n", md(&r.describe()));
    }
    for m in &p.moved {
        let _ = writeln!(o, "- {}\n", md(&m.describe()));
    }
    if !p.respelt.is_empty() {
        o.push_str("**Respell**\n");
        for u in &p.respelt {
            let _ = writeln!(o, "- {}", md(&u.describe()));
        }
        o.push('\n');
    }
    if let Some(why) = &p.spending_stopped {
        let _ = writeln!(o, "> **Spending stopped:** {}\n", md(why));
    }
    if !p.cap_changes.is_empty() {
        o.push_str("**Record**\n");
        for c in &p.cap_changes {
            let _ = writeln!(o, "- {}", md(&c.describe()));
        }
        o.push('\n');
    }
    let groups: [(&str, ActionTest); 8] = [
        ("Adopt", |a| matches!(a, Action::AdoptProject { .. })),
        ("Create", is_creation),
        ("Replace", |a| matches!(a, Action::ReplaceAutobuyer { .. })),
        ("Buy", |a| matches!(a, Action::BuyRound { .. })),
        ("Start", |a| {
            matches!(a, Action::SetAutobuyer { running: true, .. })
        }),
        ("Stop", is_stop),
        ("Settle", |a| matches!(a, Action::Settle { .. })),
        // Whatever step no group above names (new kinds of steps) is still shown.
        ("Other", is_other),
    ];
    for (title, belongs) in groups {
        let items: Vec<_> = p.actions.iter().filter(|a| belongs(a)).collect();
        if items.is_empty() {
            continue;
        }
        let _ = writeln!(o, "**{title}**");
        for a in items {
            let _ = writeln!(o, "- {}", md(&a.describe()));
            diff_block(o, &a.diff());
        }
        o.push('\n');
    }
    if !p.notices.is_empty() {
        o.push_str("**Not applied, and why**\n");
        for n in &p.notices {
            let _ = writeln!(o, "- ⚠️ {}", md(n));
        }
        o.push('\n');
    }
    render_money(o, p);
}

/// A replacement's `- old` / `+ new` lines as a `diff` block under its item; backticks
/// (which could close the block) never reach it.
fn diff_block(o: &mut String, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    o.push_str("\n  ```diff\n");
    for l in lines {
        let safe: String = l
            .chars()
            .map(|c| {
                if c == '`' || c == '\n' || c == '\r' {
                    '\''
                } else {
                    c
                }
            })
            .collect();
        let _ = writeln!(o, "  {safe}");
    }
    o.push_str("  ```\n");
}

fn render_money(o: &mut String, p: &CampaignPlan) {
    let m = &p.money;
    let _ = writeln!(
        o,
        "| money (RUB/month) | now | after the next pass |\n|---|---:|---:|\n\
         | commitment (worst case) | {} | {} |\n| headroom under the cap of {} | {} | {} |\n\
         | uncertain | {} | |\n| released first / acquired | | −{} / +{} |\n",
        m.committed,
        m.worst_after_round,
        m.cap,
        m.headroom,
        m.headroom_after_round,
        m.uncertain,
        m.releases,
        m.acquisitions
    );
    let _ = writeln!(o, "Links: {}.\n", m.links.describe());
    if let Some(s) = &m.today_share {
        let _ = writeln!(
            o,
            "Today's share ({}, spread evenly over the month): {} RUB/month; buy rounds used {}, {} left.\n",
            s.day, s.share, s.used, s.left
        );
    }
}

/// Text made inert in Markdown: markup characters are backslash-escaped, `<`/`>` become
/// entities (no HTML), `@` cannot mention, and newlines cannot start a new block.
pub(crate) fn md(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '@' => out.push_str("&#64;"),
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;

//! `GET /`: the status page. Server-rendered HTML, read-only, with inline CSS only (no
//! scripts, no external assets: it works offline and its Content-Security-Policy forbids
//! everything else), refreshing itself every [`REFRESH_SECONDS`].
//!
//! Two views of one read model (`views::report::CampaignStatus`, `views::summary::Summary`:
//! what `/api/v1/campaigns`, `/api/v1/summary` and `linkrunner status` show):
//! - the list (`/`, `super::board`): the summary, then one page of the campaign table,
//!   filtered, sorted and paged by query parameters;
//! - one campaign (`/?campaign=NAME`, [`render_detail`]): everything `status` says about it,
//!   its autobuyers and what waits for an operator, with the command to run.
//!
//! This file holds the document, the detail view and the helpers both views use; the
//! handler that picks the view is `super::site`.
//!
//! Every text that comes from the journal, a campaign file or the marketplace goes through
//! [`esc`] — campaign names, round details, errors, halt reasons (tested with hostile
//! strings by `tests/it` `daemon::status_page`). It shows nothing secret: no URLs with
//! credentials, no tokens, no request bodies.

use std::fmt::Write as _;

use chrono::{DateTime, SecondsFormat, Utc};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::views::days::MonthDays;
use crate::views::report::CampaignStatus;
use linkrunner_domain::money::Money;

/// How often the page reloads itself.
pub(crate) const REFRESH_SECONDS: u32 = 15;

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fafafa}\
h1{font-size:1.3em}h2{font-size:1.1em;margin:0 0 .3em}\
section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.8em 1em;margin:0 0 1em}\
.bar{background:#e8e8e8;border-radius:4px;height:12px;width:320px;max-width:100%;overflow:hidden}\
.fill{background:#3a7;height:100%}.fill.high{background:#d90}.fill.full{background:#c33}\
.state{font-weight:bold}.state.ok{color:#271}.state.warn{color:#a60}.state.stop{color:#b11}\
.halt{background:#fdd;border:1px solid #c33;padding:.5em 1em;border-radius:6px}\
code{background:#f0f0f0;padding:.1em .3em;word-break:break-all}dt{font-weight:bold}dd{margin:0 0 .4em}\
ul.states{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.4em 1.2em}a{color:#146}\
table{border-collapse:collapse;background:#fff;width:100%}th,td{border-bottom:1px solid #e4e4e4;padding:.25em .5em;text-align:left}\
th{background:#f0f0f0;white-space:nowrap}td.n{text-align:right;font-variant-numeric:tabular-nums}\
.s-running{color:#271}.s-paused{color:#666}.s-settling,.s-failing,.s-stalled{color:#a60}\
.s-waiting_for_operator,.s-halted{color:#b11}.s-removed{color:#888}.state{font-weight:bold}\
form.filter{margin:0 0 .6em}nav.pager{margin:.6em 0}\
figure.month{margin:0}svg.chart{max-width:100%;height:auto;font-size:11px}svg .grid{stroke:#e4e4e4}\
svg .day{fill:#3a7}svg .day.over{fill:#c33}svg .cap{stroke:#c33;stroke-dasharray:6 3;stroke-width:1.5}\
svg .ylabel{text-anchor:end;fill:#555}svg .xlabel{text-anchor:middle;fill:#555}svg .caplabel{text-anchor:end;fill:#b11}\
svg.spark{vertical-align:middle;width:93px;height:18px}svg.spark polyline{fill:none;stroke:#3a7;stroke-width:1.5}\
figcaption{margin:.3em 0}table.days{width:auto}";

/// Escapes text for HTML element content and quoted attribute values; control characters
/// and BIDI overrides (which would reorder what the page shows) become visible escapes first
/// ([`linkrunner_domain::shown::line`]).
pub(crate) fn esc(text: &str) -> String {
    let text = linkrunner_domain::shown::line(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The document around a view's content.
pub(super) fn document(title: &str, now: DateTime<Utc>, content: &str) -> String {
    let mut o = String::with_capacity(content.len() + 2048);
    let _ = writeln!(
        o,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"refresh\" content=\"{REFRESH_SECONDS}\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>{content}\
         <p>As of {} (refreshes every {REFRESH_SECONDS} s). The same as JSON: <code>/api/v1/summary</code>, \
         <code>/api/v1/campaigns</code>.</p></body></html>",
        esc(title),
        stamp(now)
    );
    o
}

pub(super) fn page_not_found(name: &str, now: DateTime<Utc>) -> String {
    let content = format!(
        "<p><a href=\"/\">All campaigns</a></p><h1>No campaign {}</h1><p>The journal knows no such campaign.</p>",
        esc(name)
    );
    document("linkrunner: no such campaign", now, &content)
}

/// One campaign: everything `status` shows about it, and its month's picture (`days` holds
/// its days).
pub(crate) fn render_detail(c: &CampaignStatus, days: &MonthDays, now: DateTime<Utc>) -> String {
    let mut o = String::with_capacity(4096);
    let st = c.state.as_str();
    let _ = write!(
        o,
        "<p><a href=\"/\">All campaigns</a></p><section class=\"campaign\" data-state=\"{st}\"><h1>{}</h1>\
         <p class=\"state s-{st}\">{}</p>",
        esc(&c.campaign),
        c.state.words()
    );
    if let Some(why) = &c.state_reason {
        let _ = write!(o, "<p>{}</p>", esc(why));
    }
    render_facts(&mut o, c);
    if let Some(s) = days.campaign(&c.campaign, c.money.monthly_commitment, c.money.monthly_cap) {
        let _ = write!(
            o,
            "<h2>The month: commitment per day, {}</h2>{}",
            esc(&s.month),
            super::picture::month_chart(&s, "campaign-month", &esc(&c.campaign))
        );
    }
    render_autobuyers(&mut o, c);
    render_waiting(&mut o, c);
    let _ = write!(
        o,
        "<p>As JSON: <code>/api/v1/campaigns/{}</code>; its history: <code>linkrunner history {}</code></p></section>",
        esc(&c.campaign),
        esc(&c.campaign)
    );
    document(&format!("linkrunner: {}", c.campaign), now, &o)
}

fn render_facts(o: &mut String, c: &CampaignStatus) {
    let pct = percent_of(c.money.monthly_commitment, c.money.monthly_cap, 100);
    let paused = match c.paused {
        Some(true) => "yes",
        Some(false) => "no",
        None => "not known (files not read)",
    };
    let project = c
        .project_id
        .map_or("not created".to_string(), |p| p.to_string());
    let _ = write!(
        o,
        "<dl><dt>Monthly commitment</dt><dd>{}{} of {} RUB ({pct}%), uncertain {} RUB</dd>\
         <dt>Links held</dt><dd>{} bought by us, {} by autobuyers or others, {} released; today {}/{}, total {}/{}; \
         {} page(s) blocked from being bought again</dd><dt>Paused</dt><dd>{paused}</dd>\
         <dt>Project</dt><dd>{project}; {} URL(s), {} text(s), {} filter(s)</dd>",
        bar(pct),
        c.money.monthly_commitment,
        c.money.monthly_cap,
        c.money.uncertain_money,
        c.links_held,
        c.other_links,
        c.links_released,
        c.links.links_today,
        c.links.daily_links_cap,
        c.links.links_total,
        c.links.total_links_cap,
        c.blocked_pages,
        c.urls,
        c.texts,
        c.filters.len(),
    );
    render_account(o, c);
    let last = c.last_round.as_ref().map_or("none".to_string(), |r| {
        let detail = if r.detail.is_empty() { "" } else { ": " };
        let tries = if r.attempts > 1 {
            format!(" (try {})", r.attempts)
        } else {
            String::new()
        };
        format!("{} {}{tries}{detail}{}", stamp(r.slot), r.outcome, r.detail)
    });
    let success = c.last_successful_round.map_or("none".to_string(), stamp);
    let next = c.next_round.map_or("not scheduled".to_string(), stamp);
    let _ = write!(
        o,
        "<dt>Last round</dt><dd>{}</dd><dt>Last successful round</dt><dd>{}</dd><dt>Next round</dt><dd>{}</dd>\
         <dt>Buy rounds in a row without a purchase</dt><dd>{}</dd></dl>",
        esc(&last),
        esc(&success),
        esc(&next),
        c.rounds_without_purchase
    );
}

fn render_autobuyers(o: &mut String, c: &CampaignStatus) {
    let _ = write!(o, "<h2>Autobuyers: {}</h2>", c.autobuyers.len());
    if c.autobuyers.is_empty() {
        return;
    }
    o.push_str(
        "<table class=\"autobuyers\"><thead><tr><th>Name</th><th>Id</th><th>On the marketplace</th>\
         <th>Counts as running</th><th>Monthly budget, RUB</th><th>Counted, RUB</th></tr></thead><tbody>",
    );
    for a in &c.autobuyers {
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&a.name),
            a.id,
            esc(a.state.as_str()),
            if a.running {
                "yes"
            } else {
                "no: its stop is settled"
            },
            a.monthly_budget,
            a.counted
        );
    }
    o.push_str("</tbody></table>");
}

/// An account already in use (issue 24): rent of links held by others apart from ours, the
/// adoption, the link list's completeness, drift, and where buying is stopped and why.
fn render_account(o: &mut String, c: &CampaignStatus) {
    let a = &c.account;
    let _ = write!(
        o,
        "<dt>Monthly rent</dt><dd>{} RUB of our links, {} RUB of links held by others ({} RUB estimated)</dd>",
        a.own_rent, a.others_rent, a.others_estimated
    );
    if let (Some(p), Some(how)) = (a.adopted_project, &a.adoption) {
        let _ = write!(o, "<dt>Adopted project</dt><dd>{p}: {}</dd>", esc(how));
    }
    let _ = write!(o, "<dt>Link list</dt><dd>{}</dd>", esc(&a.list));
    if a.added_by_hand > 0 || a.lost > 0 {
        let _ = write!(
            o,
            "<dt>Drift</dt><dd>{} link(s) added outside linkrunner, {} left the list</dd>",
            a.added_by_hand, a.lost
        );
    }
    if !a.buying_stopped.is_empty() {
        let _ = write!(
            o,
            "<dt>Buying stopped</dt><dd>{} URL(s): {}</dd>",
            a.buying_stopped.len(),
            esc(&a.buying_stopped[0].why)
        );
    }
}

/// What waits for an operator, with the exact command to run.
fn render_waiting(o: &mut String, c: &CampaignStatus) {
    if let Some(why) = &c.spending_stopped {
        let _ = write!(o, "<p class=\"halt\">Spending stopped: {}</p>", esc(why));
    }
    if let Some(st) = &c.stalled {
        let _ = write!(
            o,
            "<p class=\"halt\">Stalled ({}) since {}: {}</p>",
            esc(st.reason.as_str()),
            stamp(st.since),
            esc(&st.detail)
        );
    }
    if c.uncertain.is_empty() {
        return;
    }
    o.push_str("<h3>Waits for an operator</h3><ul>");
    for u in &c.uncertain {
        let _ = write!(
            o,
            "<li>{} intent #{} since {}: <code>{}</code>",
            esc(u.kind.as_str()),
            u.intent_id,
            stamp(u.since),
            esc(&u.what_to_do)
        );
        if let Some(e) = &u.error {
            let _ = write!(o, "<br>why: {}", esc(e));
        }
        o.push_str("</li>");
    }
    o.push_str("</ul>");
}

/// `used` in `per`ths of `cap` (0 for no cap), rounded down: 100 for a percentage.
pub(super) fn percent_of(used: Money, cap: Money, per: i64) -> i64 {
    if cap.kopecks() <= 0 {
        return 0;
    }
    let share = i128::from(used.kopecks().max(0)) * i128::from(per) / i128::from(cap.kopecks());
    i64::try_from(share).unwrap_or(i64::MAX)
}

/// A commitment bar filled to `pct` percent.
pub(super) fn bar(pct: i64) -> String {
    let fill = match pct {
        100.. => "fill full",
        80..=99 => "fill high",
        _ => "fill",
    };
    format!(
        "<div class=\"bar\" title=\"{pct}%\"><div class=\"{fill}\" style=\"width:{}%\"></div></div>",
        pct.min(100)
    )
}

/// What a query value keeps as is: letters, digits and RFC 3986's unreserved marks, so a
/// campaign's name (`[a-z0-9-]`) reads plainly in a link.
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// A link to the page with these query parameters, percent-encoded (escape it with [`esc`]
/// for an attribute).
pub(super) fn href(pairs: &[(&str, String)]) -> String {
    let query: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", utf8_percent_encode(v, QUERY_VALUE)))
        .collect();
    match query.is_empty() {
        true => "/".to_string(),
        false => format!("/?{}", query.join("&")),
    }
}

pub(super) fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_every_character_that_ends_text_or_an_attribute() {
        assert_eq!(
            esc(r#"<img src=x onerror="a('b')">&"#),
            "&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;"
        );
        assert_eq!(esc("a\u{202e}b\u{1b}[1m\0"), "a\\u{202e}b\\x1b[1m\\0");
    }

    #[test]
    fn the_commitment_bar_is_a_whole_percentage_of_the_cap() {
        assert_eq!(
            percent_of(Money::from_rubles(450), Money::from_rubles(3000), 100),
            15
        );
        assert_eq!(percent_of(Money::from_rubles(10), Money::ZERO, 100), 0);
        assert_eq!(
            percent_of(Money::from_rubles(4000), Money::from_rubles(3000), 100),
            133
        );
    }
}

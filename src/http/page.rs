//! `GET /`: the status page. One small server-rendered HTML page, read-only, with inline CSS
//! only (no scripts, no external assets: it works offline and its Content-Security-Policy
//! forbids everything else), refreshing itself every [`REFRESH_SECONDS`].
//!
//! Every text that comes from the journal, a campaign file or the marketplace goes through
//! [`esc`] — campaign names, round details, errors, halt reasons (tested with hostile
//! strings by `tests/it` `daemon::status_page`). It shows what `linkrunner status` shows and
//! nothing secret: no URLs with credentials, no tokens, no request bodies.

use std::fmt::Write as _;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, SecondsFormat, Utc};

use super::{AppState, unavailable};
use crate::money::Money;
use crate::store::Halt;
use crate::views::report::{CampaignStatus, campaign_status};

/// How often the page reloads itself.
pub const REFRESH_SECONDS: u32 = 15;

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fafafa}\
h1{font-size:1.3em}h2{font-size:1.1em;margin:0 0 .3em}\
section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.8em 1em;margin:0 0 1em}\
.bar{background:#e8e8e8;border-radius:4px;height:12px;width:320px;max-width:100%;overflow:hidden}\
.fill{background:#3a7;height:100%}.fill.high{background:#d90}.fill.full{background:#c33}\
.state{font-weight:bold}.state.ok{color:#271}.state.warn{color:#a60}.state.stop{color:#b11}\
.halt{background:#fdd;border:1px solid #c33;padding:.5em 1em;border-radius:6px}\
code{background:#f0f0f0;padding:.1em .3em;word-break:break-all}dt{font-weight:bold}dd{margin:0 0 .4em}";

/// Escapes text for HTML element content and quoted attribute values; control characters
/// and BIDI overrides (which would reorder what the page shows) become visible escapes first
/// ([`crate::domain::shown::line`]).
pub fn esc(text: &str) -> String {
    let text = crate::domain::shown::line(text);
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

pub(super) async fn status_page(State(s): State<AppState>) -> Response {
    let now = s.clock.now();
    let (names, halts) = match (
        s.store.campaigns().campaign_names().await,
        s.store.halts().await,
    ) {
        (Ok(n), Ok(h)) => (n, h),
        (Err(e), _) | (_, Err(e)) => return unavailable(&s, e),
    };
    let mut all = Vec::with_capacity(names.len());
    for n in names {
        match campaign_status(&s.store, &n, now).await {
            Ok(st) => all.push(st),
            Err(e) => return unavailable(&s, e),
        }
    }
    let next = |name: &str| s.health.next_round(name);
    let body = render_page(&all, &halts, &next, now);
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'",
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

/// The whole page; `next` says when a campaign's next round is due.
pub fn render_page(
    all: &[CampaignStatus],
    halts: &[Halt],
    next: &dyn Fn(&str) -> Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> String {
    let mut o = String::with_capacity(4096);
    let _ = write!(
        o,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"refresh\" content=\"{REFRESH_SECONDS}\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>linkrunner status</title><style>{STYLE}</style></head><body>\
         <h1>linkrunner: {} campaign(s)</h1><p>As of {} (refreshes every {REFRESH_SECONDS} s)</p>",
        all.len(),
        stamp(now)
    );
    for h in halts.iter().filter(|h| h.is_global()) {
        let _ = write!(
            o,
            "<p class=\"halt\">All spending stopped since {}: {}</p>",
            stamp(h.since),
            esc(&h.reason)
        );
    }
    if all.is_empty() {
        o.push_str("<p>No campaign is recorded yet.</p>");
    }
    for c in all {
        render_campaign(&mut o, c, next(&c.campaign));
    }
    o.push_str("</body></html>\n");
    o
}

fn render_campaign(o: &mut String, c: &CampaignStatus, next: Option<DateTime<Utc>>) {
    let (class, state) = state_of(c);
    let _ = write!(
        o,
        "<section class=\"campaign\"><h2>{}</h2><p class=\"state {class}\">{}</p><dl>",
        esc(&c.campaign),
        esc(&state)
    );
    let pct = percent(c.monthly_commitment, c.monthly_cap);
    let fill = match pct {
        100.. => "fill full",
        80..=99 => "fill high",
        _ => "fill",
    };
    let _ = write!(
        o,
        "<dt>Monthly commitment</dt><dd><div class=\"bar\" title=\"{pct}%\">\
         <div class=\"{fill}\" style=\"width:{}%\"></div></div>{} of {} RUB ({pct}%), uncertain {} RUB</dd>",
        pct.min(100),
        c.monthly_commitment,
        c.monthly_cap,
        c.uncertain_money
    );
    let _ = write!(
        o,
        "<dt>Links held</dt><dd>{} bought by us, {} by autobuyers or others; today {}/{}, total {}/{}</dd>",
        c.links_held,
        c.other_links,
        c.links_today,
        c.daily_links_cap,
        c.links_total,
        c.total_links_cap
    );
    render_account(o, c);
    let last = c.last_round.as_ref().map_or("none".to_string(), |r| {
        let detail = if r.detail.is_empty() { "" } else { ": " };
        format!("{} {}{detail}{}", stamp(r.slot), r.outcome, r.detail)
    });
    let next = next.map_or("not scheduled".to_string(), stamp);
    let _ = write!(
        o,
        "<dt>Last round</dt><dd>{}</dd><dt>Next round</dt><dd>{}</dd></dl>",
        esc(&last),
        esc(&next)
    );
    render_waiting(o, c);
    o.push_str("</section>");
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
            esc(&st.reason),
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
            esc(&u.kind),
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

/// A word for the campaign's state and its CSS class.
fn state_of(c: &CampaignStatus) -> (&'static str, String) {
    if c.spending_stopped.is_some() {
        return ("stop", "spending stopped".to_string());
    }
    if !c.uncertain.is_empty() {
        let n = c.uncertain.len();
        return ("warn", format!("{n} intent(s) wait to be settled"));
    }
    if let Some(st) = &c.stalled {
        return ("stop", format!("stalled: {}", st.reason));
    }
    match &c.last_round {
        Some(r) if r.outcome == "failed" => ("warn", "last round failed".to_string()),
        Some(r) if r.outcome == "deferred" => (
            "warn",
            format!(
                "round deferred (try {}), tried again within its slot",
                r.attempts
            ),
        ),
        _ => ("ok", "running".to_string()),
    }
}

/// `used` as a whole percentage of `cap` (0 for no cap), rounded down.
fn percent(used: Money, cap: Money) -> i64 {
    if cap.kopecks() <= 0 {
        return 0;
    }
    (i128::from(used.kopecks().max(0)) * 100 / i128::from(cap.kopecks())) as i64
}

fn stamp(t: DateTime<Utc>) -> String {
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
            percent(Money::from_rubles(450), Money::from_rubles(3000)),
            15
        );
        assert_eq!(percent(Money::from_rubles(10), Money::ZERO), 0);
        assert_eq!(
            percent(Money::from_rubles(4000), Money::from_rubles(3000)),
            133
        );
    }
}

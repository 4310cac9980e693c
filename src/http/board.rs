//! The status page's list view: the summary at the top, then one page of the campaign table,
//! filtered, sorted and paged on the server by query parameters, so it works without
//! scripts and one page stays small however many campaigns there are (at most
//! [`MAX_PER_PAGE`] rows; the bench measures it at 10,000 campaigns).
//!
//! | parameter | values | default |
//! |---|---|---|
//! | `state` | a state word (`running`, `paused`, `waiting_for_operator`, ...) | every state |
//! | `q` | part of a campaign's name (at most 63 characters) | every name |
//! | `account` | the id of the marketplace account the campaigns spend in | every account |
//! | `sort` | a column key ([`Column`]) | `state` |
//! | `dir` | `asc`, `desc` | `asc` |
//! | `page` | 1, 2, ... (past the last: the last) | 1 |
//! | `per_page` | 1 to [`MAX_PER_PAGE`] | [`PER_PAGE`] |
//!
//! Everything shown comes from [`CampaignRow`] (the list's read model: what each campaign's
//! status in `/api/v1/campaigns` gives, read from counts), [`Summary`] (what
//! `/api/v1/summary` serves) and [`MonthDays`] (the month's commitment per day: the picture
//! of every campaign under the summary, a sparkline in each row shown); text is escaped by
//! [`esc`]. The API takes the same parameters.

use std::cmp::Ordering;
use std::fmt::Write as _;

use serde::Deserialize;

use chrono::{DateTime, Utc};

use super::page::{bar, document, esc, href, stamp};
use super::picture::{month_chart, sparkline};
use crate::views::days::MonthDays;
use crate::views::list::CampaignRow;
use crate::views::overview::CampaignState;
use crate::views::summary::Summary;

/// Rows on one page unless `per_page` says otherwise.
pub(crate) const PER_PAGE: usize = 50;
/// The most rows one page shows.
pub(crate) const MAX_PER_PAGE: usize = 200;
/// The longest `q` (a campaign name is at most 63 characters).
const MAX_QUERY: usize = 63;
/// The longest reason the summary shows of a waiting campaign (its page shows all of it).
const REASON_CHARS: usize = 160;

/// The page's query string as sent; [`View::parse`] checks it.
#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct PageQuery {
    pub(crate) campaign: Option<String>,
    state: Option<String>,
    q: Option<String>,
    account: Option<String>,
    pub(crate) sort: Option<String>,
    dir: Option<String>,
    pub(crate) page: Option<String>,
    pub(crate) per_page: Option<String>,
    /// The API's answer: `json` (one page, the default) or `ndjson` (every campaign that
    /// matches, one object a line); the page ignores it.
    pub(crate) format: Option<String>,
}

#[cfg(test)]
impl PageQuery {
    /// The query string of `pairs` (`("state", "halted")`, …), as the tests write one.
    pub(super) fn of(pairs: &[(&str, &str)]) -> PageQuery {
        let mut p = PageQuery::default();
        for (k, v) in pairs {
            let v = Some(v.to_string());
            match *k {
                "campaign" => p.campaign = v,
                "state" => p.state = v,
                "q" => p.q = v,
                "account" => p.account = v,
                "sort" => p.sort = v,
                "dir" => p.dir = v,
                "page" => p.page = v,
                "per_page" => p.per_page = v,
                "format" => p.format = v,
                other => panic!("no parameter {other} in the page's query string"),
            }
        }
        p
    }
}

/// How many rows a list pages by unless `per_page` says otherwise, and the most it may ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Paging {
    pub(crate) default: usize,
    pub(crate) max: usize,
}

impl Paging {
    /// The status page's table: small pages of HTML.
    pub(crate) const PAGE: Paging = Paging {
        default: PER_PAGE,
        max: MAX_PER_PAGE,
    };
}

/// A sortable column of the table: its key in `?sort=`, its heading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Column {
    Name,
    State,
    Commitment,
    Cap,
    Used,
    Held,
    Today,
    Total,
    Autobuyers,
    Uncertain,
    LastRound,
    NextRound,
}

impl Column {
    pub(crate) const ALL: [Column; 12] = [
        Column::Name,
        Column::State,
        Column::Commitment,
        Column::Cap,
        Column::Used,
        Column::Held,
        Column::Today,
        Column::Total,
        Column::Autobuyers,
        Column::Uncertain,
        Column::LastRound,
        Column::NextRound,
    ];

    pub(crate) fn key(self) -> &'static str {
        match self {
            Column::Name => "name",
            Column::State => "state",
            Column::Commitment => "commitment",
            Column::Cap => "cap",
            Column::Used => "used",
            Column::Held => "held",
            Column::Today => "today",
            Column::Total => "total",
            Column::Autobuyers => "autobuyers",
            Column::Uncertain => "uncertain",
            Column::LastRound => "last_round",
            Column::NextRound => "next_round",
        }
    }

    fn heading(self) -> &'static str {
        match self {
            Column::Name => "Campaign",
            Column::State => "State",
            Column::Commitment => "Commitment, RUB",
            Column::Cap => "Cap, RUB",
            Column::Used => "Used",
            Column::Held => "Links held",
            Column::Today => "Today",
            Column::Total => "Total",
            Column::Autobuyers => "Autobuyers",
            Column::Uncertain => "Uncertain",
            Column::LastRound => "Last round",
            Column::NextRound => "Next round",
        }
    }

    fn order(self, a: &CampaignRow, b: &CampaignRow) -> Ordering {
        match self {
            Column::Name => a.campaign.cmp(&b.campaign),
            Column::State => a.state.cmp(&b.state),
            Column::Commitment => a.money.monthly_commitment.cmp(&b.money.monthly_commitment),
            Column::Cap => a.money.monthly_cap.cmp(&b.money.monthly_cap),
            Column::Used => used_per_mille(a).cmp(&used_per_mille(b)),
            Column::Held => held(a).cmp(&held(b)),
            Column::Today => a.links.links_today.cmp(&b.links.links_today),
            Column::Total => a.links.links_total.cmp(&b.links.links_total),
            Column::Autobuyers => a.autobuyers_running.cmp(&b.autobuyers_running),
            Column::Uncertain => a.uncertain.cmp(&b.uncertain),
            Column::LastRound => last_slot(a).cmp(&last_slot(b)),
            Column::NextRound => a.next_round.cmp(&b.next_round),
        }
    }
}

/// What one request of the list asks for, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct View {
    pub(crate) state: Option<CampaignState>,
    pub(crate) q: String,
    /// Only the campaigns of this marketplace account (issue 34).
    pub(crate) account: Option<String>,
    pub(crate) sort: Column,
    pub(crate) desc: bool,
    pub(crate) page: usize,
    pub(crate) per_page: usize,
}

impl Default for View {
    fn default() -> View {
        View {
            state: None,
            q: String::new(),
            account: None,
            sort: Column::State,
            desc: false,
            page: 1,
            per_page: PER_PAGE,
        }
    }
}

impl View {
    /// The view of the status page's table `p` asks for; an error names the parameter and
    /// what it may be.
    pub(crate) fn parse(p: &PageQuery) -> Result<View, String> {
        View::parse_within(p, Paging::PAGE)
    }

    /// The view `p` asks for of a list paged by `paging`.
    pub(crate) fn parse_within(p: &PageQuery, paging: Paging) -> Result<View, String> {
        let mut v = View {
            per_page: paging.default,
            ..View::default()
        };
        if let Some(s) = p.state.as_deref().filter(|s| !s.is_empty()) {
            v.state = Some(CampaignState::parse(s).ok_or_else(|| {
                let all: Vec<&str> = CampaignState::ALL.iter().map(|s| s.as_str()).collect();
                format!("state: `{s}` is not one of {}", all.join(", "))
            })?);
        }
        if let Some(q) = &p.q {
            if q.chars().count() > MAX_QUERY {
                return Err(format!("q: at most {MAX_QUERY} characters"));
            }
            v.q = q.trim().to_lowercase();
        }
        if let Some(a) = p.account.as_deref().filter(|a| !a.is_empty()) {
            if !linkrunner_domain::account::valid_id(a) {
                return Err(format!(
                    "account: `{}` is not an account id (1 to 63 lowercase letters, digits or `-`, \
                     as a campaign file's `account:`)",
                    a.chars().take(MAX_QUERY + 1).collect::<String>()
                ));
            }
            v.account = Some(a.to_string());
        }
        if let Some(s) = p.sort.as_deref().filter(|s| !s.is_empty()) {
            v.sort = Column::ALL
                .into_iter()
                .find(|c| c.key() == s)
                .ok_or_else(|| {
                    let all: Vec<&str> = Column::ALL.iter().map(|c| c.key()).collect();
                    format!("sort: `{s}` is not one of {}", all.join(", "))
                })?;
        }
        v.desc = match p.dir.as_deref() {
            None | Some("") | Some("asc") => false,
            Some("desc") => true,
            Some(d) => return Err(format!("dir: `{d}` is not asc or desc")),
        };
        v.page = number(p.page.as_deref(), "page", 1, usize::MAX)?.unwrap_or(1);
        v.per_page =
            number(p.per_page.as_deref(), "per_page", 1, paging.max)?.unwrap_or(paging.default);
        Ok(v)
    }

    /// The query string of this view with `change` applied (`?` included).
    fn link(&self, change: impl FnOnce(&mut View)) -> String {
        let mut v = self.clone();
        change(&mut v);
        let mut pairs: Vec<(&str, String)> = Vec::new();
        if let Some(s) = v.state {
            pairs.push(("state", s.as_str().to_string()));
        }
        if !v.q.is_empty() {
            pairs.push(("q", v.q.clone()));
        }
        if let Some(a) = &v.account {
            pairs.push(("account", a.clone()));
        }
        if v.sort != Column::State || v.desc {
            pairs.push(("sort", v.sort.key().to_string()));
            pairs.push(("dir", if v.desc { "desc" } else { "asc" }.to_string()));
        }
        if v.per_page != PER_PAGE {
            pairs.push(("per_page", v.per_page.to_string()));
        }
        if v.page != 1 {
            pairs.push(("page", v.page.to_string()));
        }
        href(&pairs)
    }

    /// Of `matching` rows in order: the page shown (past the last: the last), how many pages
    /// there are, and the rows of that page.
    pub(crate) fn window(&self, matching: usize) -> (usize, usize, std::ops::Range<usize>) {
        let pages = matching.div_ceil(self.per_page).max(1);
        let page = self.page.min(pages);
        let first = ((page - 1) * self.per_page).min(matching);
        (page, pages, first..(first + self.per_page).min(matching))
    }

    /// The rows of the page this view shows, in its order.
    pub(crate) fn page_rows<'a>(&self, all: &'a [CampaignRow]) -> Vec<&'a CampaignRow> {
        let mut rows = self.select(all);
        let (_, _, range) = self.window(rows.len());
        rows.truncate(range.end);
        rows.drain(..range.start);
        rows
    }

    /// The campaigns this view shows, in its order (every page, not one).
    pub(crate) fn select<'a>(&self, all: &'a [CampaignRow]) -> Vec<&'a CampaignRow> {
        let mut rows: Vec<&CampaignRow> = all
            .iter()
            .filter(|c| self.state.is_none_or(|s| c.state == s))
            .filter(|c| self.q.is_empty() || c.campaign.to_lowercase().contains(&self.q))
            .filter(|c| self.account.as_ref().is_none_or(|a| &c.account == a))
            .collect();
        rows.sort_by(|a, b| {
            let by = if self.desc {
                self.sort.order(b, a)
            } else {
                self.sort.order(a, b)
            };
            by.then_with(|| a.campaign.cmp(&b.campaign))
        });
        rows
    }
}

fn number(text: Option<&str>, name: &str, min: usize, max: usize) -> Result<Option<usize>, String> {
    let Some(t) = text.filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    match t.parse::<usize>() {
        Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
        _ if max == usize::MAX => Err(format!("{name}: `{t}` is not a whole number from {min}")),
        _ => Err(format!(
            "{name}: `{t}` is not a whole number from {min} to {max}"
        )),
    }
}

fn held(c: &CampaignRow) -> usize {
    c.links_held + c.other_links
}

fn last_slot(c: &CampaignRow) -> Option<DateTime<Utc>> {
    c.last_round.as_ref().map(|r| r.0)
}

/// The commitment in thousandths of the cap (0 without a cap): a whole number to sort by.
fn used_per_mille(c: &CampaignRow) -> i64 {
    super::page::percent_of(c.money.monthly_commitment, c.money.monthly_cap, 1000)
}

/// The list view: the summary, the month's picture, then one page of the table as `v` asks;
/// `days` holds the month of every campaign and of those on the page.
pub(crate) fn render_page(
    all: &[CampaignRow],
    sum: &Summary,
    v: &View,
    days: &MonthDays,
    now: DateTime<Utc>,
) -> String {
    let mut o = String::with_capacity(64 * 1024);
    let _ = write!(o, "<h1>linkrunner: {} campaign(s)</h1>", all.len());
    if let Some(why) = &sum.all_spending_stopped {
        let _ = write!(o, "<p class=\"halt\">{}</p>", esc(why));
    }
    if let Some(why) = &sum.removals_held {
        let _ = write!(o, "<p class=\"halt\">{}</p>", esc(why));
    }
    if all.is_empty() {
        o.push_str("<p>No campaign is recorded yet.</p>");
    }
    render_board(&mut o, all, sum, v, days);
    document("linkrunner status", now, &o)
}

/// The summary, the month's picture and one page of the table.
pub(crate) fn render_board(
    o: &mut String,
    all: &[CampaignRow],
    sum: &Summary,
    v: &View,
    days: &MonthDays,
) {
    render_summary(o, sum);
    render_month(o, sum, days);
    let rows = v.select(all);
    let (page, pages, range) = v.window(rows.len());
    let first = range.start;
    let shown = &rows[range];
    render_filter(o, sum, v);
    let several = sum.accounts.len() > 1;
    let _ = write!(
        o,
        "<p id=\"shown\" data-matching=\"{}\" data-total=\"{}\" data-page=\"{page}\" data-pages=\"{pages}\">",
        rows.len(),
        all.len()
    );
    match shown.len() {
        0 => o.push_str("No campaign matches."),
        n => {
            let _ = write!(
                o,
                "Campaigns {}–{} of {} matching ({} in all).",
                first + 1,
                first + n,
                rows.len(),
                all.len()
            );
        }
    }
    o.push_str("</p>");
    render_table(o, shown, v, days, several);
    render_pager(o, v, page, pages);
}

/// Every campaign's commitment per day of the month against the cap that binds them: the
/// account-wide cap when one is set below the sum of their caps, else that sum.
fn render_month(o: &mut String, sum: &Summary, days: &MonthDays) {
    let (cap, whose) = match days.account_cap() {
        Some(account) if account < sum.money.monthly_cap => (account, "the account cap"),
        _ => (sum.money.monthly_cap, "the sum of their caps"),
    };
    let s = days.account(sum.money.monthly_commitment, cap);
    let _ = write!(
        o,
        "<section class=\"month\" id=\"month\"><h2>The month: commitment per day, {}</h2>{}</section>",
        esc(&s.month),
        month_chart(
            &s,
            "month-picture",
            &format!("every campaign (the cap: {whose})")
        )
    );
}

fn render_summary(o: &mut String, s: &Summary) {
    o.push_str("<section class=\"summary\" id=\"summary\"><h2>Summary</h2><ul class=\"states\">");
    for (state, n) in in_order(s) {
        let _ = write!(
            o,
            "<li><a href=\"{}\" data-state=\"{state}\"><span class=\"state s-{state}\">{}</span> <b class=\"count\" id=\"count-{state}\">{n}</b></a></li>",
            esc(&href(&[("state", state.to_string())])),
            state.replace('_', " "),
        );
    }
    o.push_str("</ul><dl class=\"totals\">");
    let pct = super::page::percent_of(s.money.monthly_commitment, s.money.monthly_cap, 100);
    let _ = write!(
        o,
        "<dt>Campaigns</dt><dd id=\"sum-campaigns\" data-value=\"{}\">{}</dd>\
         <dt>Monthly commitment of all caps</dt><dd>{}<span id=\"sum-commitment\" data-value=\"{c}\">{c}</span> of \
         <span id=\"sum-cap\" data-value=\"{cap}\">{cap}</span> RUB ({pct}%), uncertain \
         <span id=\"sum-uncertain\" data-value=\"{u}\">{u}</span> RUB</dd>\
         <dt>Links bought in {m}</dt><dd id=\"sum-links-month\" data-value=\"{l}\">{l}</dd>\
         <dt>Intents waiting to be settled</dt><dd id=\"sum-uncertain-intents\" data-value=\"{ui}\">{ui}</dd>",
        s.campaigns,
        s.campaigns,
        bar(pct),
        c = s.money.monthly_commitment,
        cap = s.money.monthly_cap,
        u = s.money.uncertain_money,
        m = esc(&s.month),
        l = s.links_bought_this_month,
        ui = s.uncertain_intents,
    );
    o.push_str("</dl>");
    render_accounts(o, s);
    render_waiting(o, s);
    o.push_str("</section>");
}

/// Each account's subtotals, when the campaigns spend in more than one (issue 34: an agency
/// bills per client); each account links to its campaigns (`?account=ID`).
fn render_accounts(o: &mut String, s: &Summary) {
    if s.accounts.len() < 2 {
        return;
    }
    o.push_str(
        "<h3>By account</h3><table class=\"accounts\" id=\"accounts\"><thead><tr><th>Account</th>\
         <th>Campaigns</th><th>Commitment, RUB</th><th>Cap, RUB</th><th>Used</th>\
         <th>Uncertain, RUB</th><th>Waiting for an operator</th></tr></thead><tbody>",
    );
    for a in &s.accounts {
        let pct = super::page::percent_of(a.money.monthly_commitment, a.money.monthly_cap, 100);
        let _ = write!(
            o,
            "<tr data-account=\"{id}\"><td><a href=\"{}\">{id}</a></td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{pct}%</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&href(&[("account", a.account.clone())])),
            a.campaigns,
            a.money.monthly_commitment,
            a.money.monthly_cap,
            a.money.uncertain_money,
            a.waiting_for_operator,
            id = esc(&a.account),
        );
    }
    o.push_str("</tbody></table>");
}

/// Each state's count in the order of [`CampaignState::ALL`] (what to act on first).
fn in_order(s: &Summary) -> impl Iterator<Item = (&'static str, usize)> + '_ {
    CampaignState::ALL.iter().map(|st| {
        let state = st.as_str();
        (state, s.by_state.get(state).copied().unwrap_or(0))
    })
}

/// The campaigns an operator must act on: the first few by name, a link to all of them.
fn render_waiting(o: &mut String, s: &Summary) {
    let _ = write!(
        o,
        "<h3>Waiting for an operator: <span id=\"sum-waiting\" data-value=\"{n}\">{n}</span></h3>",
        n = s.waiting_for_operator
    );
    if s.waiting.is_empty() {
        o.push_str("<p>Nothing waits for an operator.</p>");
        return;
    }
    o.push_str("<ul class=\"waiting\">");
    for w in &s.waiting {
        let reason: String = w.reason.chars().take(REASON_CHARS).collect();
        let more = if w.reason.chars().count() > REASON_CHARS {
            "…"
        } else {
            ""
        };
        let _ = write!(
            o,
            "<li><a href=\"{}\">{}</a> <span class=\"state s-{st}\">{}</span>: {}{more}</li>",
            esc(&href(&[("campaign", w.campaign.clone())])),
            esc(&w.campaign),
            w.state.words(),
            esc(&reason),
            st = w.state.as_str(),
        );
    }
    o.push_str("</ul>");
    if s.waiting_for_operator > s.waiting.len() {
        let _ = write!(
            o,
            "<p>and {} more: <a href=\"{}\">waiting for operator</a>, <a href=\"{}\">halted</a></p>",
            s.waiting_for_operator - s.waiting.len(),
            esc(&href(&[("state", "waiting_for_operator".into())])),
            esc(&href(&[("state", "halted".into())])),
        );
    }
}

/// The filter form: a plain GET form, so it works without scripts.
fn render_filter(o: &mut String, s: &Summary, v: &View) {
    o.push_str(
        "<form class=\"filter\" method=\"get\" action=\"/\"><label>State <select name=\"state\">\
         <option value=\"\">every state</option>",
    );
    for (state, n) in in_order(s) {
        let selected = if v.state.is_some_and(|x| x.as_str() == state) {
            " selected"
        } else {
            ""
        };
        let _ = write!(
            o,
            "<option value=\"{state}\"{selected}>{} ({n})</option>",
            state.replace('_', " ")
        );
    }
    o.push_str("</select></label>");
    render_account_filter(o, s, v);
    let _ = write!(
        o,
        " <label>Name <input type=\"search\" name=\"q\" maxlength=\"{MAX_QUERY}\" value=\"{}\"></label>",
        esc(&v.q)
    );
    if v.sort != Column::State || v.desc {
        let _ = write!(
            o,
            "<input type=\"hidden\" name=\"sort\" value=\"{}\"><input type=\"hidden\" name=\"dir\" value=\"{}\">",
            v.sort.key(),
            if v.desc { "desc" } else { "asc" }
        );
    }
    if v.per_page != PER_PAGE {
        let _ = write!(
            o,
            "<input type=\"hidden\" name=\"per_page\" value=\"{}\">",
            v.per_page
        );
    }
    o.push_str(" <button type=\"submit\">Show</button></form>");
}

/// The filter's account choice when the campaigns spend in several accounts; otherwise an
/// account asked for stays asked for (a hidden field) and nothing is shown.
fn render_account_filter(o: &mut String, s: &Summary, v: &View) {
    if s.accounts.len() < 2 {
        if let Some(a) = &v.account {
            let _ = write!(
                o,
                "<input type=\"hidden\" name=\"account\" value=\"{}\">",
                esc(a)
            );
        }
        return;
    }
    o.push_str(
        " <label>Account <select name=\"account\"><option value=\"\">every account</option>",
    );
    for a in &s.accounts {
        let selected = if v.account.as_ref() == Some(&a.account) {
            " selected"
        } else {
            ""
        };
        let _ = write!(
            o,
            "<option value=\"{id}\"{selected}>{id} ({})</option>",
            a.campaigns,
            id = esc(&a.account)
        );
    }
    o.push_str("</select></label>");
}

/// The table; `several`: the campaigns spend in several accounts, so each row names its own.
fn render_table(o: &mut String, rows: &[&CampaignRow], v: &View, days: &MonthDays, several: bool) {
    o.push_str("<table class=\"campaigns\" id=\"campaigns\"><thead><tr>");
    for c in Column::ALL {
        let (mark, desc) = match (c == v.sort, v.desc) {
            (true, false) => (" ▲", true),
            (true, true) => (" ▼", false),
            (false, _) => ("", false),
        };
        let link = v.link(|x| {
            x.sort = c;
            x.desc = desc;
            x.page = 1;
        });
        let _ = write!(
            o,
            "<th><a href=\"{}\">{}</a>{mark}</th>",
            esc(&link),
            c.heading()
        );
        if c == Column::Name && several {
            o.push_str("<th>Account</th>");
        }
    }
    o.push_str("<th>This month</th></tr></thead><tbody>");
    for c in rows {
        render_row(o, c, days, several);
    }
    o.push_str("</tbody></table>");
}

fn render_row(o: &mut String, c: &CampaignRow, days: &MonthDays, several: bool) {
    let st = c.state.as_str();
    let last = c
        .last_round
        .as_ref()
        .map_or("none".to_string(), |(slot, outcome)| {
            format!("{} {outcome}", stamp(*slot))
        });
    let next = c.next_round.map_or("—".to_string(), stamp);
    let account = match several {
        true => format!("<td>{}</td>", esc(&c.account)),
        false => String::new(),
    };
    let _ = write!(
        o,
        "<tr data-state=\"{st}\"><td><a href=\"{}\">{}</a></td>{account}<td><span class=\"state s-{st}\">{}</span></td>\
         <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}%</td><td class=\"n\">{}</td>\
         <td class=\"n\">{}/{}</td><td class=\"n\">{}/{}</td><td class=\"n\">{}/{}</td><td class=\"n\">{}</td>\
         <td>{}</td><td>{}</td><td>{}</td></tr>",
        esc(&href(&[("campaign", c.campaign.clone())])),
        esc(&c.campaign),
        c.state.words(),
        c.money.monthly_commitment,
        c.money.monthly_cap,
        used_per_mille(c) / 10,
        held(c),
        c.links.links_today,
        c.links.daily_links_cap,
        c.links.links_total,
        c.links.total_links_cap,
        c.autobuyers_running,
        c.autobuyers,
        c.uncertain,
        esc(&last),
        esc(&next),
        days.campaign(&c.campaign, c.money.monthly_commitment, c.money.monthly_cap)
            .map_or(String::new(), |s| sparkline(&s)),
    );
}

fn render_pager(o: &mut String, v: &View, page: usize, pages: usize) {
    if pages <= 1 {
        return;
    }
    o.push_str("<nav class=\"pager\">");
    if page > 1 {
        pager_link(o, v, 1, "first");
        pager_link(o, v, page - 1, "previous");
    }
    let _ = write!(o, "page {page} of {pages} ");
    if page < pages {
        pager_link(o, v, page + 1, "next");
        pager_link(o, v, pages, "last");
    }
    o.push_str("</nav>");
}

fn pager_link(o: &mut String, v: &View, to: usize, label: &str) {
    let link = v.link(|x| x.page = to);
    let _ = write!(o, "<a href=\"{}\">{label}</a> ", esc(&link));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_parses_every_parameter_and_names_the_one_that_is_wrong() {
        let v = View::parse(&PageQuery::of(&[
            ("state", "paused"),
            ("q", "Shop"),
            ("sort", "commitment"),
            ("dir", "desc"),
            ("page", "3"),
            ("per_page", "200"),
        ]))
        .unwrap();
        assert_eq!(v.state, Some(CampaignState::Paused));
        assert_eq!(
            (v.q.as_str(), v.sort, v.desc),
            ("shop", Column::Commitment, true)
        );
        assert_eq!((v.page, v.per_page), (3, 200));
        assert_eq!(View::parse(&PageQuery::default()).unwrap(), View::default());
        for (k, bad) in [
            ("state", "active"),
            ("sort", "price"),
            ("dir", "up"),
            ("page", "0"),
            ("per_page", "201"),
            ("q", &"x".repeat(64)),
            ("account", "Client A"),
            ("account", "-a"),
        ] {
            let e = View::parse(&PageQuery::of(&[(k, bad)])).unwrap_err();
            assert!(e.starts_with(k), "{k}={bad}: {e}");
        }
    }

    /// `n` campaigns with names of the longest kind (63 characters), in varied states.
    fn statuses(n: usize) -> Vec<CampaignRow> {
        use crate::decide::recorded::Recorded;
        use crate::views::overview::FileFact;
        use linkrunner_domain::money::Money;
        (0..n)
            .map(|i| {
                let name = format!("{i:05}-{}", "x".repeat(57));
                let caps = crate::store::CampaignCaps {
                    account: "default".into(),
                    name: name.clone(),
                    monthly_cap: Money::from_rubles(1000 + i as i64),
                    daily_links: 10,
                    total_links: 100,
                };
                let r = Recorded::unrecorded_with(&caps, Vec::new());
                let mut c = crate::views::report::status_from(&name, &r, FileFact::Unknown);
                c.state = CampaignState::ALL[i % CampaignState::ALL.len()];
                c.money.monthly_commitment = Money::from_kopecks((i as i64 * 7919) % 100_000);
                c.next_round = Some(chrono::Utc::now());
                CampaignRow::of(&c)
            })
            .collect()
    }

    #[test]
    fn filtering_and_sorting_choose_exactly_the_matching_campaigns_in_order() {
        let all = statuses(400);
        let v = View {
            state: Some(CampaignState::Paused),
            q: "001".into(),
            sort: Column::Commitment,
            desc: true,
            ..View::default()
        };
        let rows = v.select(&all);
        let mut want: Vec<&CampaignRow> = all
            .iter()
            .filter(|c| c.state == CampaignState::Paused && c.campaign.contains("001"))
            .collect();
        want.sort_by_key(|c| std::cmp::Reverse(c.money.monthly_commitment));
        assert!(!rows.is_empty());
        let names = |r: &[&CampaignRow]| r.iter().map(|c| c.campaign.clone()).collect::<Vec<_>>();
        assert_eq!(names(&rows), names(&want));
    }

    #[test]
    fn one_page_at_10000_campaigns_stays_under_200_kb_and_shows_its_rows() {
        let all = statuses(10_000);
        let sum = crate::views::summary::summarize(&all, 0, "2026-11", chrono::Utc::now());
        let v = View {
            per_page: MAX_PER_PAGE,
            page: 7,
            ..View::default()
        };
        let now = chrono::Utc::now();
        let names: Vec<&str> = v
            .page_rows(&all)
            .iter()
            .map(|c| c.campaign.as_str())
            .collect();
        let mut days = MonthDays::new(now, names.iter().copied());
        for c in &all {
            for day in 0..=i64::from(chrono::Datelike::day0(&now)) {
                days.add(&crate::store::DaySum {
                    campaign: c.campaign.clone(),
                    day,
                    delta: linkrunner_domain::money::Money::from_kopecks(day * 10_001),
                });
            }
        }
        let html = render_page(&all, &sum, &v, &days, now);
        assert!(html.len() <= 200 * 1024, "{} bytes", html.len());
        assert_eq!(html.matches("<tr data-state=").count(), MAX_PER_PAGE);
        assert_eq!(html.matches("<svg class=\"spark\"").count(), MAX_PER_PAGE);
        assert_eq!(
            html.matches("<svg class=\"chart\" id=\"month-picture\"")
                .count(),
            1
        );
        assert!(html.contains(
            "data-matching=\"10000\" data-total=\"10000\" data-page=\"7\" data-pages=\"50\""
        ));
        assert!(html.contains(">next</a>") && html.contains(">previous</a>"));
    }

    #[test]
    fn the_months_picture_is_drawn_against_the_account_cap_when_it_binds() {
        use linkrunner_domain::money::Money;
        let all = statuses(3);
        let now = chrono::Utc::now();
        let sum = crate::views::summary::summarize(&all, 0, "2026-11", now);
        let cap_of = |account: Option<i64>| {
            let days = MonthDays::new(now, []).with_account_cap(account.map(Money::from_rubles));
            let html = render_page(&all, &sum, &View::default(), &days, now);
            let hook = "id=\"month-picture-cap\" data-value=\"";
            let at = html.find(hook).unwrap() + hook.len();
            let cap = html[at..].split('"').next().unwrap().to_string();
            (cap, html.contains("(the cap: the account cap)"))
        };
        assert_eq!(sum.money.monthly_cap, Money::from_rubles(3003));
        assert_eq!(cap_of(None), ("3003".to_string(), false));
        assert_eq!(cap_of(Some(2500)), ("2500".to_string(), true));
        assert_eq!(cap_of(Some(9000)), ("3003".to_string(), false));
    }

    #[test]
    fn several_accounts_show_an_account_column_subtotals_and_a_filter() {
        let mut all = statuses(6);
        for (i, c) in all.iter_mut().enumerate() {
            c.account = ["client-a", "client-b"][i % 2].to_string();
        }
        let now = chrono::Utc::now();
        let sum = crate::views::summary::summarize(&all, 0, "2026-11", now);
        let days = MonthDays::new(now, []);
        let v = View::parse(&PageQuery::of(&[("account", "client-b")])).unwrap();
        let html = render_page(&all, &sum, &v, &days, now);
        assert_eq!(v.account.as_deref(), Some("client-b"));
        assert_eq!(
            html.matches("<tr data-state=").count(),
            3,
            "client-b's only"
        );
        assert!(html.contains("data-matching=\"3\" data-total=\"6\""));
        assert_eq!(html.matches("<td>client-b</td>").count(), 3);
        assert!(html.contains("<th>Account</th>"));
        assert!(html.contains("<tr data-account=\"client-a\"><td><a href=\"/?account=client-a\">client-a</a></td><td class=\"n\">3</td>"));
        assert!(html.contains("<option value=\"client-b\" selected>client-b (3)</option>"));

        let one = statuses(6);
        let sum = crate::views::summary::summarize(&one, 0, "2026-11", now);
        let html = render_page(&one, &sum, &View::default(), &days, now);
        assert!(
            !html.contains("Account") && !html.contains("id=\"accounts\""),
            "one account: no column, no subtotals, no account filter"
        );
    }

    #[test]
    fn links_keep_the_view_and_change_one_thing() {
        let v = View {
            state: Some(CampaignState::WaitingForOperator),
            q: "a b&c".into(),
            ..View::default()
        };
        assert_eq!(
            v.link(|x| x.page = 2),
            "/?state=waiting_for_operator&q=a%20b%26c&page=2"
        );
        assert_eq!(View::default().link(|_| {}), "/");
        let of_b = View {
            account: Some("client-b".into()),
            ..View::default()
        };
        assert_eq!(of_b.link(|x| x.page = 2), "/?account=client-b&page=2");
    }
}

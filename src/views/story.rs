//! What `history` and `explain` say: the ledger's movements with why each was made, and one
//! link's or intent's whole story — which file version and rule made it, which price against
//! which cap, every attempt and how it was settled. One set of facts ([`HistoryLine`],
//! [`Story`]) rendered as text, JSON or CSV.

use std::fmt::Write as _;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use crate::store::{
    CauseKind, CauseRow, HistoryEntry, IntentCause, IntentId, IntentKind, IntentRow, IntentState,
    LedgerEntry, Store, StoreError,
};
use linkrunner_domain::money::Money;

/// One movement of the commitment, flat, as `history` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryLine {
    at: DateTime<Utc>,
    campaign: String,
    /// Change of the monthly commitment (negative: released).
    pub delta: Money,
    links: i64,
    /// The ledger's reason: `reserve`, `release`, `price_adjust`, `autobuyer_stop`, …
    pub reason: String,
    intent_id: Option<IntentId>,
    pub kind: Option<IntentKind>,
    /// The intent's state now.
    state: Option<IntentState>,
    /// What it was about: a page and URL for a purchase, an autobuyer's name.
    subject: Option<String>,
    pub cause: Option<IntentCause>,
    attempt: Option<u32>,
}

impl From<HistoryEntry> for HistoryLine {
    fn from(e: HistoryEntry) -> Self {
        let HistoryEntry {
            ledger,
            intent,
            cause,
        } = e;
        HistoryLine {
            at: ledger.at,
            campaign: ledger.campaign,
            delta: ledger.delta,
            links: ledger.links,
            reason: ledger.reason,
            intent_id: ledger.intent_id,
            kind: intent.as_ref().map(|i| i.kind),
            state: intent.as_ref().map(|i| i.state),
            subject: intent.as_ref().and_then(subject),
            attempt: cause.as_ref().map(|c| c.attempt),
            cause: cause.map(|c| c.cause),
        }
    }
}

/// `2026-11-01` (midnight UTC) or `2026-11-01T09:00:00Z`: `history --since` and `?since=`.
pub(crate) fn parse_since(text: &str) -> Result<DateTime<Utc>, String> {
    if let Ok(d) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(d.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc());
    }
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| format!("`{text}` is not a date (YYYY-MM-DD) or an RFC 3339 instant"))
}

/// The ledger of one campaign (or all) since `since`, with causes.
pub async fn history(
    store: &Store,
    campaign: Option<&str>,
    since: Option<DateTime<Utc>>,
) -> Result<Vec<HistoryLine>, StoreError> {
    let entries = store.reports().history(campaign, since).await?;
    Ok(entries.into_iter().map(HistoryLine::from).collect())
}

/// What an intent was about, from its recorded request.
fn subject(i: &IntentRow) -> Option<String> {
    let r = &i.request;
    let text = |k: &str| r.get(k).and_then(|v| v.as_str()).map(str::to_string);
    match (r.get("page_id").and_then(|v| v.as_i64()), text("url")) {
        (Some(page), Some(url)) => Some(format!("page {page} for {url}")),
        _ => text("name").map(|n| format!("autobuyer {n}")),
    }
}

fn cause_words(c: &IntentCause) -> String {
    let mut s = match (c.kind, c.slot) {
        (CauseKind::Round, Some(slot)) => format!("round of slot {}", stamp(slot)),
        (CauseKind::Round, None) => "buy pass (`once`)".to_string(),
        (CauseKind::Reconcile, _) => "reconciliation".to_string(),
        (CauseKind::Removal, _) => "campaign file removed".to_string(),
        (CauseKind::Resolve, _) => format!("operator's resolve: {}", c.note),
    };
    if let Some(d) = &c.file_digest {
        let _ = write!(s, ", file sha256 {}", short(d));
    }
    if let Some(g) = &c.git_commit {
        let _ = write!(s, ", commit {}", short(g));
    }
    s
}

fn short(hex: &str) -> &str {
    hex.get(..12).unwrap_or(hex)
}

fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn signed(m: Money) -> String {
    if m.is_negative() {
        m.to_string()
    } else {
        format!("+{m}")
    }
}

/// `history --format text`: one line per movement, then the sum.
pub(crate) fn render_history_text(lines: &[HistoryLine]) -> String {
    let mut out = String::new();
    let mut sum = Money::ZERO;
    for l in lines {
        sum = sum.checked_add(l.delta).unwrap_or(Money::MAX);
        let _ = write!(
            out,
            "{}  {}  {} RUB  {:+} link(s)  {}",
            stamp(l.at),
            l.campaign,
            signed(l.delta),
            l.links,
            l.reason
        );
        if let (Some(id), Some(kind)) = (l.intent_id, &l.kind) {
            let _ = write!(out, "  intent #{id} {kind}");
        }
        if let Some(s) = &l.subject {
            let _ = write!(out, " ({s})");
        }
        if let Some(c) = &l.cause {
            let _ = write!(out, "  because: {}", cause_words(c));
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "{} movement(s), net change of the commitment {} RUB",
        lines.len(),
        signed(sum)
    );
    out
}

/// `history --format csv`: RFC 4180, money in decimal rubles.
pub fn render_history_csv(lines: &[HistoryLine]) -> String {
    let mut out = String::from(
        "at,campaign,delta_rub,links,reason,intent_id,kind,state,subject,cause,slot,attempt,file_sha256,git_commit,note\n",
    );
    for l in lines {
        let c = l.cause.as_ref();
        let fields = [
            stamp(l.at),
            l.campaign.clone(),
            l.delta.to_string(),
            l.links.to_string(),
            l.reason.clone(),
            l.intent_id.map(|i| i.to_string()).unwrap_or_default(),
            l.kind.map(|k| k.to_string()).unwrap_or_default(),
            l.state.map(|s| s.to_string()).unwrap_or_default(),
            l.subject.clone().unwrap_or_default(),
            c.map(|c| c.kind.as_str().to_string()).unwrap_or_default(),
            c.and_then(|c| c.slot).map(stamp).unwrap_or_default(),
            l.attempt.map(|a| a.to_string()).unwrap_or_default(),
            c.and_then(|c| c.file_digest.clone()).unwrap_or_default(),
            c.and_then(|c| c.git_commit.clone()).unwrap_or_default(),
            c.map(|c| c.note.clone()).unwrap_or_default(),
        ];
        let row: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

/// A CSV field, quoted when it needs to be. A leading `=`, `+`, `-`, `@`, tab or carriage
/// return in text would be read as a formula by spreadsheets (OWASP's list): such text gets a
/// leading `'` (numbers are left alone). Control characters, escape sequences and BIDI
/// overrides inside are written as visible escapes ([`linkrunner_domain::shown::line`]): the file
/// is also read on terminals.
pub(crate) fn csv_field(f: &str) -> String {
    let numeric = f.parse::<f64>().is_ok_and(f64::is_finite);
    let guarded = !numeric && f.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let f = linkrunner_domain::shown::line(f);
    let f = if guarded {
        format!("'{f}")
    } else {
        f.into_owned()
    };
    if f.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f
    }
}

/// One intent's whole story.
#[derive(Debug, Clone, Serialize)]
pub struct Story {
    /// The link id asked about, when the question was a link.
    pub link_id: Option<i64>,
    pub intent_id: IntentId,
    campaign: String,
    kind: IntentKind,
    pub state: IntentState,
    natural_key: String,
    subject: Option<String>,
    price: Option<Money>,
    request: serde_json::Value,
    attempts: u32,
    error: Option<String>,
    resolution: Option<String>,
    pub causes: Vec<CauseRow>,
    ledger: Vec<LedgerEntry>,
}

/// What `explain` was asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// A plain number: a link id the marketplace gave, else an intent id.
    Either(i64),
    Link(i64),
    Intent(i64),
}

impl Subject {
    /// `123`, `link:123` or `intent:123` (also `#123` for an intent).
    pub(crate) fn parse(text: &str) -> Option<Subject> {
        let num = |s: &str| s.trim().parse::<i64>().ok();
        if let Some(n) = text.strip_prefix("link:") {
            return num(n).map(Subject::Link);
        }
        if let Some(n) = text.strip_prefix("intent:").or(text.strip_prefix('#')) {
            return num(n).map(Subject::Intent);
        }
        num(text).map(Subject::Either)
    }
}

/// The story of a link (by the id the marketplace gave it) or an intent; `None` when the
/// journal knows neither.
pub async fn explain(store: &Store, what: Subject) -> Result<Option<Story>, StoreError> {
    let (link, intent) = match what {
        Subject::Link(l) => (Some(l), store.reports().intent_of_link(l).await?),
        Subject::Intent(i) => (None, Some(IntentId(i))),
        Subject::Either(n) => match store.reports().intent_of_link(n).await? {
            Some(i) => (Some(n), Some(i)),
            None => (None, Some(IntentId(n))),
        },
    };
    let Some(id) = intent else { return Ok(None) };
    let Some(row) = store.reports().intent(id).await? else {
        return Ok(None);
    };
    Ok(Some(Story {
        link_id: link,
        intent_id: row.id,
        campaign: row.campaign.clone(),
        kind: row.kind,
        state: row.state,
        natural_key: row.natural_key.clone(),
        subject: subject(&row),
        price: row
            .request
            .get("price")
            .and_then(|p| serde_json::from_value(p.clone()).ok()),
        attempts: row.attempts,
        error: row.error.clone(),
        resolution: row.resolution.clone(),
        causes: store.reports().causes_of(id).await?,
        ledger: store.reports().ledger_of_intent(id).await?,
        request: row.request,
    }))
}

/// `explain --format text`.
pub fn render_story(s: &Story) -> String {
    let mut out = String::new();
    let asked = s.link_id.map(|l| format!("link {l}: ")).unwrap_or_default();
    let _ = writeln!(
        out,
        "{asked}intent #{} {} of campaign {} — now {}",
        s.intent_id, s.kind, s.campaign, s.state
    );
    if let Some(subj) = &s.subject {
        let _ = writeln!(out, "  what: {subj}");
    }
    let _ = writeln!(out, "  key: {}", s.natural_key);
    for c in &s.causes {
        let _ = writeln!(
            out,
            "  attempt {} at {}: {}",
            c.attempt,
            stamp(c.at),
            cause_words(&c.cause)
        );
        if let Some(rule) = rule_words(s.price, &c.cause) {
            let _ = writeln!(out, "    rule: {rule}");
        }
    }
    for l in &s.ledger {
        let _ = writeln!(
            out,
            "  {}  {} RUB  {:+} link(s)  {}",
            stamp(l.at),
            signed(l.delta),
            l.links,
            l.reason
        );
    }
    let _ = writeln!(out, "  attempts: {}", s.attempts);
    if let Some(e) = &s.error {
        let _ = writeln!(out, "  last error: {e}");
    }
    if let Some(r) = &s.resolution {
        let _ = writeln!(out, "  settled by an operator: {r}");
    }
    out
}

/// The price against the caps the file version in force had.
fn rule_words(price: Option<Money>, c: &IntentCause) -> Option<String> {
    let mut parts = Vec::new();
    if let (Some(p), Some(max)) = (price, c.max_link_price) {
        let verdict = if p <= max { "within" } else { "OVER" };
        parts.push(format!(
            "price {p} RUB/month {verdict} budget.max_link_price {max} RUB"
        ));
    }
    if let Some(cap) = c.monthly_cap {
        parts.push(format!("budget.monthly {cap} RUB"));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_and_never_read_as_formulas() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("=HYPERLINK(1)"), "'=HYPERLINK(1)");
        assert_eq!(csv_field("-150.00"), "-150.00");
        assert_eq!(csv_field("\t=1+1"), "'\\t=1+1");
        assert_eq!(csv_field("\r=1+1"), "'\\r=1+1");
        assert_eq!(csv_field("-inf"), "'-inf");
        assert_eq!(csv_field("a\u{1b}[2Jb\u{202e}"), "a\\x1b[2Jb\\u{202e}");
    }

    #[test]
    fn explain_takes_a_link_an_intent_or_a_bare_number() {
        assert_eq!(Subject::parse("42"), Some(Subject::Either(42)));
        assert_eq!(Subject::parse("link:7"), Some(Subject::Link(7)));
        assert_eq!(Subject::parse("intent:9"), Some(Subject::Intent(9)));
        assert_eq!(Subject::parse("#9"), Some(Subject::Intent(9)));
        assert_eq!(Subject::parse("nine"), None);
    }
}

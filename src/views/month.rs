//! `linkrunner report --month`: what finance asks at the end of a month, per campaign and in
//! total — links bought, the rent committed for them, the autobuyer budgets committed, the
//! money released — read from the append-only ledger ([`Store::ledger_sums`]).
//!
//! Every ledger movement of the month lands in exactly one column, so the columns always add
//! up to the month's change of the commitment: `rent + autobuyers + foreign − released +
//! other == net_change` (tested in `tests/it` `engine::month`). A movement counts in the month
//! it happened (UTC): a purchase reserved on the 30th and found bought on the 1st is split
//! across the two months, as the ledger is.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use chrono::{DateTime, Months, NaiveDate, SecondsFormat, Utc};
use serde::Serialize;

use super::story::csv_field;
use crate::store::{IntentKind, LedgerSum, Store, StoreError};
use linkrunner_domain::money::Money;

/// A calendar month in UTC, from `--month YYYY-MM`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Month {
    first: NaiveDate,
}

impl Month {
    /// `2026-11`; anything else (`2026-1`, `2026-13`, `2026-11-01`) is refused with the form.
    pub fn parse(text: &str) -> Result<Month, String> {
        let refuse = || format!("`{text}` is not a month: expected YYYY-MM, e.g. 2026-11");
        let b = text.as_bytes();
        let shape =
            b.len() == 7 && b[4] == b'-' && text.chars().all(|c| c.is_ascii_digit() || c == '-');
        if !shape {
            return Err(refuse());
        }
        NaiveDate::parse_from_str(&format!("{text}-01"), "%Y-%m-%d")
            .map(|first| Month { first })
            .map_err(|_| refuse())
    }

    /// The month holding `t` (UTC).
    pub fn of(t: DateTime<Utc>) -> Month {
        let d = t.date_naive();
        Month {
            first: d - chrono::Days::new(u64::from(chrono::Datelike::day0(&d))),
        }
    }

    /// Midnight UTC of the first day.
    pub fn start(self) -> DateTime<Utc> {
        self.first.and_time(chrono::NaiveTime::MIN).and_utc()
    }

    /// Midnight UTC of the first day of the next month (excluded).
    pub fn end(self) -> DateTime<Utc> {
        (self.first + Months::new(1))
            .and_time(chrono::NaiveTime::MIN)
            .and_utc()
    }
}

impl std::fmt::Display for Month {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.first.format("%Y-%m"))
    }
}

/// One campaign's month, or the total.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MonthLine {
    pub campaign: String,
    /// The marketplace account the campaign spends in; on an account's subtotal line, that
    /// account; on the total, empty.
    pub account: String,
    /// Links our purchases bought (net of reservations given back; an uncertain purchase
    /// counts, as it does in the commitment, until it is settled).
    pub links_bought: i64,
    /// The monthly rent those purchases committed.
    pub rent_committed: Money,
    /// Autobuyer budgets committed by creations and starts, and the rent of an autobuyer's
    /// links above its budget.
    pub autobuyer_budgets: Money,
    /// The rent of links bought outside linkrunner, counted when the link list showed them.
    foreign_rent: Money,
    /// Money no longer committed: links that left the project, settled autobuyer stops (net
    /// of links that came back).
    pub released: Money,
    /// Movements of a reason this version does not know (0 unless a newer version wrote them).
    other: Money,
    /// The month's change of the commitment: the sum of the ledger's movements.
    pub net_change: Money,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MonthReport {
    month: String,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    pub campaigns: Vec<MonthLine>,
    /// Each account's subtotal, in account order, when the month's campaigns spend in more
    /// than one account (an agency bills per client); empty otherwise.
    pub accounts: Vec<MonthLine>,
    pub total: MonthLine,
}

/// The label of an account's subtotal line (parentheses are not allowed in a campaign name).
fn account_label(account: &str) -> String {
    format!("(account {account})")
}

/// The label of the total line; parentheses are not allowed in a campaign name.
pub const TOTAL: &str = "(total)";

/// The month's report for every campaign the journal knows (zeros for a quiet campaign).
pub async fn month_report(store: &Store, month: Month) -> Result<MonthReport, StoreError> {
    let sums = store
        .reports()
        .ledger_sums(month.start(), month.end())
        .await?;
    let mut lines: BTreeMap<String, MonthLine> = BTreeMap::new();
    for (name, account) in store.campaigns().campaign_accounts().await? {
        let mut l = line(&name);
        l.account = account;
        lines.insert(name, l);
    }
    for s in &sums {
        let l = lines.entry(s.campaign.clone()).or_insert_with(|| {
            let mut l = line(&s.campaign);
            l.account = linkrunner_domain::account::DEFAULT_ACCOUNT.into();
            l
        });
        add(l, s);
    }
    let mut total = line(TOTAL);
    let mut accounts: BTreeMap<String, MonthLine> = BTreeMap::new();
    for l in lines.values() {
        add_line(&mut total, l);
        let sub = accounts
            .entry(l.account.clone())
            .or_insert_with(|| MonthLine {
                account: l.account.clone(),
                ..line(&account_label(&l.account))
            });
        add_line(sub, l);
    }
    let mut campaigns: Vec<MonthLine> = lines.into_values().collect();
    campaigns.sort_by(|a, b| (&a.account, &a.campaign).cmp(&(&b.account, &b.campaign)));
    Ok(MonthReport {
        month: month.to_string(),
        from: month.start(),
        to: month.end(),
        campaigns,
        accounts: match accounts.len() {
            0 | 1 => Vec::new(),
            _ => accounts.into_values().collect(),
        },
        total,
    })
}

/// The report's rows in order: each account's campaigns followed by its subtotal when there
/// are several accounts, then the total.
fn rows(r: &MonthReport) -> Vec<&MonthLine> {
    let mut out = Vec::with_capacity(r.campaigns.len() + r.accounts.len() + 1);
    for (i, l) in r.campaigns.iter().enumerate() {
        out.push(l);
        let last_of_account = r
            .campaigns
            .get(i + 1)
            .is_none_or(|n| n.account != l.account);
        if last_of_account {
            out.extend(r.accounts.iter().find(|a| a.account == l.account));
        }
    }
    out.push(&r.total);
    out
}

/// The month's [`MonthReport::total`] alone, from the ledger summed by kind and reason (a
/// handful of groups, no line per campaign): what the status page's summary shows on every
/// view. Folded by the same columns as the report, so it equals the report's total (tested
/// on both backends by tests/it `engine::month`).
pub async fn month_total(store: &Store, month: Month) -> Result<MonthLine, StoreError> {
    let sums = store
        .reports()
        .ledger_totals(month.start(), month.end())
        .await?;
    let mut total = line(TOTAL);
    for s in &sums {
        add(&mut total, s);
    }
    Ok(total)
}

fn line(campaign: &str) -> MonthLine {
    MonthLine {
        campaign: campaign.to_string(),
        ..MonthLine::default()
    }
}

/// Which column a group of movements belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Rent,
    Autobuyers,
    Foreign,
    Released,
    Other,
}

fn column(kind: Option<IntentKind>, reason: &str) -> Column {
    match (kind, reason) {
        (_, "link_left_list" | "link_back_in_list" | "autobuyer_stop") => Column::Released,
        (Some(IntentKind::Purchase), _) => Column::Rent,
        (
            Some(
                IntentKind::CreateAutobuyer
                | IntentKind::StartAutobuyer
                | IntentKind::StopAutobuyer,
            ),
            _,
        )
        | (None, "autobuyer_links") => Column::Autobuyers,
        (None, "foreign_link") => Column::Foreign,
        _ => Column::Other,
    }
}

fn add(l: &mut MonthLine, s: &LedgerSum) {
    let plus = |a: Money, b: Money| Money::from_kopecks(a.kopecks() + b.kopecks());
    match column(s.kind, &s.reason) {
        Column::Rent => {
            l.links_bought += s.links;
            l.rent_committed = plus(l.rent_committed, s.delta);
        }
        Column::Autobuyers => l.autobuyer_budgets = plus(l.autobuyer_budgets, s.delta),
        Column::Foreign => l.foreign_rent = plus(l.foreign_rent, s.delta),
        Column::Released => {
            l.released = Money::from_kopecks(l.released.kopecks() - s.delta.kopecks())
        }
        Column::Other => l.other = plus(l.other, s.delta),
    }
    l.net_change = plus(l.net_change, s.delta);
}

fn add_line(t: &mut MonthLine, l: &MonthLine) {
    let plus = |a: Money, b: Money| Money::from_kopecks(a.kopecks() + b.kopecks());
    t.links_bought += l.links_bought;
    t.rent_committed = plus(t.rent_committed, l.rent_committed);
    t.autobuyer_budgets = plus(t.autobuyer_budgets, l.autobuyer_budgets);
    t.foreign_rent = plus(t.foreign_rent, l.foreign_rent);
    t.released = plus(t.released, l.released);
    t.other = plus(t.other, l.other);
    t.net_change = plus(t.net_change, l.net_change);
}

fn cells(l: &MonthLine) -> [String; 8] {
    [
        l.campaign.clone(),
        l.links_bought.to_string(),
        l.rent_committed.to_string(),
        l.autobuyer_budgets.to_string(),
        l.foreign_rent.to_string(),
        l.released.to_string(),
        l.other.to_string(),
        l.net_change.to_string(),
    ]
}

/// `report --format text`: a table, money in RUB, the total last.
pub fn render_text(r: &MonthReport) -> String {
    let head = [
        "campaign",
        "links",
        "rent",
        "autobuyers",
        "foreign",
        "released",
        "other",
        "net change",
    ];
    let rows: Vec<[String; 8]> = rows(r).into_iter().map(cells).collect();
    let width = |i: usize| {
        rows.iter()
            .map(|c| c[i].len())
            .chain([head[i].len()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..8).map(width).collect();
    let fmt = |c: &[&str]| {
        let mut s = format!("{:<w$}", c[0], w = widths[0]);
        for (i, v) in c.iter().enumerate().skip(1) {
            let _ = write!(s, "  {v:>w$}", w = widths[i]);
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = format!(
        "month {} (UTC, {} to {}), money in RUB per month\n",
        r.month,
        r.from.to_rfc3339_opts(SecondsFormat::Secs, true),
        r.to.to_rfc3339_opts(SecondsFormat::Secs, true)
    );
    out.push_str(&fmt(&head));
    for c in &rows {
        out.push_str(&fmt(&c.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    out
}

/// `report --format csv`: RFC 4180 (the fields quoted and guarded like `history`'s), money in
/// decimal rubles, the total last as campaign `(total)`.
pub fn render_csv(r: &MonthReport) -> String {
    let mut out = String::from(
        "month,campaign,links_bought,rent_committed_rub,autobuyer_budgets_rub,foreign_rent_rub,released_rub,other_rub,net_change_rub,account\r\n",
    );
    for l in rows(r) {
        let row: Vec<String> = std::iter::once(r.month.clone())
            .chain(cells(l))
            .chain([l.account.clone()])
            .map(|f| csv_field(&f))
            .collect();
        out.push_str(&row.join(","));
        out.push_str("\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_month_is_yyyy_mm_and_nothing_else() {
        let m = Month::parse("2026-11").unwrap();
        assert_eq!(m.start().to_rfc3339(), "2026-11-01T00:00:00+00:00");
        assert_eq!(m.end().to_rfc3339(), "2026-12-01T00:00:00+00:00");
        assert_eq!(
            Month::parse("2026-12").unwrap().end().to_rfc3339(),
            "2027-01-01T00:00:00+00:00"
        );
        for bad in [
            "2026-13",
            "2026-1",
            "2026-11-01",
            "26-11",
            "2026/11",
            "",
            "2026-00",
            "+026-11",
        ] {
            let e = Month::parse(bad).unwrap_err();
            assert!(e.contains("expected YYYY-MM"), "{bad}: {e}");
        }
        let t = chrono::DateTime::parse_from_rfc3339("2026-11-30T23:59:59Z").unwrap();
        assert_eq!(Month::of(t.with_timezone(&Utc)), m);
    }

    #[test]
    fn every_movement_lands_in_one_column_and_the_columns_add_up() {
        let sum = |kind, reason: &str, delta, links| LedgerSum {
            campaign: "acme".into(),
            kind,
            reason: reason.into(),
            delta: Money::from_kopecks(delta),
            links,
            movements: 1,
        };
        let mut l = line("acme");
        for s in [
            sum(Some(IntentKind::Purchase), "reserve", 45_000, 3),
            sum(Some(IntentKind::Purchase), "price_adjust", -9_000, 0),
            sum(Some(IntentKind::Purchase), "release", -12_000, -1),
            sum(Some(IntentKind::CreateAutobuyer), "reserve", 100_000, 0),
            sum(None, "autobuyer_stop", -70_000, 0),
            sum(Some(IntentKind::Purchase), "link_left_list", -8_000, 0),
            sum(None, "foreign_link", 5_000, 0),
            sum(None, "from_the_future", 1, 0),
        ] {
            add(&mut l, &s);
        }
        assert_eq!(l.links_bought, 2);
        assert_eq!(l.rent_committed, Money::from_kopecks(24_000));
        assert_eq!(l.autobuyer_budgets, Money::from_rubles(1000));
        assert_eq!(l.released, Money::from_rubles(780));
        assert_eq!(l.foreign_rent, Money::from_rubles(50));
        assert_eq!(l.other, Money::from_kopecks(1));
        let columns =
            l.rent_committed.kopecks() + l.autobuyer_budgets.kopecks() + l.foreign_rent.kopecks()
                - l.released.kopecks()
                + l.other.kopecks();
        assert_eq!(columns, l.net_change.kopecks());
    }

    #[test]
    fn the_csv_is_rfc_4180_with_the_total_last() {
        let m = Month::parse("2026-11").unwrap();
        let mut a = line("acme");
        a.account = "default".into();
        a.rent_committed = Money::from_kopecks(-12_050);
        let r = MonthReport {
            month: m.to_string(),
            from: m.start(),
            to: m.end(),
            campaigns: vec![a.clone()],
            accounts: Vec::new(),
            total: MonthLine {
                campaign: TOTAL.into(),
                account: String::new(),
                ..a
            },
        };
        let csv = render_csv(&r);
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(lines.len(), 4, "{csv:?}");
        assert_eq!(lines[1], "2026-11,acme,0,-120.50,0,0,0,0,0,default");
        assert!(lines[2].starts_with("2026-11,(total),"), "{csv}");
        assert_eq!(lines[3], "");
    }

    #[test]
    fn several_accounts_each_get_a_subtotal_after_their_campaigns() {
        let m = Month::parse("2026-11").unwrap();
        let of = |name: &str, account: &str, kopecks: i64| MonthLine {
            account: account.into(),
            rent_committed: Money::from_kopecks(kopecks),
            ..line(name)
        };
        let campaigns = vec![
            of("a1", "client-a", 100),
            of("a2", "client-a", 50),
            of("b1", "client-b", 7),
        ];
        let sub = |account: &str, kopecks: i64| MonthLine {
            account: account.into(),
            rent_committed: Money::from_kopecks(kopecks),
            ..line(&account_label(account))
        };
        let r = MonthReport {
            month: m.to_string(),
            from: m.start(),
            to: m.end(),
            campaigns,
            accounts: vec![sub("client-a", 150), sub("client-b", 7)],
            total: MonthLine {
                rent_committed: Money::from_kopecks(157),
                ..line(TOTAL)
            },
        };
        let order: Vec<&str> = rows(&r).iter().map(|l| l.campaign.as_str()).collect();
        assert_eq!(
            order,
            [
                "a1",
                "a2",
                "(account client-a)",
                "b1",
                "(account client-b)",
                TOTAL
            ]
        );
        let text = render_text(&r);
        assert!(text.contains("(account client-a)"), "{text}");
        assert!(render_csv(&r).contains(",(account client-b),0,0.07,0,0,0,0,0,client-b\r\n"));
    }
}

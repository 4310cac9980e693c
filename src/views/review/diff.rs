//! What a pull request changes in the campaign files: per campaign, every field that differs
//! between the base revision and the working tree (old → new), and what the change does to
//! money (pure: no I/O). Fields are compared on the validated [`Campaign`], so reformatting
//! a file or reordering its keys is no change, while any money edit always is.
//!
//! Lists are matched by identity, not position: filters and autobuyers by `name`, promoted
//! URLs and an autobuyer's URLs by `url`; anchor texts are a set (added `+`, removed `-`).
//!
//! The money effect of a campaign is its cap (`budget.monthly`) and the most its file lets
//! it commit ([`file_worst_case`]: running autobuyers' budgets plus one worst-case buy
//! round, nothing when paused), before and after; its [`CampaignDiff::weight`] orders a
//! bulk edit's campaigns by the size of their money change.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::campaign::{AutobuyerState, Campaign};
use crate::decide::caps::autobuyer_budget;
use linkrunner_domain::money::Money;

/// Longest old or new value shown, in characters (anchor texts can be long).
const MAX_VALUE_CHARS: usize = 120;

/// How a campaign's file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileChange {
    Added,
    Removed,
    Edited,
}

/// One field that differs; `None` is "absent" on that side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldChange {
    /// `budget.monthly`, `autobuyers[acme-auto].urls[https://…].monthly_budget`, …
    pub(crate) field: String,
    pub(crate) old: Option<String>,
    pub(crate) new: Option<String>,
    /// For an amount of money: `+500 RUB, +20 %`.
    pub(crate) money: Option<String>,
}

/// The money a campaign's file asks for, before and after (`None`: the file is absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct MoneyChange {
    pub(crate) cap: (Option<Money>, Option<Money>),
    pub(crate) worst: (Option<Money>, Option<Money>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CampaignDiff {
    pub(crate) campaign: String,
    pub(crate) change: FileChange,
    pub(crate) fields: Vec<FieldChange>,
    pub(crate) money: MoneyChange,
}

impl CampaignDiff {
    /// The size of the money change in kopecks: how far the cap and the worst case move.
    pub(crate) fn weight(&self) -> i64 {
        let moved = |(a, b): (Option<Money>, Option<Money>)| {
            let k = |m: Option<Money>| m.map_or(0, Money::kopecks);
            (k(b) - k(a)).unsigned_abs() as i64
        };
        moved(self.money.cap).saturating_add(moved(self.money.worst))
    }
}

/// Every campaign whose file differs between `base` and `head`, in name order.
pub(crate) fn diff_campaigns(base: &[Campaign], head: &[Campaign]) -> Vec<CampaignDiff> {
    let by_name = |cs: &[Campaign]| -> BTreeMap<String, Campaign> {
        cs.iter().map(|c| (c.name.clone(), c.clone())).collect()
    };
    let (old, new) = (by_name(base), by_name(head));
    let mut names: Vec<&String> = old.keys().chain(new.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|n| diff_one(n, old.get(n), new.get(n)))
        .collect()
}

fn diff_one(name: &str, old: Option<&Campaign>, new: Option<&Campaign>) -> Option<CampaignDiff> {
    if old == new {
        return None;
    }
    let change = match (old, new) {
        (None, _) => FileChange::Added,
        (_, None) => FileChange::Removed,
        _ => FileChange::Edited,
    };
    let json = |c: Option<&Campaign>| {
        c.map_or(Value::Null, |c| {
            serde_json::to_value(c).unwrap_or(Value::Null)
        })
    };
    let mut fields = Vec::new();
    if change == FileChange::Edited {
        walk("", &json(old), &json(new), &mut fields);
    }
    Some(CampaignDiff {
        campaign: name.to_string(),
        change,
        fields,
        money: MoneyChange {
            cap: (old.map(|c| c.budget.monthly), new.map(|c| c.budget.monthly)),
            worst: (old.map(file_worst_case), new.map(file_worst_case)),
        },
    })
}

/// The most a campaign's file lets it commit per month: its running autobuyers' budgets and
/// one buy round at the worst (`per_run` links at `max_link_price`); nothing while paused.
pub(crate) fn file_worst_case(c: &Campaign) -> Money {
    if c.paused {
        return Money::ZERO;
    }
    let round = c.buy.as_ref().map_or(Money::ZERO, |b| {
        c.budget
            .max_link_price
            .checked_mul(i64::from(b.per_run))
            .unwrap_or(Money::MAX)
    });
    c.autobuyers
        .iter()
        .filter(|ab| ab.state == AutobuyerState::Running)
        .fold(round, |acc, ab| {
            acc.checked_add(autobuyer_budget(ab)).unwrap_or(Money::MAX)
        })
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn walk(path: &str, old: &Value, new: &Value, out: &mut Vec<FieldChange>) {
    if old == new {
        return;
    }
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let (x, y) = (
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                );
                walk(&join(path, k), x, y, out);
            }
        }
        (Value::Array(a), Value::Array(b)) => match identity(a).zip(identity(b)) {
            Some((ka, kb)) => walk_keyed(path, &ka, &kb, out),
            None => walk_set(path, a, b, out),
        },
        _ => out.push(field(path, Some(old), Some(new))),
    }
}

/// List items by their identity key (`name` or `url`), when every item has one.
fn identity(items: &[Value]) -> Option<BTreeMap<String, &Value>> {
    let key = ["name", "url"].into_iter().find(|k| {
        !items.is_empty() && items.iter().all(|v| v.get(k).is_some_and(Value::is_string))
    })?;
    Some(
        items
            .iter()
            .map(|v| (v[key].as_str().unwrap_or_default().to_string(), v))
            .collect(),
    )
}

fn walk_keyed(
    path: &str,
    a: &BTreeMap<String, &Value>,
    b: &BTreeMap<String, &Value>,
    out: &mut Vec<FieldChange>,
) {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        let at = format!("{path}[{k}]");
        match (a.get(k), b.get(k)) {
            (Some(x), Some(y)) => walk(&at, x, y, out),
            (x, y) => out.push(field(&at, x.copied(), y.copied())),
        }
    }
}

/// Lists without identity (anchor texts, extra search values): each item added or removed.
fn walk_set(path: &str, a: &[Value], b: &[Value], out: &mut Vec<FieldChange>) {
    if a.is_empty() || b.is_empty() {
        let show = |v: &[Value]| (!v.is_empty()).then(|| Value::Array(v.to_vec()));
        out.push(field(path, show(a).as_ref(), show(b).as_ref()));
        return;
    }
    for gone in a.iter().filter(|v| !b.contains(v)) {
        out.push(field(path, Some(gone), None));
    }
    for came in b.iter().filter(|v| !a.contains(v)) {
        out.push(field(path, None, Some(came)));
    }
}

/// Whether a field holds an amount of money, by its last key. By name, so a new money key
/// is shown in rubles with its delta without an edit here: `monthly`, `approve_above`, and
/// keys that end in `_price`, `_budget` or `_rent` or start with `price_`
/// (docs/contributing.md, "Adding a campaign key").
fn is_money_field(path: &str) -> bool {
    let last = path.rsplit('.').next().unwrap_or(path);
    matches!(last, "monthly" | "approve_above")
        || last.starts_with("price_")
        || ["_price", "_budget", "_rent"]
            .iter()
            .any(|s| last.ends_with(s))
}

fn field(path: &str, old: Option<&Value>, new: Option<&Value>) -> FieldChange {
    let old = old.filter(|v| !v.is_null());
    let new = new.filter(|v| !v.is_null());
    let money = is_money_field(path)
        .then(|| money_delta(amount(old), amount(new), "RUB"))
        .flatten();
    let shown = |v: Option<&Value>| match amount(v).filter(|_| is_money_field(path)) {
        Some(m) => Some(format!("{} RUB", rubles(m))),
        None => v.map(show),
    };
    FieldChange {
        field: path.to_string(),
        old: shown(old),
        new: shown(new),
        money,
    }
}

fn amount(v: Option<&Value>) -> Option<Money> {
    v?.as_str()?.parse().ok()
}

/// `+500 RUB, +20 %` with `unit` "RUB" (no percentage from nothing); `None` when equal.
pub(crate) fn money_delta(old: Option<Money>, new: Option<Money>, unit: &str) -> Option<String> {
    let (a, b) = (old.unwrap_or(Money::ZERO), new.unwrap_or(Money::ZERO));
    let d = b.kopecks().checked_sub(a.kopecks())?;
    if d == 0 {
        return None;
    }
    let sign = if d > 0 { "+" } else { "−" };
    let mut s = format!("{sign}{} {unit}", rubles(Money::from_kopecks(d.abs())));
    if old.is_some() && a.kopecks() > 0 {
        // Whole percent, rounded half away from zero, in integers (money is never a float).
        let pct = (d.abs() as i128 * 100 + a.kopecks() as i128 / 2) / a.kopecks() as i128;
        s.push_str(&format!(", {sign}{pct} %"));
    }
    Some(s)
}

/// Rubles with thousands separated by commas: `2,950`, `7,500.50`.
pub(crate) fn rubles(m: Money) -> String {
    let plain = m.to_string();
    let (sign, rest) = plain
        .strip_prefix('-')
        .map_or(("", plain.as_str()), |r| ("-", r));
    let (whole, frac) = rest
        .split_once('.')
        .map_or((rest, None), |(w, f)| (w, Some(f)));
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// A value as one short line: strings without quotes, money as rubles, lists joined.
fn show(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(show).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    };
    if s.chars().count() > MAX_VALUE_CHARS {
        let cut: String = s.chars().take(MAX_VALUE_CHARS).collect();
        format!("{cut}…")
    } else {
        s
    }
}

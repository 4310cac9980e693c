//! The summary over every campaign: the top of the status page and `GET /api/v1/summary`,
//! computed from the list's rows (`super::list`), the rows the table shows and each
//! campaign's status (`/api/v1/campaigns`) gives, so its numbers are theirs.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::decide::caps::MoneyUse;
use crate::store::{Store, StoreError};

use super::accounts::by_account;
use super::list::CampaignRow;
use super::month::{Month, month_total};
use super::overview::CampaignState;

/// How many of the waiting campaigns the summary names (the page links to the rest).
pub(crate) const WAITING_NAMED: usize = 20;

/// The top of the status page, and `GET /api/v1/summary`: computed from the same rows the
/// table shows (those of the statuses `/api/v1/campaigns` shows).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Summary {
    at: DateTime<Utc>,
    pub(crate) campaigns: usize,
    /// Every state, with 0 for those no campaign is in.
    pub(crate) by_state: BTreeMap<&'static str, usize>,
    /// Sums over all campaigns.
    #[serde(flatten)]
    pub(crate) money: MoneyUse,
    /// The current month (UTC), and the links our purchases bought in it (as
    /// `/api/v1/report?month=` totals them).
    pub(crate) month: String,
    pub(crate) links_bought_this_month: i64,
    /// All spending stopped, and why (an operator's halt, credentials rejected).
    pub(crate) all_spending_stopped: Option<String>,
    /// Why the removal of campaigns whose files are gone is held (issue 32), as the daemon
    /// serving this judged it; `null` when none is held.
    pub(crate) removals_held: Option<String>,
    /// Campaigns halted or waiting for an operator.
    pub(crate) waiting_for_operator: usize,
    /// Intents that wait to be settled, over all campaigns.
    pub(crate) uncertain_intents: usize,
    /// The first [`WAITING_NAMED`] campaigns an operator must act on, by name, and why.
    pub(crate) waiting: Vec<Waiting>,
    /// Per marketplace account its campaigns spend in, in id order (issue 34: an agency bills
    /// per client): always given, one entry (`default`) when every campaign is of one account.
    pub(crate) accounts: Vec<AccountSum>,
}

/// One account's part of the summary: the totals above, of its campaigns only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct AccountSum {
    pub(crate) account: String,
    pub(crate) campaigns: usize,
    #[serde(flatten)]
    pub(crate) money: MoneyUse,
    pub(crate) waiting_for_operator: usize,
    pub(crate) uncertain_intents: usize,
}

impl AccountSum {
    /// The sums of one account's rows.
    fn of(account: String, rows: &[&CampaignRow]) -> AccountSum {
        let mut a = AccountSum {
            account,
            campaigns: rows.len(),
            money: MoneyUse::default(),
            waiting_for_operator: 0,
            uncertain_intents: 0,
        };
        for c in rows {
            a.money.add(&c.money);
            a.uncertain_intents += c.uncertain;
            a.waiting_for_operator += usize::from(waits(c.state));
        }
        a
    }
}

/// Whether a campaign in `state` waits for an operator (halted or asked to act).
fn waits(state: CampaignState) -> bool {
    matches!(
        state,
        CampaignState::Halted | CampaignState::WaitingForOperator
    )
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Waiting {
    pub(crate) campaign: String,
    pub(crate) state: CampaignState,
    pub(crate) reason: String,
}

/// The summary of `all` (every campaign, not one page of them).
pub(crate) fn summarize(
    all: &[CampaignRow],
    links_bought_this_month: i64,
    month: &str,
    now: DateTime<Utc>,
) -> Summary {
    let mut by_state: BTreeMap<&'static str, usize> =
        CampaignState::ALL.iter().map(|s| (s.as_str(), 0)).collect();
    let mut s = Summary {
        at: now,
        campaigns: all.len(),
        by_state: BTreeMap::new(),
        money: MoneyUse::default(),
        month: month.to_string(),
        links_bought_this_month,
        all_spending_stopped: None,
        removals_held: None,
        waiting_for_operator: 0,
        uncertain_intents: 0,
        waiting: Vec::new(),
        accounts: by_account(all, |c| c.account.as_str())
            .into_iter()
            .map(|(account, rows)| AccountSum::of(account, &rows))
            .collect(),
    };
    for c in all {
        *by_state.entry(c.state.as_str()).or_default() += 1;
        s.money.add(&c.money);
        s.uncertain_intents += c.uncertain;
        if c.state == CampaignState::Halted && s.all_spending_stopped.is_none() {
            s.all_spending_stopped = c.state_reason.clone();
        }
        if waits(c.state) {
            s.waiting_for_operator += 1;
            if s.waiting.len() < WAITING_NAMED {
                s.waiting.push(Waiting {
                    campaign: c.campaign.clone(),
                    state: c.state,
                    reason: c.state_reason.clone().unwrap_or_default(),
                });
            }
        }
    }
    s.by_state = by_state;
    s
}

/// The rows `rows` reads and their summary, with this month's links read from the journal's
/// ledger. The rows, the month's total and the halts are read at once: on SQLite each reader
/// is a connection of its own, so `/api/v1/summary` and the page's first screen wait for the
/// slowest read, not for their sum (issue 34, item 5).
pub(crate) async fn summary(
    store: &Store,
    rows: impl Future<Output = Result<Vec<CampaignRow>, StoreError>>,
    now: DateTime<Utc>,
) -> Result<(Vec<CampaignRow>, Summary), StoreError> {
    let month = Month::of(now);
    // The month's total only (a few groups of the ledger), not its line per campaign.
    let (all, total, halts) =
        futures_util::try_join!(rows, month_total(store, month), store.halts())?;
    let mut s = summarize(&all, total.links_bought, &month.to_string(), now);
    // An operator's halt is shown even before any campaign is recorded, and before the
    // credentials' halt: only `resume` lifts it.
    if let Some(h) = halts.into_iter().find(|h| h.is_operator() && h.is_global()) {
        s.all_spending_stopped = Some(format!("all spending stopped: {}", h.describe()));
    }
    Ok((all, s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::recorded::Recorded;
    use crate::store::CampaignCaps;
    use crate::views::overview::FileFact;
    use linkrunner_domain::money::Money;

    fn status(name: &str, state: CampaignState, committed: i64, cap: i64) -> CampaignRow {
        let caps = CampaignCaps {
            account: "default".into(),
            name: name.into(),
            monthly_cap: Money::from_rubles(cap),
            daily_links: 1,
            total_links: 1,
        };
        let r = Recorded::unrecorded_with(&caps, Vec::new());
        let mut s = crate::views::report::status_from(name, &r, FileFact::Unknown);
        s.state = state;
        s.state_reason = Some(format!("{name} reason"));
        s.money.monthly_commitment = Money::from_rubles(committed);
        s.money.monthly_cap = Money::from_rubles(cap);
        CampaignRow::of(&s)
    }

    #[test]
    fn the_summary_adds_up_the_statuses_it_is_given() {
        let mut all: Vec<CampaignRow> = (0..25)
            .map(|i| {
                status(
                    &format!("w-{i:02}"),
                    CampaignState::WaitingForOperator,
                    10,
                    100,
                )
            })
            .collect();
        all.push(status("p", CampaignState::Paused, 5, 50));
        all.push(status("r", CampaignState::Running, 0, 0));
        let s = summarize(&all, 7, "2026-11", chrono::Utc::now());
        assert_eq!(s.campaigns, 27);
        assert_eq!(s.by_state["waiting_for_operator"], 25);
        assert_eq!(
            (
                s.by_state["paused"],
                s.by_state["running"],
                s.by_state["halted"]
            ),
            (1, 1, 0)
        );
        assert_eq!(s.by_state.len(), CampaignState::ALL.len());
        assert_eq!(s.money.monthly_commitment, Money::from_rubles(255));
        assert_eq!(s.money.monthly_cap, Money::from_rubles(2550));
        assert_eq!(
            (s.waiting_for_operator, s.waiting.len()),
            (25, WAITING_NAMED)
        );
        assert_eq!(s.waiting[0].reason, "w-00 reason");
        assert_eq!(s.links_bought_this_month, 7);
    }

    #[test]
    fn the_summary_adds_up_each_account_apart() {
        let mut all = vec![
            status("a1", CampaignState::WaitingForOperator, 10, 100),
            status("b1", CampaignState::Running, 20, 200),
            status("a2", CampaignState::Running, 30, 300),
        ];
        all[0].account = "client-a".into();
        all[1].account = "client-b".into();
        all[2].account = "client-a".into();
        let s = summarize(&all, 0, "2026-11", chrono::Utc::now());
        let got: Vec<(&str, usize, Money, Money, usize)> = s
            .accounts
            .iter()
            .map(|a| {
                let (c, cap) = (a.money.monthly_commitment, a.money.monthly_cap);
                (
                    a.account.as_str(),
                    a.campaigns,
                    c,
                    cap,
                    a.waiting_for_operator,
                )
            })
            .collect();
        let rub = Money::from_rubles;
        assert_eq!(
            got,
            [
                ("client-a", 2, rub(40), rub(400), 1),
                ("client-b", 1, rub(20), rub(200), 0),
            ]
        );
        let one = summarize(&all[..0], 0, "2026-11", chrono::Utc::now());
        assert_eq!(one.accounts.len(), 1, "always given: the default account's");
        assert_eq!(
            (one.accounts[0].account.as_str(), one.accounts[0].campaigns),
            ("default", 0)
        );
    }
}

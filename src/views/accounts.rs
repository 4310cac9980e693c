//! Campaigns by the marketplace account they spend in (issue 34: an agency bills per client).
//! One grouping for every surface that shows accounts: `status` (text), `plan`, the status
//! page's summary and `/api/v1/summary` ([`by_account`]); and one read of which account each
//! campaign spends in ([`Accounts`]: one query for every campaign, never one per campaign).

use std::collections::{BTreeMap, HashMap};

use crate::store::{Store, StoreError};
use linkrunner_domain::account::DEFAULT_ACCOUNT;

/// Each recorded campaign's account, as the journal has it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Accounts(HashMap<String, String>);

impl Accounts {
    /// Every recorded campaign's account, in one query.
    pub(crate) async fn read(store: &Store) -> Result<Accounts, StoreError> {
        let pairs = store.campaigns().campaign_accounts().await?;
        Ok(Accounts(pairs.into_iter().collect()))
    }

    /// The account `campaign` spends in: the default one when the journal does not say (a
    /// campaign it does not know, or one removed since).
    pub(crate) fn of(&self, campaign: &str) -> &str {
        self.0.get(campaign).map_or(DEFAULT_ACCOUNT, String::as_str)
    }
}

impl FromIterator<(String, String)> for Accounts {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Self {
        Accounts(pairs.into_iter().collect())
    }
}

/// `all` by the account `account_of` says each spends in: accounts in id order, each
/// account's items in the order given. No item gives one group, the default account's, so a
/// caller always has a group to show (`status` of an empty journal still prints the
/// account's cap). Not a rule: it lays items out, it decides nothing.
pub(crate) fn by_account<'a, 'k, T>(
    all: &'a [T],
    account_of: impl Fn(&'a T) -> &'k str,
) -> Vec<(String, Vec<&'a T>)> {
    let mut groups: BTreeMap<&'k str, Vec<&'a T>> = BTreeMap::new();
    for item in all {
        groups.entry(account_of(item)).or_default().push(item);
    }
    if groups.is_empty() {
        groups.insert(DEFAULT_ACCOUNT, Vec::new());
    }
    groups
        .into_iter()
        .map(|(a, v)| (a.to_string(), v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_grouped_by_their_campaigns_account() {
        let all = ["a2", "b1", "a1", "gone"];
        let accounts: Accounts = [
            ("a1".to_string(), "client-a".to_string()),
            ("a2".to_string(), "client-a".to_string()),
            ("b1".to_string(), "client-b".to_string()),
        ]
        .into_iter()
        .collect();
        let groups = by_account(&all, |s| accounts.of(s));
        let names: Vec<(String, Vec<&str>)> = groups
            .iter()
            .map(|(a, v)| (a.clone(), v.iter().map(|s| **s).collect()))
            .collect();
        assert_eq!(
            names,
            [
                ("client-a".to_string(), vec!["a2", "a1"]),
                ("client-b".to_string(), vec!["b1"]),
                ("default".to_string(), vec!["gone"]),
            ]
        );
        let none: [&str; 0] = [];
        let empty = by_account(&none, |s| accounts.of(s));
        assert_eq!(
            empty,
            [("default".to_string(), Vec::<&&str>::new())],
            "no item: one group, the default account's"
        );
    }
}

//! Natural keys and fingerprints of intents.
//!
//! A natural key names a side effect, not an attempt: the store keeps it unique, so the same
//! effect can never be started twice, even by two daemons on one database. A purchase is keyed
//! by the marketplace's ids, never by a name or a spelling a person edits ([`purchase`]).

use sha2::{Digest, Sha256};

pub(crate) fn create_project(campaign: &str) -> String {
    format!("create_project:{campaign}")
}

/// Keyed by the exact set of (url, text) pairs requested, so a retry of the same request
/// finds its earlier attempt, and a later addition is a new effect.
pub(crate) fn add_texts(campaign: &str, request_fingerprint: &str) -> String {
    format!("add_texts:{campaign}:{request_fingerprint}")
}

pub(crate) fn create_filter(campaign: &str, filter: &str) -> String {
    format!("create_filter:{campaign}:{filter}")
}

/// Keyed by the spec, so a changed spec can never be confused with the earlier creation, and
/// by the replacement generation (the creations of that name before it; none for the first),
/// so a spec changed back to an earlier one is a new creation, not the one already done.
pub(crate) fn create_autobuyer(
    campaign: &str,
    name: &str,
    spec_fingerprint: &str,
    generation: usize,
) -> String {
    match generation {
        0 => format!("create_autobuyer:{campaign}:{name}:{spec_fingerprint}"),
        g => format!("create_autobuyer:{campaign}:{name}:{spec_fingerprint}:r{g}"),
    }
}

/// Start and stop are keyed by the autobuyer id and a generation: the number of state
/// changes already recorded for it, so each transition is its own effect.
pub(crate) fn set_autobuyer(
    campaign: &str,
    autobuyer_id: i64,
    running: bool,
    generation: usize,
) -> String {
    let verb = if running { "start" } else { "stop" };
    format!("{verb}_autobuyer:{campaign}:{autobuyer_id}:{generation}")
}

/// A purchase is keyed by the marketplace's URL id and donor page id: a page is never bought
/// twice for one URL, whatever the anchor, and the key survives a rename of the campaign and a
/// respelling of the URL (a URL id belongs to one project, so it is unique across campaigns
/// too). Proved by `tests/it` `store::identity::*` on both backends. Journals keyed by
/// campaign, page and URL text before issue 32 are rewritten by the migration
/// `*_purchase_keys_by_ids.sql`.
///
/// Ids are the marketplace account's own (issue 34): two accounts, each maybe its own
/// marketplace, may both have a URL 11 and a page 7. So a purchase of any other account than
/// the default one names its account (`purchase:account:ID:url:…`), and two accounts never
/// meet on the journal's unique key, while within one account it still refuses a page bought
/// twice. The default account's keys are spelt as before issue 34, so no journal row is
/// rewritten. Account ids cannot hold `:` (`linkrunner_domain::account::valid_id`).
pub fn purchase(account: &str, url_id: i64, page_id: i64) -> String {
    if linkrunner_domain::account::is_default(account) {
        format!("purchase:url:{url_id}:page:{page_id}")
    } else {
        format!("purchase:account:{account}:url:{url_id}:page:{page_id}")
    }
}

/// SHA-256 of a value's canonical JSON (serde_json keeps map keys sorted), hex.
pub(crate) fn fingerprint<T: serde::Serialize>(value: &T) -> String {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    hex(&Sha256::digest(&bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_purchase_key_names_the_url_id_and_the_page_and_nothing_a_person_edits() {
        let key = |url_id, page_id| purchase("default", url_id, page_id);
        assert_eq!(key(11, 7), "purchase:url:11:page:7");
        assert_ne!(key(11, 7), key(12, 7), "another URL");
        assert_ne!(key(11, 7), key(11, 8), "another page");
    }

    #[test]
    fn a_purchase_key_of_another_account_names_it_and_the_default_keys_stay_as_they_were() {
        assert_eq!(
            purchase("client-7", 11, 7),
            "purchase:account:client-7:url:11:page:7"
        );
        assert_eq!(
            purchase(linkrunner_domain::account::DEFAULT_ACCOUNT, 11, 7),
            "purchase:url:11:page:7",
            "the default account's keys are the journal's rows of before accounts"
        );
        let keys = [
            purchase("default", 11, 7),
            purchase("a", 11, 7),
            purchase("b", 11, 7),
            purchase("a", 11, 8),
            purchase("a", 12, 7),
        ];
        let distinct: std::collections::BTreeSet<&String> = keys.iter().collect();
        assert_eq!(
            distinct.len(),
            keys.len(),
            "the same ids in two accounts: two keys"
        );
        assert_eq!(
            purchase("a", 11, 7),
            purchase("a", 11, 7),
            "one page of one account: one key"
        );
    }

    #[test]
    fn every_other_key_names_the_campaign_so_two_accounts_never_share_one() {
        // Campaign names are unique across the deployment, whatever the account: a key that
        // names the campaign cannot meet another account's, even where the ids coincide.
        for key in [
            create_project("shop"),
            add_texts("shop", "fp"),
            create_filter("shop", "f"),
            create_autobuyer("shop", "auto", "fp", 0),
            set_autobuyer("shop", 9, true, 0),
        ] {
            assert_eq!(key.split(':').nth(1), Some("shop"), "{key}");
        }
    }

    #[test]
    fn a_replacement_of_an_autobuyer_with_an_earlier_spec_has_a_key_of_its_own() {
        let first = create_autobuyer("c", "auto", "fpA", 0);
        assert_eq!(
            first, "create_autobuyer:c:auto:fpA",
            "unchanged for existing journals"
        );
        assert_ne!(create_autobuyer("c", "auto", "fpA", 2), first);
        assert_ne!(
            create_autobuyer("c", "auto", "fpA", 2),
            create_autobuyer("c", "auto", "fpA", 1)
        );
    }

    #[test]
    fn fingerprints_differ_when_the_request_differs() {
        let a = fingerprint(&serde_json::json!({"a": 1}));
        let b = fingerprint(&serde_json::json!({"a": 2}));
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        assert_eq!(a, fingerprint(&serde_json::json!({"a": 1})));
    }
}

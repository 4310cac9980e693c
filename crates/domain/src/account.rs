//! Marketplace accounts as linkrunner speaks of them (issue 34): a deployment may serve several
//! accounts (an agency's clients), each with its own credentials, rate limit and cap. An
//! account is named by an id spelt like a campaign name; a campaign that names none belongs to
//! [`DEFAULT_ACCOUNT`], the account the command line's marketplace flags describe, so a
//! deployment of one account never names one.

/// The account of every campaign that names none: the one `--base-url`, `--token-file` and
/// the other marketplace flags describe.
pub const DEFAULT_ACCOUNT: &str = "default";

/// Whether `id` is a valid account id: 1 to 63 lowercase letters, digits or `-`, starting
/// with a letter or digit (as campaign names; never `*` or `@`, which the journal's halt
/// scopes use).
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 63
        && !id.starts_with('-')
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Whether `id` names the default account.
pub fn is_default(id: &str) -> bool {
    id == DEFAULT_ACCOUNT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_ids_are_spelt_like_campaign_names() {
        for ok in ["default", "acme", "client-7", "a"] {
            assert!(valid_id(ok), "{ok}");
        }
        for bad in ["", "-a", "Acme", "a b", "*", "@x", &"a".repeat(64)] {
            assert!(!valid_id(bad), "{bad}");
        }
        assert!(is_default(DEFAULT_ACCOUNT));
        assert!(!is_default("acme"));
    }
}

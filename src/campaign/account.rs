//! The account file (`--account-file`): settings that bound every campaign together:
//! `monthly_cap`, the account-wide cap over the sum of every campaign's commitment, and
//! `approve_above`, the most a raise of it may add without a person (issue 33). Small, strict
//! (unknown keys are an error, with their position) and size-limited.
//!
//! ```yaml
//! monthly_cap: 50000   # RUB a month, for all campaign files together
//! approve_above: 5000  # a raise past the approved cap plus this waits for `resolve approve --account`
//! ```

use std::io::Read;
use std::path::Path;

use serde::Deserialize;

use super::parse::{error_message, error_pos, options};
use linkrunner_domain::money::Money;

/// Largest account file read, in bytes; a real one is a line or two.
pub(crate) const MAX_ACCOUNT_FILE_BYTES: u64 = 16 * 1024;

/// What an account file says.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AccountFile {
    /// RUB a month that every campaign's commitment together may reach.
    pub(crate) monthly_cap: Money,
    /// The most that raises of `monthly_cap` may add since the last approval without a
    /// person (cumulative); positive when set.
    #[serde(default)]
    pub(crate) approve_above: Option<Money>,
}

/// Reads and checks an account file; the error is `path:line:column: message`.
pub(crate) fn load_account_file(path: &Path) -> Result<AccountFile, String> {
    let shown = path.display();
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_ACCOUNT_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("{shown}: cannot read: {e}"))?;
    parse_account_file(&bytes).map_err(|e| format!("{shown}:{e}"))
}

/// Parses an account file's bytes; the error is `line:column: message`.
pub(crate) fn parse_account_file(bytes: &[u8]) -> Result<AccountFile, String> {
    if bytes.len() as u64 > MAX_ACCOUNT_FILE_BYTES {
        return Err(format!(
            "1:1: file is larger than {MAX_ACCOUNT_FILE_BYTES} bytes"
        ));
    }
    let text =
        std::str::from_utf8(bytes).map_err(|_| "1:1: file is not valid UTF-8".to_string())?;
    let file: AccountFile = serde_saphyr::from_str_with_options(text, options()).map_err(|e| {
        let pos = error_pos(&e);
        format!("{}:{}: {}", pos.line, pos.column, error_message(&e))
    })?;
    if file.monthly_cap.is_negative() {
        return Err("1:1: monthly_cap must not be negative".into());
    }
    if file.approve_above.is_some_and(|a| a <= Money::ZERO) {
        return Err("1:1: approve_above must be more than 0".into());
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_account_file_gives_its_monthly_cap_in_rubles() {
        let f = parse_account_file(b"# the account\nmonthly_cap: 50000\n").unwrap();
        assert_eq!(f.monthly_cap, Money::from_rubles(50_000));
    }

    #[test]
    fn an_unknown_key_is_refused_with_its_position() {
        let e = parse_account_file(b"monthly_cap: 10\nmonthly_cup: 5\n").unwrap_err();
        assert!(e.starts_with("2:"), "{e}");
        assert!(e.contains("monthly_cup"), "{e}");
    }

    #[test]
    fn an_account_file_may_set_a_positive_approval_threshold() {
        let f = parse_account_file(b"monthly_cap: 50000\napprove_above: 5000\n").unwrap();
        assert_eq!(f.approve_above, Some(Money::from_rubles(5_000)));
        assert_eq!(
            parse_account_file(b"monthly_cap: 1\n")
                .unwrap()
                .approve_above,
            None
        );
        let e = parse_account_file(b"monthly_cap: 10\napprove_above: 0\n").unwrap_err();
        assert!(e.contains("approve_above must be more than 0"), "{e}");
    }

    #[test]
    fn a_missing_or_negative_cap_is_refused() {
        assert!(parse_account_file(b"{}\n").is_err());
        assert!(parse_account_file(b"monthly_cap: -1\n").is_err());
    }
}

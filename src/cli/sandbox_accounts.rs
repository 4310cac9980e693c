//! `linkrunner sandbox --accounts-file FILE`: the accounts the sandbox serves beside the
//! default one (the account of `--token`, `--ticket`, `--balance` and `--sandbox-rate-limit`,
//! id `default`). A YAML list, strict (unknown keys are an error, with their position) and
//! size-limited; each account's token and ticket are read from files (a relative path is from
//! the accounts file's directory) and never printed. Extra accounts have fixed credentials:
//! the login (`--sandbox-login`) and issued tokens are the default account's.
//!
//! ```yaml
//! - id: client-a              # letters, digits, `.`, `_`, `-`; not `default`
//!   token_file: client-a.token
//!   ticket_file: client-a.ticket
//!   balance: 50000            # RUB; default 1000000
//!   rate_limit: 10            # requests a second; default: no limit
//! ```

use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use linkrunner_domain::money::Money;
use linkrunner_sandbox::{DEFAULT_ACCOUNT, SandboxAccount};

/// Largest accounts file read, in bytes: a few hundred accounts.
const MAX_ACCOUNTS_FILE_BYTES: u64 = 64 * 1024;
/// Largest token or ticket file read, in bytes.
const MAX_SECRET_FILE_BYTES: u64 = 16 * 1024;
/// Most accounts one sandbox serves.
const MAX_ACCOUNTS: usize = 1_000;
/// Longest account id, in characters.
const MAX_ID_CHARS: usize = 64;

/// One entry as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAccount {
    id: serde_saphyr::Spanned<String>,
    token_file: PathBuf,
    ticket_file: PathBuf,
    #[serde(default)]
    balance: Option<Money>,
    #[serde(default)]
    rate_limit: Option<u32>,
}

/// Reads and checks an accounts file and every account's token and ticket; the error is
/// `path:line:column: message`.
pub(crate) fn load_accounts_file(path: &Path) -> Result<Vec<SandboxAccount>, String> {
    let shown = path.display();
    let bytes = read_limited(path, MAX_ACCOUNTS_FILE_BYTES)
        .map_err(|e| format!("{shown}: cannot read: {e}"))?;
    let base = path.parent().unwrap_or(Path::new("."));
    parse_accounts_file(&bytes, base).map_err(|e| format!("{shown}:{e}"))
}

/// Parses an accounts file's bytes, reading secret files relative to `base`; the error is
/// `line:column: message`.
fn parse_accounts_file(bytes: &[u8], base: &Path) -> Result<Vec<SandboxAccount>, String> {
    if bytes.len() as u64 > MAX_ACCOUNTS_FILE_BYTES {
        return Err(format!(
            "1:1: file is larger than {MAX_ACCOUNTS_FILE_BYTES} bytes"
        ));
    }
    let text =
        std::str::from_utf8(bytes).map_err(|_| "1:1: file is not valid UTF-8".to_string())?;
    let budget = serde_saphyr::budget! {
        max_depth: 8,
        max_aliases: 0,
        max_documents: 1,
        max_reader_input_bytes: Some(MAX_ACCOUNTS_FILE_BYTES as usize),
    };
    let options = serde_saphyr::options! {
        budget: budget,
        strict_booleans: true,
        with_snippet: false,
    };
    let raw: Vec<RawAccount> = serde_saphyr::from_str_with_options(text, options).map_err(|e| {
        let (line, column) = e
            .location()
            .map_or((1, 1), |l| (l.line().max(1), l.column().max(1)));
        format!("{line}:{column}: {e}")
    })?;
    if raw.len() > MAX_ACCOUNTS {
        return Err(format!("1:1: more than {MAX_ACCOUNTS} accounts"));
    }
    let mut seen = std::collections::HashSet::new();
    raw.into_iter()
        .map(|r| {
            let at = format!("{}:{}", r.id.referenced.line(), r.id.referenced.column());
            if !seen.insert(r.id.value.clone()) {
                return Err(format!("{at}: account id `{}` is used twice", r.id.value));
            }
            account(r, base).map_err(|e| format!("{at}: {e}"))
        })
        .collect()
}

/// One entry, checked, with its secrets read.
fn account(r: RawAccount, base: &Path) -> Result<SandboxAccount, String> {
    let id = r.id.value;
    let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if id.is_empty() || id.chars().count() > MAX_ID_CHARS || !id.chars().all(valid) {
        return Err(format!(
            "account id `{id}` must be 1 to {MAX_ID_CHARS} letters, digits, `.`, `_` or `-`"
        ));
    }
    if id == DEFAULT_ACCOUNT {
        return Err(format!(
            "`{DEFAULT_ACCOUNT}` is the account of --token and --ticket; name this one otherwise"
        ));
    }
    let balance = r.balance.unwrap_or(Money::from_rubles(1_000_000));
    if balance.is_negative() || balance > Money::from_rubles(1_000_000_000) {
        return Err(format!(
            "account `{id}`: balance must be in 0..=1000000000 rubles"
        ));
    }
    if r.rate_limit.is_some_and(|l| !(1..=1_000_000).contains(&l)) {
        return Err(format!("account `{id}`: rate_limit must be in 1..=1000000"));
    }
    let token = secret(base, &r.token_file, &id, "token_file")?;
    let ticket = secret(base, &r.ticket_file, &id, "ticket_file")?;
    let mut account = SandboxAccount::new(id, token, ticket);
    account.balance = balance;
    account.rate_limit = r.rate_limit;
    Ok(account)
}

/// The trimmed content of a secret file (never shown in an error).
fn secret(base: &Path, file: &Path, id: &str, key: &str) -> Result<String, String> {
    let path = base.join(file);
    let bytes = read_limited(&path, MAX_SECRET_FILE_BYTES)
        .map_err(|e| format!("account `{id}`: cannot read {key} {}: {e}", path.display()))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("account `{id}`: {key} {} is not UTF-8", path.display()))?;
    let text = text.trim();
    if text.is_empty() || text.len() as u64 > MAX_SECRET_FILE_BYTES {
        return Err(format!(
            "account `{id}`: {key} {} is empty or larger than {MAX_SECRET_FILE_BYTES} bytes",
            path.display()
        ));
    }
    Ok(text.to_string())
}

/// Up to `limit + 1` bytes of `path`, so a larger file is seen as one without reading it all.
fn read_limited(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory with the secret files `a.token` and `a.ticket`.
    fn dir_with_secrets() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.token"), "tok-a\n").unwrap();
        std::fs::write(dir.path().join("a.ticket"), "tkt-a").unwrap();
        std::fs::write(dir.path().join("empty"), "  \n").unwrap();
        dir
    }

    const ONE: &str = "- id: client-a\n  token_file: a.token\n  ticket_file: a.ticket\n";

    #[test]
    fn an_account_gets_its_secrets_from_files_and_its_defaults() {
        let dir = dir_with_secrets();
        let text = format!("{ONE}  balance: 500.50\n  rate_limit: 7\n");
        let accounts = parse_accounts_file(text.as_bytes(), dir.path()).unwrap();
        assert_eq!(accounts.len(), 1);
        let mut expected = SandboxAccount::new("client-a", "tok-a", "tkt-a");
        expected.balance = Money::from_kopecks(50_050);
        expected.rate_limit = Some(7);
        assert_eq!(accounts[0], expected);
        let plain = parse_accounts_file(ONE.as_bytes(), dir.path()).unwrap();
        assert_eq!(plain[0], SandboxAccount::new("client-a", "tok-a", "tkt-a"));
    }

    #[test]
    fn an_unknown_key_is_refused_with_its_position() {
        let dir = dir_with_secrets();
        let text = format!("{ONE}  rate_limt: 5\n");
        let e = parse_accounts_file(text.as_bytes(), dir.path()).unwrap_err();
        assert!(e.starts_with("4:"), "{e}");
        assert!(e.contains("rate_limt"), "{e}");
    }

    #[test]
    fn bad_entries_are_refused_at_their_id() {
        let dir = dir_with_secrets();
        let cases = [
            (
                format!("{ONE}{ONE}"),
                "4:7: account id `client-a` is used twice",
            ),
            (
                ONE.replace("client-a", "default"),
                "1:7: `default` is the account",
            ),
            (
                ONE.replace("client-a", "a b"),
                "1:7: account id `a b` must be",
            ),
            (ONE.replace("a.token", "missing"), "cannot read token_file"),
            (ONE.replace("a.ticket", "empty"), "ticket_file"),
            (format!("{ONE}  rate_limit: 0\n"), "rate_limit must be in"),
            (format!("{ONE}  balance: -1\n"), "balance must be in"),
        ];
        for (text, wanted) in cases {
            let e = parse_accounts_file(text.as_bytes(), dir.path()).unwrap_err();
            assert!(e.contains(wanted), "{text}: {e}");
            assert!(
                !e.contains("tok-a") && !e.contains("tkt-a"),
                "a secret shown: {e}"
            );
        }
    }

    #[test]
    fn a_missing_key_or_a_file_too_large_is_refused() {
        let dir = dir_with_secrets();
        let e = parse_accounts_file(b"- id: x\n  token_file: a.token\n", dir.path()).unwrap_err();
        assert!(e.contains("ticket_file"), "{e}");
        let big = vec![b'#'; MAX_ACCOUNTS_FILE_BYTES as usize + 1];
        let e = parse_accounts_file(&big, dir.path()).unwrap_err();
        assert!(e.starts_with("1:1: file is larger"), "{e}");
    }

    #[test]
    fn the_file_is_read_from_disk_with_its_path_in_the_error() {
        let dir = dir_with_secrets();
        let path = dir.path().join("accounts.yaml");
        std::fs::write(&path, format!("{ONE}  colour: red\n")).unwrap();
        let e = load_accounts_file(&path).unwrap_err();
        assert!(e.starts_with(&format!("{}:4:", path.display())), "{e}");
    }
}

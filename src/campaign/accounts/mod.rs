//! The accounts file (`--account-file`, issue 34): the deployment's marketplace accounts and
//! each one's monthly cap. One YAML file, or a directory of them (one account each). Small,
//! strict (unknown keys are an error), size-limited; every problem is `path:line:column`.
//! Only the file's shape and values are checked here: secrets are never read (the command
//! line reads them where it builds each account's client), so nothing here can print one.
//!
//! | file | concern |
//! |---|---|
//! | `mod` | the model ([`AccountsFile`], [`AccountEntry`]) and loading a file or directory |
//! | `raw` | the file as written, with positions, and its checks |
//! | `tests` | (tests) both forms, the directory, every refusal with its position |
//!
//! May import: nothing.
//!
//! ```yaml
//! monthly_cap: 50000          # the default account (the command line's); optional
//! approve_above: 5000         # optional
//! accounts:
//!   - id: client-a
//!     base_url: https://market.example/api
//!     token_file: /run/secrets/client-a-token
//!     ticket_file: /run/secrets/client-a-ticket
//!     monthly_cap: 20000
//! ```

mod raw;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use super::diag::Diagnostic;
use super::model::LoadReport;
use super::span::Pos;
use linkrunner_domain::account::DEFAULT_ACCOUNT;
use linkrunner_domain::money::Money;

pub(crate) use raw::CapSetting;

/// Largest accounts file (or one file of an accounts directory) read, in bytes: hundreds of
/// accounts fit.
pub(crate) const MAX_ACCOUNTS_FILE_BYTES: u64 = 256 * 1024;
/// Most accounts one deployment may list (and most files read from an accounts directory).
pub(crate) const MAX_ACCOUNTS: usize = 1000;

/// What an accounts file (or directory) says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AccountsFile {
    /// The default account's caps: the command line's account.
    pub(crate) default: AccountCaps,
    /// Where the default account's `monthly_cap` was written, when it was.
    pub(crate) default_cap_at: Option<String>,
    /// The deployment's other accounts, in file order.
    pub(crate) accounts: Vec<AccountEntry>,
}

/// One account's caps. `monthly_cap` not given: the cap the journal holds for the account
/// stays as it is (as without `--account-monthly-cap`); `none` removes it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct AccountCaps {
    pub(crate) monthly_cap: Option<CapSetting>,
    /// The most raises of `monthly_cap` may add since the last approval without a person.
    pub(crate) approve_above: Option<Money>,
}

/// How an account's client gets its token and ticket: files the client re-reads when they
/// change, or the built-in login. Paths only: the secrets stay in their files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EntryCredentials {
    Files {
        token_file: PathBuf,
        ticket_file: PathBuf,
    },
    Login {
        login: String,
        api_key_file: PathBuf,
        login_path: Option<String>,
        auth_path: Option<String>,
    },
}

/// `auth_scheme`: as `--auth-scheme`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum EntryAuthScheme {
    Bearer,
    Raw,
}

/// `unpaged_link_list`: as `--unpaged-link-list`, what this account's marketplace's link list
/// shows when its answer carries no paging fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum EntryUnpaged {
    Complete,
    Partial,
}

/// One account of the file: its id, how to reach it and its caps. Limits not given are the
/// command line's (`--rate-limit`, `--max-concurrency`, the timeouts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AccountEntry {
    pub(crate) id: String,
    pub(crate) base_url: String,
    pub(crate) credentials: EntryCredentials,
    pub(crate) auth_scheme: Option<EntryAuthScheme>,
    /// As `--field-map`: `documented name = the marketplace's`, in key order.
    pub(crate) field_map: Option<String>,
    /// As `--unpaged-link-list`; not given: the flag's.
    pub(crate) unpaged_link_list: Option<EntryUnpaged>,
    pub(crate) rate_limit: Option<u32>,
    pub(crate) max_in_flight: Option<usize>,
    pub(crate) request_timeout_seconds: Option<u64>,
    pub(crate) connect_timeout_seconds: Option<u64>,
    pub(crate) caps: AccountCaps,
    /// The file it was read from and where each key was written: [`AccountEntry::at`].
    path: PathBuf,
    positions: BTreeMap<&'static str, Pos>,
}

impl AccountEntry {
    /// `path:line:column` of `key` in the entry (of the entry itself when the key was not
    /// written), for a problem found where the entry is used (its client's settings).
    pub(crate) fn at(&self, key: &str) -> String {
        let pos = self
            .positions
            .get(key)
            .or_else(|| self.positions.get("id"))
            .copied()
            .unwrap_or(Pos::FILE);
        format!("{}:{}:{}", self.path.display(), pos.line, pos.column)
    }
}

impl AccountsFile {
    /// Every account id the deployment serves: `default` and each entry's.
    pub(crate) fn ids(&self) -> BTreeSet<String> {
        std::iter::once(DEFAULT_ACCOUNT.to_string())
            .chain(self.accounts.iter().map(|a| a.id.clone()))
            .collect()
    }
}

/// Reads an accounts file or directory. Every problem found, each `path:line:column: error:
/// message`; the file's secrets are not read.
pub(crate) fn load_accounts(path: &Path) -> Result<AccountsFile, Vec<Diagnostic>> {
    let meta = std::fs::metadata(path).map_err(|e| cannot_read(path, &e))?;
    if meta.is_dir() {
        return load_dir(path);
    }
    let bytes = read_limited(path)?;
    let mut problems = Vec::new();
    let file = raw::parse_file(path, &bytes, &mut problems);
    problems.sort();
    match problems.is_empty() {
        true => Ok(file),
        false => Err(problems),
    }
}

/// The directory form: each `*.yaml` / `*.yml` (dot-files skipped) one entry; one without an
/// `id` (or named `default.yaml`) the default account's caps.
fn load_dir(dir: &Path) -> Result<AccountsFile, Vec<Diagnostic>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| cannot_read(dir, &e))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| is_yaml_name(p) && p.is_file())
        .collect();
    files.sort();
    if files.len() > MAX_ACCOUNTS {
        let msg = format!("holds {} files, more than {MAX_ACCOUNTS}", files.len());
        return Err(vec![Diagnostic::new(dir, Pos::FILE, msg)]);
    }
    let mut problems = Vec::new();
    let mut out = AccountsFile::default();
    for file in &files {
        match read_limited(file) {
            Ok(bytes) => raw::parse_dir_entry(file, &bytes, &mut out, &mut problems),
            Err(mut d) => problems.append(&mut d),
        }
    }
    raw::check_unique(&out.accounts, &mut problems);
    problems.sort();
    match problems.is_empty() {
        true => Ok(out),
        false => Err(problems),
    }
}

fn is_yaml_name(p: &Path) -> bool {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    !name.starts_with('.') && (name.ends_with(".yaml") || name.ends_with(".yml"))
}

fn read_limited(path: &Path) -> Result<Vec<u8>, Vec<Diagnostic>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_ACCOUNTS_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| cannot_read(path, &e))?;
    if bytes.len() as u64 > MAX_ACCOUNTS_FILE_BYTES {
        let msg = format!("file is larger than {MAX_ACCOUNTS_FILE_BYTES} bytes");
        return Err(vec![Diagnostic::new(path, Pos::FILE, msg)]);
    }
    Ok(bytes)
}

fn cannot_read(path: &Path, e: &std::io::Error) -> Vec<Diagnostic> {
    vec![Diagnostic::new(
        path,
        Pos::FILE,
        format!("cannot read: {e}"),
    )]
}

/// Takes every campaign whose `account` is not one of `known` out of `report`: its file
/// gets a problem at its `account` key, and its campaign is held as recorded (an invalid
/// file, never a removal), so nothing is bought for an account the deployment does not
/// serve. Without an accounts file `known` is only `default`.
pub(crate) fn reject_unknown_accounts(report: &mut LoadReport, known: &BTreeSet<String>) {
    let (kept, unknown): (Vec<_>, Vec<_>) = std::mem::take(&mut report.campaigns)
        .into_iter()
        .partition(|lc| known.contains(&lc.campaign.account));
    report.campaigns = kept;
    for lc in unknown {
        let listed = known.iter().cloned().collect::<Vec<_>>().join(", ");
        let msg = format!(
            "`account` `{}` is not an account of this deployment (the accounts file, --account-file, lists: {listed})",
            lc.campaign.account
        );
        report
            .problems
            .push(Diagnostic::new(&lc.path, lc.account_pos, msg));
        report
            .invalid
            .push(&lc.path, Some(lc.campaign.name.clone()));
    }
}

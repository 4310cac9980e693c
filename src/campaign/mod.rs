//! `campaign/`: the YAML model, parsing with positions, semantic validation, JSON Schema,
//! loading a directory. Knows nothing about HTTP or SQL.
//!
//! | file | concern |
//! |---|---|
//! | `model` | the validated [`Campaign`] the engine consumes, [`LoadReport`] |
//! | `raw`, `extra`, `span` | the file as written, with a position on every value |
//! | `parse` | bytes → raw: size, UTF-8, YAML limits, positioned parser errors |
//! | `validate`, `spend`, `autobuyers`, `rules`, `keys` | checks of meaning, all problems at once |
//! | `adoption` | `project_id`, `url_id`, `text_id`, `unknown_link_rent`, autobuyer `id` (issue 24) |
//! | `fence` | across files: one owner per project, autobuyer and domain |
//! | `checks` | limits and positioned checks those share (a leaf: it imports none of them) |
//! | `loading/` | where files come from: a directory or files ([`LoadReport`]), a git revision (`plan --base`), the commit checked out; [`InvalidFiles`], the files that did not load |
//! | `diag` | [`Diagnostic`]: `path:line:column: error: message` |
//! | `schema` | the JSON Schema (draft-07) |
//! | `accounts/` | the accounts file or directory (`--account-file`): the deployment's accounts and their caps; campaigns naming an account it does not list |
//! | `tests`, `adoption_tests` | (tests) one rule per test through `parse` + `validate`; adoption and the fence |
//!
//! May import: nothing.

mod accounts;
mod adoption;
#[cfg(test)]
mod adoption_tests;
mod autobuyers;
mod checks;
mod diag;
mod extra;
pub(crate) mod fence;
mod keys;
mod loading;
mod model;
mod parse;
mod raw;
mod rules;
mod schema;
mod span;
mod spend;
#[cfg(test)]
mod tests;
mod validate;

pub(crate) use accounts::{
    AccountCaps, AccountEntry, AccountsFile, CapSetting, EntryAuthScheme, EntryCredentials,
    EntryUnpaged, load_accounts, reject_unknown_accounts,
};
pub(crate) use diag::Diagnostic;
pub use loading::invalid::{InvalidFile, InvalidFiles, file_key};
pub use loading::load::{MAX_FILES, load_bytes, load_dir, load_paths};
pub(crate) use loading::revision::load_at_revision;
pub use model::{
    Autobuyer, AutobuyerState, AutobuyerUrl, Budget, BuyRounds, Campaign, DonorOrder, Filter,
    LoadReport, LoadedCampaign, Pacing, PromotedUrl, SearchSettings,
};
pub use parse::MAX_FILE_BYTES;
pub use rules::{check_name, parse_schedule};
pub use schema::schema_json;

/// Fuzzing entry point: `bytes` as a campaign file through parsing and validation, the
/// problems rendered as the loader renders them. Must never panic, whatever the bytes.
#[doc(hidden)]
pub fn fuzz_parse(bytes: &[u8]) -> usize {
    let path = std::path::Path::new("fuzz.yaml");
    let problems = match parse::parse(bytes) {
        Ok(raw) => match validate::validate(&raw) {
            Ok(_) => return 0,
            Err(p) => p,
        },
        Err(p) => p,
    };
    problems
        .into_diagnostics(path)
        .iter()
        .map(|d| d.to_string().len())
        .sum()
}

//! The accounts file as written: serde's view with a position on every value, and the checks
//! of meaning that turn it into [`AccountsFile`] (ids, credentials, limits, caps), each
//! problem at its key's `line:column`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};

use super::{
    AccountCaps, AccountEntry, AccountsFile, EntryAuthScheme, EntryCredentials, EntryUnpaged,
};
use crate::campaign::diag::Diagnostic;
use crate::campaign::parse::{error_message, error_pos, options};
use crate::campaign::span::{At, Pos};
use linkrunner_domain::account::{DEFAULT_ACCOUNT, valid_id};
use linkrunner_domain::money::Money;

/// `monthly_cap`: rubles, or `none` to remove the account's cap (as `--account-monthly-cap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CapSetting {
    Remove,
    Cap(Money),
}

impl<'de> Deserialize<'de> for CapSetting {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = CapSetting;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an amount of rubles such as 50000, or `none`")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<CapSetting, E> {
                rubles(&v.to_string())
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<CapSetting, E> {
                rubles(&v.to_string())
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<CapSetting, E> {
                rubles(&v.to_string())
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<CapSetting, E> {
                match v.trim().eq_ignore_ascii_case("none") {
                    true => Ok(CapSetting::Remove),
                    false => rubles(v),
                }
            }
        }
        d.deserialize_any(V)
    }
}

fn rubles<E: serde::de::Error>(text: &str) -> Result<CapSetting, E> {
    Money::parse_rubles(text.trim())
        .map(CapSetting::Cap)
        .map_err(E::custom)
}

/// The single-file form: the default account's caps and the list of the others.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    monthly_cap: Option<At<CapSetting>>,
    #[serde(default)]
    approve_above: Option<At<Money>>,
    #[serde(default)]
    accounts: Option<At<Vec<At<RawEntry>>>>,
}

/// One account as written (an item of `accounts`, or one file of the directory form).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    #[serde(default)]
    id: Option<At<String>>,
    #[serde(default)]
    base_url: Option<At<String>>,
    #[serde(default)]
    token_file: Option<At<PathBuf>>,
    #[serde(default)]
    ticket_file: Option<At<PathBuf>>,
    #[serde(default)]
    login: Option<At<String>>,
    #[serde(default)]
    api_key_file: Option<At<PathBuf>>,
    #[serde(default)]
    login_path: Option<At<String>>,
    #[serde(default)]
    auth_path: Option<At<String>>,
    #[serde(default)]
    auth_scheme: Option<At<EntryAuthScheme>>,
    #[serde(default)]
    field_map: Option<At<BTreeMap<String, String>>>,
    #[serde(default)]
    unpaged_link_list: Option<At<EntryUnpaged>>,
    #[serde(default)]
    rate_limit: Option<At<u32>>,
    #[serde(default)]
    max_in_flight: Option<At<usize>>,
    #[serde(default)]
    request_timeout_seconds: Option<At<u64>>,
    #[serde(default)]
    connect_timeout_seconds: Option<At<u64>>,
    #[serde(default)]
    monthly_cap: Option<At<CapSetting>>,
    #[serde(default)]
    approve_above: Option<At<Money>>,
}

/// Problems of one file, with its path.
struct Found<'a> {
    path: &'a Path,
    problems: &'a mut Vec<Diagnostic>,
}

impl Found<'_> {
    fn at(&mut self, pos: Pos, msg: impl Into<String>) {
        self.problems.push(Diagnostic::new(self.path, pos, msg));
    }
}

/// Parses YAML into `T`, or records the parser's problem at its position.
fn yaml<T: for<'de> Deserialize<'de>>(bytes: &[u8], f: &mut Found) -> Option<T> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        f.at(Pos::FILE, "file is not valid UTF-8");
        return None;
    };
    serde_saphyr::from_str_with_options(text, options())
        .map_err(|e| f.at(error_pos(&e), error_message(&e)))
        .ok()
}

/// The single-file form. A file with only `monthly_cap` / `approve_above` is the form of
/// issues 24 and 33: the default account's caps, read as before.
pub(super) fn parse_file(
    path: &Path,
    bytes: &[u8],
    problems: &mut Vec<Diagnostic>,
) -> AccountsFile {
    let mut f = Found { path, problems };
    let Some(raw) = yaml::<RawFile>(bytes, &mut f) else {
        return AccountsFile::default();
    };
    let mut out = AccountsFile {
        default: caps(raw.monthly_cap.as_ref(), raw.approve_above.as_ref(), &mut f),
        default_cap_at: raw.monthly_cap.as_ref().map(|c| where_(path, c.pos)),
        accounts: Vec::new(),
    };
    if raw.monthly_cap.is_none() && raw.approve_above.is_some() {
        f.at(
            raw.approve_above.as_ref().map_or(Pos::FILE, |a| a.pos),
            "`approve_above` needs the `monthly_cap` it bounds the raises of",
        );
    }
    let entries = raw.accounts.map(|a| a.value).unwrap_or_default();
    if raw.monthly_cap.is_none() && entries.is_empty() {
        f.at(
            Pos::FILE,
            "the file sets neither `monthly_cap` (the default account's cap) nor `accounts`",
        );
    }
    if entries.len() > super::MAX_ACCOUNTS {
        f.at(
            Pos::FILE,
            format!("lists more than {} accounts", super::MAX_ACCOUNTS),
        );
        return out;
    }
    for e in entries {
        if let Some(entry) = entry(e.value, e.pos, &mut f) {
            out.accounts.push(entry);
        }
    }
    check_unique(&out.accounts, f.problems);
    out
}

/// One file of the directory form: an account (with `id`), or the default account's caps
/// (no `id`, or the file `default.yaml` / `default.yml`).
pub(super) fn parse_dir_entry(
    path: &Path,
    bytes: &[u8],
    out: &mut AccountsFile,
    problems: &mut Vec<Diagnostic>,
) {
    let mut f = Found { path, problems };
    let Some(raw) = yaml::<RawEntry>(bytes, &mut f) else {
        return;
    };
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    if raw.id.is_some() && stem != DEFAULT_ACCOUNT {
        if let Some(entry) = entry(raw, Pos::FILE, &mut f) {
            out.accounts.push(entry);
        }
        return;
    }
    default_entry(raw, out, &mut f);
}

/// A file of the directory form that describes the default account: only its caps.
fn default_entry(raw: RawEntry, out: &mut AccountsFile, f: &mut Found) {
    if let Some(at) = out
        .default_cap_at
        .as_ref()
        .filter(|_| raw.monthly_cap.is_some())
    {
        let msg = format!("the default account's caps are already given at {at}");
        f.at(Pos::FILE, msg);
        return;
    }
    let mut written = positions(&raw, Pos::FILE);
    if raw.id.is_none() {
        written.remove("id");
    }
    for (key, pos) in written {
        f.at(pos, format!("`{key}`: this file describes the default account (no `id`, or named default.yaml), whose marketplace settings are the command line's; only `monthly_cap` and `approve_above` go here"));
    }
    out.default = caps(raw.monthly_cap.as_ref(), raw.approve_above.as_ref(), f);
    out.default_cap_at = raw.monthly_cap.as_ref().map(|c| where_(f.path, c.pos));
}

fn where_(path: &Path, pos: Pos) -> String {
    format!("{}:{}:{}", path.display(), pos.line, pos.column)
}

/// `monthly_cap` and `approve_above`, checked.
fn caps(cap: Option<&At<CapSetting>>, above: Option<&At<Money>>, f: &mut Found) -> AccountCaps {
    if let Some(At {
        value: CapSetting::Cap(m),
        pos,
    }) = cap
        && m.is_negative()
    {
        f.at(*pos, "`monthly_cap` must not be negative");
    }
    if let Some(a) = above.filter(|a| a.value <= Money::ZERO) {
        f.at(a.pos, "`approve_above` must be more than 0");
    }
    AccountCaps {
        monthly_cap: cap.map(|c| c.value),
        approve_above: above.map(|a| a.value),
    }
}

/// One account's entry, checked; `None` (with its problems recorded) when it cannot be used.
fn entry(raw: RawEntry, at: Pos, f: &mut Found) -> Option<AccountEntry> {
    let before = f.problems.len();
    let id = entry_id(raw.id.as_ref(), at, f);
    let base_url = match &raw.base_url {
        Some(u) if !u.value.trim().is_empty() => u.value.trim().to_string(),
        Some(u) => {
            f.at(u.pos, "`base_url` is empty");
            String::new()
        }
        None => {
            f.at(
                at_or(raw.id.as_ref(), at),
                format!("account `{id}` has no `base_url`"),
            );
            String::new()
        }
    };
    let credentials = credentials(&raw, at_or(raw.id.as_ref(), at), f);
    limits(&raw, f);
    let caps = caps(raw.monthly_cap.as_ref(), raw.approve_above.as_ref(), f);
    if raw.monthly_cap.is_none()
        && let Some(a) = &raw.approve_above
    {
        f.at(
            a.pos,
            "`approve_above` needs the `monthly_cap` it bounds the raises of",
        );
    }
    if f.problems.len() > before {
        return None;
    }
    Some(AccountEntry {
        id,
        base_url,
        credentials: credentials?,
        auth_scheme: raw.auth_scheme.as_ref().map(|a| a.value),
        field_map: raw.field_map.as_ref().map(|m| field_map_text(&m.value)),
        unpaged_link_list: raw.unpaged_link_list.as_ref().map(|a| a.value),
        rate_limit: raw.rate_limit.as_ref().map(|a| a.value),
        max_in_flight: raw.max_in_flight.as_ref().map(|a| a.value),
        request_timeout_seconds: raw.request_timeout_seconds.as_ref().map(|a| a.value),
        connect_timeout_seconds: raw.connect_timeout_seconds.as_ref().map(|a| a.value),
        caps,
        path: f.path.to_path_buf(),
        positions: positions(&raw, at),
    })
}

fn at_or<T>(v: Option<&At<T>>, at: Pos) -> Pos {
    v.map_or(at, |v| v.pos)
}

fn entry_id(id: Option<&At<String>>, at: Pos, f: &mut Found) -> String {
    let Some(id) = id else {
        f.at(
            at,
            "an account of `accounts` needs an `id` (what campaigns name with `account:`)",
        );
        return String::new();
    };
    if id.value == DEFAULT_ACCOUNT {
        f.at(id.pos, "`default` is the command line's account: give the default account's caps at the top of the file (or in default.yaml), and other accounts other ids");
    } else if !valid_id(&id.value) {
        let msg = format!(
            "`id` `{}` must be 1 to 63 lowercase letters, digits or `-`, starting with a letter or digit",
            linkrunner_domain::shown::line(&id.value)
        );
        f.at(id.pos, msg);
    }
    id.value.clone()
}

/// Token and ticket files, or the login and its API key file: one of the two, whole.
fn credentials(raw: &RawEntry, at: Pos, f: &mut Found) -> Option<EntryCredentials> {
    let files = (raw.token_file.as_ref(), raw.ticket_file.as_ref());
    match (&raw.login, &raw.api_key_file, files) {
        (None, None, (Some(t), Some(k))) => Some(EntryCredentials::Files {
            token_file: t.value.clone(),
            ticket_file: k.value.clone(),
        }),
        (Some(l), Some(k), (None, None)) if !l.value.trim().is_empty() => {
            Some(EntryCredentials::Login {
                login: l.value.trim().to_string(),
                api_key_file: k.value.clone(),
                login_path: login_path(raw.login_path.as_ref(), f),
                auth_path: login_path(raw.auth_path.as_ref(), f),
            })
        }
        (Some(l), _, (Some(_), _) | (_, Some(_))) => {
            f.at(l.pos, "`login` obtains the token and the ticket itself: drop `token_file` and `ticket_file`, or drop `login`");
            None
        }
        (Some(l), _, _) => {
            f.at(
                l.pos,
                "`login` needs a non-empty account name and `api_key_file`",
            );
            None
        }
        _ => {
            f.at(
                at,
                "credentials: give `token_file` and `ticket_file`, or `login` and `api_key_file`",
            );
            None
        }
    }
}

fn login_path(path: Option<&At<String>>, f: &mut Found) -> Option<String> {
    let p = path?;
    if !p.value.starts_with('/') {
        f.at(
            p.pos,
            format!(
                "must start with `/` (e.g. /login), not `{}`",
                linkrunner_domain::shown::line(&p.value)
            ),
        );
    }
    Some(p.value.clone())
}

/// The limits, in the ranges of their flags.
fn limits(raw: &RawEntry, f: &mut Found) {
    let mut check = |v: Option<(u64, Pos)>, key: &str, lo: u64, hi: u64| {
        if let Some((v, pos)) = v.filter(|(v, _)| !(lo..=hi).contains(v)) {
            f.at(pos, format!("`{key}` {v} is not from {lo} to {hi}"));
        }
    };
    let num = |v: &Option<At<u64>>| v.as_ref().map(|a| (a.value, a.pos));
    check(
        raw.rate_limit.as_ref().map(|a| (u64::from(a.value), a.pos)),
        "rate_limit",
        1,
        10_000,
    );
    check(
        raw.max_in_flight.as_ref().map(|a| (a.value as u64, a.pos)),
        "max_in_flight",
        1,
        1024,
    );
    check(
        num(&raw.request_timeout_seconds),
        "request_timeout_seconds",
        1,
        3600,
    );
    check(
        num(&raw.connect_timeout_seconds),
        "connect_timeout_seconds",
        1,
        600,
    );
}

/// `field_map` as `--field-map` spells it: `a=b,c=d`.
fn field_map_text(map: &BTreeMap<String, String>) -> String {
    map.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Where each key of the entry was written (the entry's own place for `id` when it has
/// none), so a problem found later, where its client is built, points at its key.
fn positions(raw: &RawEntry, at: Pos) -> BTreeMap<&'static str, Pos> {
    let keys = [
        ("id", raw.id.as_ref().map(|a| a.pos).or(Some(at))),
        ("base_url", raw.base_url.as_ref().map(|a| a.pos)),
        ("token_file", raw.token_file.as_ref().map(|a| a.pos)),
        ("ticket_file", raw.ticket_file.as_ref().map(|a| a.pos)),
        ("login", raw.login.as_ref().map(|a| a.pos)),
        ("api_key_file", raw.api_key_file.as_ref().map(|a| a.pos)),
        ("login_path", raw.login_path.as_ref().map(|a| a.pos)),
        ("auth_path", raw.auth_path.as_ref().map(|a| a.pos)),
        ("auth_scheme", raw.auth_scheme.as_ref().map(|a| a.pos)),
        ("field_map", raw.field_map.as_ref().map(|a| a.pos)),
        (
            "unpaged_link_list",
            raw.unpaged_link_list.as_ref().map(|a| a.pos),
        ),
        ("rate_limit", raw.rate_limit.as_ref().map(|a| a.pos)),
        ("max_in_flight", raw.max_in_flight.as_ref().map(|a| a.pos)),
        (
            "request_timeout_seconds",
            raw.request_timeout_seconds.as_ref().map(|a| a.pos),
        ),
        (
            "connect_timeout_seconds",
            raw.connect_timeout_seconds.as_ref().map(|a| a.pos),
        ),
    ];
    keys.into_iter()
        .filter_map(|(k, p)| p.map(|p| (k, p)))
        .collect()
}

/// Each id once: a second entry of an id is a problem at its `id`.
pub(super) fn check_unique(accounts: &[AccountEntry], problems: &mut Vec<Diagnostic>) {
    let mut seen: BTreeMap<&str, String> = BTreeMap::new();
    for a in accounts {
        if let Some(first) = seen.get(a.id.as_str()) {
            let msg = format!("account `{}` is listed twice (first at {first})", a.id);
            let pos = a.positions.get("id").copied().unwrap_or(Pos::FILE);
            problems.push(Diagnostic::new(&a.path, pos, msg));
        } else {
            seen.insert(&a.id, a.at("id"));
        }
    }
}

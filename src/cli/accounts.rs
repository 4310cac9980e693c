//! The accounts file on the command line (`--account-file`, issue 34): reading it, building
//! each of its accounts' [`ClientConfig`] the way [`super::api`] builds the default one (same
//! checks: https unless loopback or `--allow-insecure-http`; the flags' limits as defaults),
//! the account ids campaigns may name, and recording every account's cap in the journal.
//! Secrets are read only to check them (as for the default account) and never shown: errors
//! name the file and key.

use std::collections::BTreeSet;
use std::num::NonZeroU32;
use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use chrono::{DateTime, Utc};

use super::api::ApiArgs;
use super::secrets;
use crate::app::AccountSettings;
use crate::campaign::{
    self, AccountCaps, AccountEntry, AccountsFile, CapSetting, EntryAuthScheme, EntryCredentials,
    EntryUnpaged,
};
use crate::decide::listing::UnpagedList;
use crate::market::{
    AuthScheme, ClientConfig, CredentialSource, Credentials, FieldMap, LoginSettings,
};
use crate::store::Store;
use linkrunner_domain::account::DEFAULT_ACCOUNT;
use linkrunner_domain::money::Money;

/// Reads `--account-file` when given; every problem of it in the error, one per line.
pub(crate) fn load(path: Option<&Path>) -> anyhow::Result<Option<AccountsFile>> {
    let Some(path) = path else {
        return Ok(None);
    };
    campaign::load_accounts(path).map(Some).map_err(|problems| {
        let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
        anyhow::anyhow!(
            "the accounts file (--account-file / LINKRUNNER_ACCOUNT_FILE) is not valid:\n{}",
            linkrunner_domain::shown::block(&lines.join("\n"))
        )
    })
}

/// The accounts campaigns may name: `default`, and each of the file's.
pub(crate) fn known_ids(file: Option<&AccountsFile>) -> BTreeSet<String> {
    file.map_or_else(
        || BTreeSet::from([DEFAULT_ACCOUNT.to_string()]),
        AccountsFile::ids,
    )
}

/// Every account of the file with its client's settings, for [`crate::app::AppSettings`].
pub(crate) fn settings(api: &ApiArgs, file: &AccountsFile) -> anyhow::Result<Vec<AccountSettings>> {
    file.accounts
        .iter()
        .map(|e| {
            Ok(AccountSettings {
                id: e.id.clone(),
                market: client_config(api, e)?,
                unpaged_list: e.unpaged_link_list.map(|u| match u {
                    EntryUnpaged::Complete => UnpagedList::Complete,
                    EntryUnpaged::Partial => UnpagedList::Partial,
                }),
            })
        })
        .collect()
}

/// The client settings of `account` (`import`, `probe`): the command line's for `None` or
/// `default`, else those of the accounts file's entry of that id.
pub(crate) fn client_config_of(
    g: &super::global::GlobalArgs,
    account: Option<&str>,
) -> anyhow::Result<ClientConfig> {
    let Some(id) = account.filter(|id| *id != DEFAULT_ACCOUNT) else {
        return g.api.client_config().context("marketplace client settings");
    };
    let file = load(g.account_file.as_deref())?.with_context(|| {
        format!("--account {id}: the accounts file (--account-file) that lists it is not given")
    })?;
    let entry = file.accounts.iter().find(|e| e.id == id).with_context(|| {
        format!(
            "--account {}: the accounts file lists no such account",
            linkrunner_domain::shown::line(id)
        )
    })?;
    client_config(&g.api, entry)
}

/// One account's client settings: its base URL, credentials, scheme and field map, and the
/// command line's limits where it sets none.
fn client_config(api: &ApiArgs, e: &AccountEntry) -> anyhow::Result<ClientConfig> {
    let mut config = ClientConfig::new(&e.base_url, credentials(e)?)
        .with_context(|| format!("{}: `base_url` of account {}", e.at("base_url"), e.id))?;
    config.auth_scheme = match e.auth_scheme {
        Some(EntryAuthScheme::Raw) => AuthScheme::Raw,
        Some(EntryAuthScheme::Bearer) | None => api.auth_scheme(),
    };
    if let Some(map) = &e.field_map {
        config.field_map = FieldMap::parse(map)
            .with_context(|| format!("{}: `field_map` of account {}", e.at("field_map"), e.id))?;
    } else {
        config.field_map = api.field_map()?;
    }
    api.apply_limits(&mut config)?;
    if let Some(rate) = e.rate_limit.and_then(NonZeroU32::new) {
        config.rate_limit = rate;
        // Requests in flight follow the account's own rate unless the flag fixes them.
        config.max_concurrency = api
            .max_concurrency()
            .unwrap_or_else(|| ClientConfig::auto_concurrency(rate));
    }
    if let Some(n) = e.max_in_flight {
        config.max_concurrency = n;
    }
    if let Some(s) = e.request_timeout_seconds {
        config.request_timeout = Duration::from_secs(s);
    }
    if let Some(s) = e.connect_timeout_seconds {
        config.connect_timeout = Duration::from_secs(s);
    }
    config
        .validate()
        .with_context(|| format!("{}: the client settings of account {}", e.at("id"), e.id))?;
    Ok(config)
}

/// The entry's credentials, each file read once to fail the start early (the client
/// re-reads them when they change).
fn credentials(e: &AccountEntry) -> anyhow::Result<CredentialSource> {
    let file = |src: &secrets::Source, path: &Path, key: &str| {
        let origin = format!("{} (`{key}` of account {})", e.at(key), e.id);
        secrets::in_file(src, path, &origin)
    };
    match &e.credentials {
        EntryCredentials::Files {
            token_file,
            ticket_file,
        } => {
            let token = file(&secrets::TOKEN, token_file, "token_file")?;
            let ticket = file(&secrets::TICKET, ticket_file, "ticket_file")?;
            Credentials::new(token.read()?, ticket.read()?).with_context(|| {
                format!(
                    "{}: the credentials of account {}",
                    e.at("token_file"),
                    e.id
                )
            })?;
            Ok(CredentialSource::Given { token, ticket })
        }
        EntryCredentials::Login {
            login,
            api_key_file,
            login_path,
            auth_path,
        } => {
            let key = file(&secrets::API_KEY, api_key_file, "api_key_file")?;
            let mut settings = LoginSettings::new(login.clone(), key);
            if let Some(p) = login_path {
                settings.login_path = p.clone();
            }
            if let Some(p) = auth_path {
                settings.auth_path = p.clone();
            }
            Ok(CredentialSource::Login(settings))
        }
    }
}

/// Records every account's cap these settings give in the journal, where every daemon's
/// reservations check it: `--account-monthly-cap` or the file's top `monthly_cap` for the
/// default account, each entry's `monthly_cap` for its account. An account whose cap is
/// given nowhere keeps what the journal holds (a daemon started without it never loosens a
/// cap another one set).
pub(crate) async fn apply_caps(
    store: &Store,
    flag: Option<CapSetting>,
    file: Option<(&Path, &AccountsFile)>,
    now: DateTime<Utc>,
) -> anyhow::Result<()> {
    let from_file = file.map(|(_, f)| f.default).unwrap_or_default();
    let default = default_cap(flag, file)?;
    if let Some((cap, source)) = default {
        apply_one(
            store,
            DEFAULT_ACCOUNT,
            cap,
            from_file.approve_above,
            &source,
            now,
        )
        .await?;
    }
    let shown = file
        .map(|(p, _)| p.display().to_string())
        .unwrap_or_default();
    for e in file.map(|(_, f)| f.accounts.as_slice()).unwrap_or_default() {
        if e.caps.monthly_cap.is_some() {
            apply_one(
                store,
                &e.id,
                cap_of(e.caps),
                e.caps.approve_above,
                &shown,
                now,
            )
            .await?;
        }
    }
    Ok(())
}

/// The default account's cap and where it was given: `--account-monthly-cap` or the file's
/// top `monthly_cap` (both: refused, a start must not guess which one the operator meant);
/// `None` when neither gives it.
fn default_cap(
    flag: Option<CapSetting>,
    file: Option<(&Path, &AccountsFile)>,
) -> anyhow::Result<Option<(Option<Money>, String)>> {
    let flag_name = || "--account-monthly-cap".to_string();
    let from_file = file.map(|(_, f)| f.default).unwrap_or_default();
    Ok(match (flag, from_file.monthly_cap, file) {
        (Some(_), Some(_), Some((_, f))) => anyhow::bail!(
            "--account-monthly-cap and the accounts file's `monthly_cap` ({}) both set the default account's cap: keep one",
            f.default_cap_at.clone().unwrap_or_default()
        ),
        (Some(CapSetting::Remove), _, _) => Some((None, flag_name())),
        (Some(CapSetting::Cap(m)), _, _) => Some((Some(m), flag_name())),
        (None, Some(_), Some((path, _))) => Some((cap_of(from_file), path.display().to_string())),
        (None, _, _) => None,
    })
}

/// The cap `caps` gives (`None`: removed).
fn cap_of(caps: AccountCaps) -> Option<Money> {
    match caps.monthly_cap {
        Some(CapSetting::Cap(m)) => Some(m),
        Some(CapSetting::Remove) | None => None,
    }
}

async fn apply_one(
    store: &Store,
    account: &str,
    cap: Option<Money>,
    above: Option<Money>,
    source: &str,
    now: DateTime<Utc>,
) -> anyhow::Result<()> {
    let above = above.filter(|_| cap.is_some());
    let set = store
        .campaigns()
        .set_account_cap_approving(account, cap, above, source, now)
        .await
        .with_context(|| format!("recording the cap of account {account}"))?;
    let approve = match account {
        DEFAULT_ACCOUNT => "--account".to_string(),
        id => format!("--account {id}"),
    };
    match (set.recorded, set.waiting) {
        (Some(cap), Some(asked)) => tracing::warn!(
            account, cap_rub = %cap, asked_rub = %asked, source = %source,
            "account monthly cap raised past what is approved: spending of account {account} stays within {cap} RUB until `linkrunner resolve approve {approve} --reason …` approves {asked} RUB"
        ),
        (Some(cap), None) => {
            tracing::info!(account, cap_rub = %cap, source = %source, "account monthly cap set")
        }
        (None, _) => tracing::info!(account, source = %source, "account monthly cap removed"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with_cap(rub: i64) -> AccountsFile {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.yaml");
        std::fs::write(&path, format!("monthly_cap: {rub}\n")).unwrap();
        campaign::load_accounts(&path).unwrap()
    }

    #[test]
    fn the_default_cap_comes_from_the_flag_or_the_file_never_both() {
        let path = Path::new("/etc/accounts.yaml");
        let file = file_with_cap(500);
        let flag = Some(CapSetting::Cap(Money::from_rubles(700)));

        let both = default_cap(flag, Some((path, &file))).unwrap_err();
        let from_file = default_cap(None, Some((path, &file))).unwrap();
        let from_flag = default_cap(flag, None).unwrap();
        let removed = default_cap(Some(CapSetting::Remove), None).unwrap();

        assert!(both.to_string().contains("keep one"), "{both}");
        assert_eq!(
            from_file,
            Some((Some(Money::from_rubles(500)), path.display().to_string()))
        );
        assert_eq!(
            from_flag,
            Some((
                Some(Money::from_rubles(700)),
                "--account-monthly-cap".into()
            ))
        );
        assert_eq!(removed, Some((None, "--account-monthly-cap".into())));
        assert_eq!(default_cap(None, None).unwrap(), None);
    }
}

//! What several commands share: the engine's flags (`once`, `run`), `--format`, opening the
//! journal and loading the campaign directory.

use std::sync::Arc;

use anyhow::Context;

use clap::{Args, ValueEnum};

use super::global::GlobalArgs;
use super::ranges;
use crate::app::{AppSettings, Journal};
use crate::campaign::{self, LoadReport};
use crate::effects::{EngineSettings, UnpagedList};
use crate::metrics::Metrics;
use crate::store::Store;
use linkrunner_domain::money::Money;

/// `--format` of `plan`, `once` and `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub(crate) enum Format {
    #[default]
    Text,
    Json,
}

/// Engine tunables, shared by `once` and `run`.
#[derive(Debug, Clone, Args)]
pub(crate) struct EngineArgs {
    /// Seconds a donor search may stay pending before the round gives up on it.
    #[arg(long, env = "LINKRUNNER_SEARCH_DEADLINE", default_value_t = 900, value_parser = ranges::u64_in(1..=ranges::DAY_SECS))]
    search_deadline: u64,
    /// Milliseconds before the first poll of a search result (doubled after each pending answer, at most the job's age).
    #[arg(long, env = "LINKRUNNER_POLL_INITIAL_MS", default_value_t = 2000, value_parser = ranges::u64_in(1..=ranges::HOUR_MS))]
    poll_initial_ms: u64,
    /// Upper bound of the poll interval, in milliseconds.
    #[arg(long, env = "LINKRUNNER_POLL_MAX_MS", default_value_t = 30000, value_parser = ranges::u64_in(1..=ranges::HOUR_MS))]
    poll_max_ms: u64,
    /// Seconds after an uncertain purchase before its absence from the link list means "not bought".
    #[arg(long, env = "LINKRUNNER_SETTLE_GRACE", default_value_t = 120, value_parser = ranges::u64_in(0..=ranges::DAY_SECS))]
    settle_grace: u64,
    /// Seconds a campaign lease lasts without renewal (below 5 counts as 5).
    #[arg(long, env = "LINKRUNNER_LEASE_TTL", default_value_t = 120, value_parser = ranges::u64_in(1..=ranges::DAY_SECS))]
    lease_ttl: u64,
    /// Campaigns working at once (a campaign waiting for a search result lends its slot out).
    /// Default: twice the marketplace requests allowed in flight, so campaigns never limit
    /// the load below `--rate-limit`.
    #[arg(long, env = "LINKRUNNER_CAMPAIGN_CONCURRENCY", value_parser = ranges::usize_in(1..=1024))]
    campaign_concurrency: Option<usize>,
    /// What a link list answer without paging fields shows: `complete` (every link, once it
    /// shows every link the journal holds) or `partial` (maybe a first page: its absences prove
    /// nothing, and uncertain purchases and stopped autobuyers wait for an operator).
    #[arg(
        long,
        env = "LINKRUNNER_UNPAGED_LINK_LIST",
        value_enum,
        default_value = "complete"
    )]
    unpaged_link_list: UnpagedListArg,
    /// The default account's monthly cap in RUB: the commitment of every campaign of the
    /// default account together stays under it, checked in the transaction of each
    /// reservation on the shared journal. `none` removes it. Not given (nor the accounts
    /// file's top `monthly_cap`): the cap the journal holds stays as it is.
    #[arg(long, env = "LINKRUNNER_ACCOUNT_MONTHLY_CAP")]
    account_monthly_cap: Option<AccountCapArg>,
    /// Hold removals when more than this share (0 to 1) of the campaigns vanish within
    /// --removal-window (always when every file is gone): nothing of them is stopped until
    /// the files return or `linkrunner resolve removals`.
    #[arg(long, env = "LINKRUNNER_REMOVAL_HOLD_SHARE", default_value_t = 0.5, value_parser = ranges::probability)]
    removal_hold_share: f64,
    /// Seconds within which campaign files that vanish count together for
    /// --removal-hold-share, so removals spread over several reloads do not dodge it.
    #[arg(long, env = "LINKRUNNER_REMOVAL_WINDOW", default_value_t = 600, value_parser = ranges::u64_in(0..=ranges::DAY_SECS))]
    removal_window: u64,
    /// Plan and record every reconciliation in full, even of a converged campaign whose file,
    /// journal and link list are as its last full pass saw them (by default such a
    /// reconciliation only reads the list and records that it saw it: docs/sizing.md).
    #[arg(long, env = "LINKRUNNER_FULL_RECONCILIATIONS")]
    full_reconciliations: bool,
}

impl EngineArgs {
    /// `--removal-hold-share` and `--removal-window`.
    pub(crate) fn removal_rule(&self) -> crate::decide::removal::RemovalRule {
        crate::decide::removal::RemovalRule {
            share: self.removal_hold_share,
            window: std::time::Duration::from_secs(self.removal_window),
        }
    }
}

/// `--account-monthly-cap`: RUB, or `none` to remove the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AccountCapArg {
    Remove,
    Cap(Money),
}

impl std::str::FromStr for AccountCapArg {
    type Err = String;

    fn from_str(s: &str) -> Result<AccountCapArg, String> {
        if s.trim().eq_ignore_ascii_case("none") {
            return Ok(AccountCapArg::Remove);
        }
        let m = Money::parse_rubles(s.trim())
            .map_err(|e| format!("expected RUB (e.g. 50000) or `none`: {e}"))?;
        if m.is_negative() {
            return Err("the account cap must not be negative".into());
        }
        Ok(AccountCapArg::Cap(m))
    }
}

/// `--unpaged-link-list` (mapped onto [`UnpagedList`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum UnpagedListArg {
    Complete,
    Partial,
}

impl EngineArgs {
    pub(crate) fn settings(&self) -> EngineSettings {
        EngineSettings {
            lease_ttl: chrono::Duration::seconds(secs(self.lease_ttl.max(5))),
            search_deadline: chrono::Duration::seconds(secs(self.search_deadline)),
            poll_initial: std::time::Duration::from_millis(self.poll_initial_ms),
            poll_max: std::time::Duration::from_millis(self.poll_max_ms.max(self.poll_initial_ms)),
            settle_grace: chrono::Duration::seconds(secs(self.settle_grace)),
            max_attempts: 3,
            campaign_concurrency: self.campaign_concurrency.map_or(0, |n| n.max(1)),
            unpaged_list: match self.unpaged_link_list {
                UnpagedListArg::Complete => UnpagedList::Complete,
                UnpagedListArg::Partial => UnpagedList::Partial,
            },
            // Accounts with their own (`unpaged_link_list` in the accounts file): `App::build`.
            unpaged_list_of: Default::default(),
            removals: self.removal_rule(),
            quiet_looks: !self.full_reconciliations,
        }
    }
}

impl EngineArgs {
    /// Records every account's cap `--account-monthly-cap` and the accounts file give in the
    /// journal, where every daemon's reservations check it; an account whose cap neither
    /// gives keeps what the journal holds (a daemon started without the flag never loosens a
    /// cap another one set).
    pub(crate) async fn apply_account_cap(
        &self,
        g: &GlobalArgs,
        store: &Store,
        now: chrono::DateTime<chrono::Utc>,
    ) -> anyhow::Result<()> {
        let path = g.account_file.as_deref();
        let file = super::accounts::load(path)?;
        let file = path.zip(file.as_ref());
        let flag = self.account_monthly_cap.map(|a| match a {
            AccountCapArg::Remove => campaign::CapSetting::Remove,
            AccountCapArg::Cap(m) => campaign::CapSetting::Cap(m),
        });
        super::accounts::apply_caps(store, flag, file, now).await
    }
}

/// Seconds as chrono takes them. The flags' ranges keep them far below the limit; a value
/// past it (a library caller's) is held at one day, never wrapped into a negative.
fn secs(s: u64) -> i64 {
    i64::try_from(s.min(ranges::DAY_SECS)).unwrap_or(86_400)
}

/// Prints text a view laid out: its lines and tabs kept, and every other control character,
/// escape sequence or BIDI override (from the marketplace, a file) written as a visible
/// escape ([`linkrunner_domain::shown::block`]).
pub(crate) fn print_text(text: &str) {
    print!("{}", linkrunner_domain::shown::block(text));
}

/// Prints `value` as pretty JSON, with what serde_json leaves raw but a terminal would act
/// on (DEL, C1 controls, BIDI overrides) escaped as `\uXXXX` ([`crate::telemetry::json_safe`]).
pub(crate) fn print_json<T: serde::Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    println!("{}", crate::telemetry::json_safe(&text));
    Ok(())
}

/// The journal of `--database-url`, migrated (`plan`, `status`, `resolve`, `migrate`).
pub(crate) async fn open_store(g: &GlobalArgs) -> anyhow::Result<Store> {
    crate::app::open_journal(g.database_url(), &Arc::new(Metrics::new())).await
}

/// The journal of `--database-url` for a command that only reads (`plan`, `status`,
/// `history`, `explain`, `report`): never migrated, and an SQLite file that does not exist is
/// not created. `None` when nothing was ever recorded there (no file, no schema); an older
/// or newer schema is an error that names the command that upgrades it.
pub(crate) async fn open_store_to_read(g: &GlobalArgs) -> anyhow::Result<Option<Store>> {
    use crate::store::SchemaState;
    use anyhow::Context;
    let url = g.database_url();
    if Store::sqlite_file_of(url).is_some_and(|f| !f.exists()) {
        return Ok(None);
    }
    let store = Store::connect(url)
        .await
        .context("opening the journal database")?;
    let state = store
        .schema_state()
        .await
        .context("reading the journal's schema version")?;
    match state {
        SchemaState::Current => Ok(Some(store)),
        SchemaState::Empty => Ok(None),
        SchemaState::Behind { missing } => anyhow::bail!(
            "the journal's schema is older than this linkrunner ({missing} migration(s) not applied); \
             this command only reads and does not upgrade it: run `linkrunner migrate` (or `once` / `run`, which upgrade it at start)"
        ),
        SchemaState::Ahead { unknown } => anyhow::bail!(
            "the journal's schema is newer than this linkrunner ({unknown} migration(s) it does not know): \
             use the linkrunner version that wrote it"
        ),
    }
}

/// [`open_store_to_read`], where a journal with nothing recorded is an error too.
pub(crate) async fn open_store_recorded(g: &GlobalArgs) -> anyhow::Result<Store> {
    open_store_to_read(g).await?.ok_or_else(|| {
        anyhow::anyhow!(
            "nothing was ever recorded in this journal (no schema yet): `linkrunner once` or `run` creates it, `linkrunner migrate` alone too"
        )
    })
}

/// The settings of a command that spends (`once`, `run`): the journal named by the global
/// flags, the marketplace client and the engine's flags.
pub(crate) fn spending_settings(
    g: &GlobalArgs,
    engine: &EngineArgs,
) -> anyhow::Result<AppSettings> {
    let market = g
        .api
        .client_config()
        .context("marketplace client settings")?;
    let mut settings = AppSettings::new(Journal::Url(g.database_url().to_string()), market);
    settings.engine = engine.settings();
    if let Some(file) = super::accounts::load(g.account_file.as_deref())? {
        settings.accounts = super::accounts::settings(&g.api, &file)?;
    }
    Ok(settings)
}

/// The campaign directory; every problem is printed on stderr. A campaign that names an
/// account the accounts file does not list (without the file: any but `default`) is refused
/// at its `account` key and held as recorded, so `plan` and `once` never spend for it.
pub(crate) fn load_campaigns(g: &GlobalArgs) -> anyhow::Result<LoadReport> {
    let accounts = super::accounts::load(g.account_file.as_deref())?;
    let mut report = campaign::load_dir(&g.campaigns);
    campaign::reject_unknown_accounts(&mut report, &super::accounts::known_ids(accounts.as_ref()));
    for p in &report.problems {
        eprintln!("{}", linkrunner_domain::shown::block(&p.to_string()));
    }
    Ok(report)
}

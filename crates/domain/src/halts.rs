//! Spending halts as linkrunner speaks of them: while a halt is set (e.g. the marketplace
//! rejected our credentials, or an operator ran `linkrunner halt`), nothing is bought. The
//! journal keeps them (`store/guards/halts.rs`). A halt's [`HaltKind`] says what lifts it,
//! its [`HaltScope`] what it stops: every account, one marketplace account, or one campaign.

use chrono::{DateTime, Utc};

/// What a halt stops.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum HaltScope {
    /// Every campaign of every account: an operator halted all spending
    /// ([`HaltKind::Operator`]), or the anomaly brake tripped on the sum of every campaign.
    Global,
    /// Every campaign of one marketplace account: that account's credentials are rejected
    /// (automatic), or an operator halted it (`linkrunner halt --account ID`). The other
    /// accounts keep buying.
    Account(String),
    /// One campaign: something of it waits for an operator.
    Campaign(String),
}

impl HaltScope {
    /// The global scope's key in the `halts` table: `*`, which no campaign name can be (names
    /// are `[a-z0-9][a-z0-9-]*`), so a campaign named `global` has a scope of its own.
    /// Proven by `tests/it/store` `a_campaign_named_global_does_not_share_the_credentials_halt`.
    pub(crate) const GLOBAL_KEY: &'static str = "*";

    /// What an account's key starts with: `@ID`, which no campaign name can start with, so
    /// an account and a campaign of one spelling never share a halt.
    const ACCOUNT_PREFIX: char = '@';

    pub fn campaign(name: &str) -> HaltScope {
        HaltScope::Campaign(name.to_string())
    }

    pub fn account(id: &str) -> HaltScope {
        HaltScope::Account(id.to_string())
    }

    /// Whether a halt of this scope stops `campaign`, which spends in `account`.
    pub fn covers(&self, campaign: &str, account: &str) -> bool {
        match self {
            HaltScope::Global => true,
            HaltScope::Account(a) => a == account,
            HaltScope::Campaign(c) => c == campaign,
        }
    }

    /// Whether it stops more than one campaign: every account's, or one account's.
    pub fn is_wide(&self) -> bool {
        !matches!(self, HaltScope::Campaign(_))
    }

    /// Its key in the journal's `halts` table: `*`, `@ID` or the campaign's name.
    pub fn key(&self) -> String {
        match self {
            HaltScope::Global => Self::GLOBAL_KEY.to_string(),
            HaltScope::Account(a) => format!("{}{a}", Self::ACCOUNT_PREFIX),
            HaltScope::Campaign(c) => c.clone(),
        }
    }

    pub fn from_key(key: String) -> HaltScope {
        if key == Self::GLOBAL_KEY {
            return HaltScope::Global;
        }
        match key.strip_prefix(Self::ACCOUNT_PREFIX) {
            Some(account) => HaltScope::Account(account.to_string()),
            None => HaltScope::Campaign(key),
        }
    }

    /// How people read it: `every account`, `account ID`, `campaign NAME`.
    pub fn describe(&self) -> String {
        match self {
            HaltScope::Global => "every account".to_string(),
            HaltScope::Account(a) => format!("account {a}"),
            HaltScope::Campaign(c) => format!("campaign {c}"),
        }
    }

    /// What a wide halt of this scope does, as its campaigns' reports begin: `all spending
    /// stopped`, or `all spending of account ID stopped`.
    pub fn stopped(&self) -> String {
        match self {
            HaltScope::Account(a) => format!("all spending of account {a} stopped"),
            _ => "all spending stopped".to_string(),
        }
    }

    /// The `linkrunner resume` flags that lift an operator's halt of this scope.
    pub fn resume_flags(&self) -> String {
        match self {
            HaltScope::Global => String::new(),
            HaltScope::Account(a) => format!(" --account {a}"),
            HaltScope::Campaign(c) => format!(" --campaign {c}"),
        }
    }
}

/// What lifts a halt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HaltKind {
    /// Set by linkrunner for a cause it watches, and lifted with it: credentials accepted
    /// again, or nothing of the campaign waiting for an operator any more (`resolve`).
    #[default]
    Automatic,
    /// An operator's `linkrunner halt`: kept in a table of its own that only
    /// `linkrunner resume` clears, so no recovery lifts it by itself.
    Operator,
}

/// One halt in force.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Halt {
    pub scope: HaltScope,
    pub reason: String,
    /// When it was first set; updating the reason keeps it.
    pub since: DateTime<Utc>,
    #[serde(default)]
    pub kind: HaltKind,
    /// Who set an operator's halt (`--by`); `None` for an automatic one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

impl Halt {
    /// An automatic halt: an account's credentials rejected (account) or an operator awaited
    /// (campaign).
    pub fn automatic(scope: HaltScope, reason: &str, since: DateTime<Utc>) -> Halt {
        Halt {
            scope,
            reason: reason.to_string(),
            since,
            kind: HaltKind::Automatic,
            by: None,
        }
    }

    pub fn is_global(&self) -> bool {
        self.scope == HaltScope::Global
    }

    /// Whether it stops more than one campaign ([`HaltScope::is_wide`]): every account's or
    /// one account's, as against a campaign's own halt.
    pub fn is_wide(&self) -> bool {
        self.scope.is_wide()
    }

    /// A credentials halt: an account's (or, in a journal written before accounts, every
    /// account's) and automatic, so a read that works again lifts it.
    pub fn is_credentials(&self) -> bool {
        self.is_wide() && self.kind == HaltKind::Automatic
    }

    /// An operator's halt: only `linkrunner resume` lifts it, and it stops running
    /// autobuyers too.
    pub fn is_operator(&self) -> bool {
        self.kind == HaltKind::Operator
    }

    /// Its reason as people read it: an operator's halt says who and what lifts it.
    pub fn describe(&self) -> String {
        match (&self.kind, &self.by) {
            (HaltKind::Operator, Some(by)) => format!(
                "halted by {by} at {}: {} (`linkrunner resume{}` lifts it)",
                self.since.format("%Y-%m-%d %H:%M:%S UTC"),
                self.reason,
                self.scope.resume_flags()
            ),
            _ => self.reason.clone(),
        }
    }
}

/// One press of the stop button, kept for history: who halted or resumed, when, why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HaltEvent {
    /// `halt` or `resume`.
    pub action: String,
    pub scope: HaltScope,
    pub by: String,
    pub reason: String,
    pub at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_scope_round_trips_through_its_journal_key() {
        for scope in [
            HaltScope::Global,
            HaltScope::account("acme"),
            HaltScope::account("default"),
            HaltScope::campaign("acme"),
            HaltScope::campaign("global"),
        ] {
            assert_eq!(HaltScope::from_key(scope.key()), scope, "{scope:?}");
        }
        assert_eq!(HaltScope::account("acme").key(), "@acme");
        assert_eq!(HaltScope::Global.key(), "*");
        // An account and a campaign of one spelling are two scopes, two keys.
        assert_ne!(
            HaltScope::account("acme").key(),
            HaltScope::campaign("acme").key()
        );
    }

    #[test]
    fn an_account_halt_covers_that_accounts_campaigns_only() {
        let a = HaltScope::account("a");
        assert!(a.covers("shoes", "a"));
        assert!(!a.covers("shoes", "b"));
        // A campaign named like the account is not the account.
        assert!(!a.covers("a", "b"));
        assert!(HaltScope::Global.covers("shoes", "b"));
        assert!(HaltScope::campaign("shoes").covers("shoes", "b"));
        assert!(!HaltScope::campaign("shoes").covers("boots", "b"));
    }

    #[test]
    fn account_halts_are_wide_and_lifted_by_their_own_resume() {
        let now = chrono::Utc::now();
        let auto = Halt::automatic(HaltScope::account("b"), "credentials rejected", now);
        assert!(auto.is_wide() && auto.is_credentials() && !auto.is_global());
        let own = Halt::automatic(HaltScope::campaign("b"), "waiting", now);
        assert!(!own.is_wide() && !own.is_credentials());
        let operator = Halt {
            kind: HaltKind::Operator,
            by: Some("ops".into()),
            ..Halt::automatic(HaltScope::account("b"), "audit", now)
        };
        assert!(!operator.is_credentials());
        assert!(
            operator
                .describe()
                .contains("linkrunner resume --account b"),
            "{}",
            operator.describe()
        );
        assert_eq!(HaltScope::account("b").describe(), "account b");
    }
}

//! Spending halts as linkrunner speaks of them: while a halt is set (e.g. the marketplace
//! rejected our credentials), nothing is bought. The journal keeps them (`store/halts.rs`).

use chrono::{DateTime, Utc};

/// What a halt stops.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum HaltScope {
    /// Every campaign: the marketplace rejected our credentials.
    Global,
    /// One campaign: something of it waits for an operator.
    Campaign(String),
}

impl HaltScope {
    /// The global scope's key in the `halts` table: `*`, which no campaign name can be (names
    /// are `[a-z0-9][a-z0-9-]*`), so a campaign named `global` has a scope of its own.
    /// Proven by `tests/it/store` `a_campaign_named_global_does_not_share_the_credentials_halt`.
    pub const GLOBAL_KEY: &'static str = "*";

    pub fn campaign(name: &str) -> HaltScope {
        HaltScope::Campaign(name.to_string())
    }

    /// Whether a halt of this scope stops `campaign`.
    pub fn covers(&self, campaign: &str) -> bool {
        match self {
            HaltScope::Global => true,
            HaltScope::Campaign(c) => c == campaign,
        }
    }

    /// Its key in the journal's `halts` table.
    pub fn key(&self) -> &str {
        match self {
            HaltScope::Global => Self::GLOBAL_KEY,
            HaltScope::Campaign(c) => c,
        }
    }

    pub fn from_key(key: String) -> HaltScope {
        if key == Self::GLOBAL_KEY {
            HaltScope::Global
        } else {
            HaltScope::Campaign(key)
        }
    }
}

/// One halt in force.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Halt {
    pub scope: HaltScope,
    pub reason: String,
    /// When it was first set; updating the reason keeps it.
    pub since: DateTime<Utc>,
}

impl Halt {
    pub fn is_global(&self) -> bool {
        self.scope == HaltScope::Global
    }
}

//! Spending halts as linkrunner speaks of them: while a halt is set (e.g. the marketplace
//! rejected our credentials, or an operator ran `linkrunner halt`), nothing is bought. The
//! journal keeps them (`store/guards/halts.rs`). A halt's [`HaltKind`] says what lifts it.

use chrono::{DateTime, Utc};

/// What a halt stops.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum HaltScope {
    /// Every campaign: the marketplace rejected our credentials, or an operator halted all
    /// spending ([`HaltKind::Operator`]).
    Global,
    /// One campaign: something of it waits for an operator.
    Campaign(String),
}

impl HaltScope {
    /// The global scope's key in the `halts` table: `*`, which no campaign name can be (names
    /// are `[a-z0-9][a-z0-9-]*`), so a campaign named `global` has a scope of its own.
    /// Proven by `tests/it/store` `a_campaign_named_global_does_not_share_the_credentials_halt`.
    pub(crate) const GLOBAL_KEY: &'static str = "*";

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
    /// An automatic halt: credentials rejected (global) or an operator awaited (campaign).
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

    /// The credentials halt: global and automatic, so a read that works again lifts it.
    pub fn is_credentials(&self) -> bool {
        self.is_global() && self.kind == HaltKind::Automatic
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
                match &self.scope {
                    HaltScope::Global => String::new(),
                    HaltScope::Campaign(c) => format!(" --campaign {c}"),
                }
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

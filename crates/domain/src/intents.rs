//! The vocabulary of intents (the journal records them; the engine decides and runs them): what the engine records before a changing call
//! ([`NewIntent`], [`Reservation`]), what it learns after ([`Outcome`], [`Effect`],
//! [`Resolution`]) and what it reads back ([`IntentRow`], [`BeginOutcome`]).

use chrono::{DateTime, NaiveDate, Utc};

use crate::market::{CreatedUrl, ProjectIds};
use crate::money::Money;

/// The database id of an intent.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct IntentId(pub i64);

impl std::fmt::Display for IntentId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// One attempt of an intent: the intent and its `attempts` count when that attempt was
/// recorded. Only the attempt that sent a call may record its outcome (`complete_intent`
/// checks the count in its own transaction), so a holder that froze past its lease cannot
/// write onto an attempt another holder re-armed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct AttemptRef {
    pub intent: IntentId,
    pub attempt: u32,
}

impl std::fmt::Display for AttemptRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (attempt {})", self.intent, self.attempt)
    }
}

/// A closed set of names with one stored text each (also its metrics label and its word in
/// status output); the journal keeps its own sets with it too.
#[macro_export]
#[doc(hidden)]
macro_rules! text_enum {
    ($(#[$m:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The stored value, also used as a metrics label and in status output.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
            pub fn parse(text: &str) -> Option<$name> {
                match text { $($text => Some($name::$variant),)+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        /// As its stored text (`/api/v1/state`, JSON output).
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                $name::parse(&text).ok_or_else(|| {
                    serde::de::Error::custom(format!("unknown {} `{text}`", stringify!($name)))
                })
            }
        }
    };
}
pub use crate::text_enum;

text_enum!(
    /// What a changing call does; one per marketplace operation that changes something.
    IntentKind {
        CreateProject => "create_project",
        AddTexts => "add_texts",
        CreateFilter => "create_filter",
        CreateAutobuyer => "create_autobuyer",
        StartAutobuyer => "start_autobuyer",
        StopAutobuyer => "stop_autobuyer",
        Purchase => "purchase",
    }
);

text_enum!(
    /// `in_flight`: recorded, the call may be under way. `uncertain`: the call may have
    /// executed and nobody knows; its reservation counts as spent until settled.
    IntentState {
        InFlight => "in_flight",
        Succeeded => "succeeded",
        Failed => "failed",
        Uncertain => "uncertain",
    }
);

text_enum!(
    /// Which cap refused a reservation; `account`: the account-wide cap over every
    /// campaign's commitment (`--account-monthly-cap`).
    CapKind {
        Monthly => "monthly",
        Daily => "daily",
        Total => "total",
        Account => "account",
    }
);

/// Money and links set aside for an intent, in the transaction that records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    pub amount: Money,
    /// Links counted against `total_links` and the day's `daily_links`; 0 for an autobuyer's budget.
    pub links: u32,
    /// The day whose `daily_links` the links count against.
    pub day: NaiveDate,
}

/// An intent to record before its call is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct NewIntent {
    pub campaign: String,
    pub kind: IntentKind,
    /// Unique across the journal; chosen by the engine (e.g. `purchase:url:{url_id}:page:{page_id}`).
    pub natural_key: String,
    /// sha256 of the request, to notice a changed request under the same key.
    pub fingerprint: String,
    /// The request, already redacted. `resolve_intent` reads `name`, `spec_fingerprint`,
    /// `running`, `page_id`/`pageId`, `url_id`/`urlId`, `text_id`/`textId` from its top level.
    pub request: serde_json::Value,
    pub reserve: Option<Reservation>,
}

/// What `begin_intents` did. Only `Started` wrote anything.
#[derive(Debug, Clone, PartialEq)]
pub enum BeginOutcome {
    /// Every intent of the batch is recorded and reserved, attempts in batch order.
    Started(Vec<AttemptRef>),
    /// The first intent whose natural key is already journaled and not `failed`.
    Exists(Box<IntentRow>),
    /// A cap would be passed; `needed` and `headroom` are kopecks for `Monthly` and `Account`,
    /// links otherwise.
    CapExceeded {
        campaign: String,
        cap: CapKind,
        needed: i64,
        headroom: i64,
    },
    /// The caller's lease is no longer current: another process owns the campaign.
    Fenced,
}

/// How a call ended, as far as the engine knows.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Succeeded(Effect),
    /// Definitely not executed: its reservation is released.
    Failed {
        error: String,
    },
    /// May have executed: its reservation stays counted as spent.
    Uncertain {
        error: String,
    },
    /// May have executed and cannot be checked, but a later call decides the outcome (an
    /// autobuyer switch: the next switch sets the state the file wants). The intent is closed
    /// as failed, and instead of being released its reservation goes where `effect` says.
    Indeterminate {
        error: String,
        effect: Effect,
    },
}

/// What a successful call created or changed, recorded with the intent's success.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    None,
    ProjectCreated(ProjectIds),
    TextsAdded(Vec<CreatedUrl>),
    FilterCreated {
        name: String,
        id: i64,
    },
    /// Running: the intent's reservation becomes the autobuyer's; stopped: it is released.
    AutobuyerCreated {
        name: String,
        id: i64,
        running: bool,
        spec_fingerprint: String,
        monthly_budget: Money,
    },
    /// A confirmed start keeps the budget its intent reserved; a confirmed stop keeps the
    /// budget counted until the stop is settled (`Store::settle_stopped_autobuyer`, after the
    /// settle grace), when the rent of the links it bought replaces it.
    AutobuyerRunning {
        name: String,
        running: bool,
    },
    /// A start or stop whose outcome is unknown: the autobuyer counts as running (the
    /// intent's reservation joins its budget) and its state on the marketplace is unknown
    /// until the next switch is confirmed.
    AutobuyerSwitchUnknown {
        name: String,
    },
    /// The reservation becomes a held link at `price` (a differing price adjusts the commitment).
    Purchased {
        link: Option<i64>,
        page_id: i64,
        url_id: i64,
        text_id: i64,
        price: Money,
    },
}

/// Operator evidence about an uncertain intent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// The call did execute; `remote_id` is what it created (autobuyer, filter, link id).
    Created { remote_id: i64 },
    /// The call did not execute: the intent fails and its reservation is released.
    NotCreated,
}

/// Which intents to list. Empty `states` means every state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IntentFilter {
    pub campaign: Option<String>,
    pub states: Vec<IntentState>,
    pub kind: Option<IntentKind>,
}

/// One journaled intent.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IntentRow {
    pub id: IntentId,
    pub campaign: String,
    pub kind: IntentKind,
    pub natural_key: String,
    pub state: IntentState,
    pub attempts: u32,
    pub fingerprint: String,
    pub request: serde_json::Value,
    pub answer: Option<String>,
    pub error: Option<String>,
    /// What the latest attempt reserved (counted in the commitment only while in flight or uncertain).
    pub reserved: Money,
    pub reserved_links: u32,
    /// The lease holder that recorded the latest attempt.
    pub owner: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The operator's reason, for intents settled by `resolve_intent`.
    pub resolution: Option<String>,
    /// A purchase that was ever uncertain: its page is never bought again automatically for
    /// that URL (re-arming its natural key needs `linkrunner resolve --allow-rebuy`).
    pub rebuy_blocked: bool,
}

impl IntentRow {
    /// The attempt this row shows.
    pub fn attempt(&self) -> AttemptRef {
        AttemptRef {
            intent: self.id,
            attempt: self.attempts,
        }
    }
}

//! The ten marketplace operations, named once: ledger keys, fault scopes and CLI values.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    AddProject,
    AddTexts,
    SearchStart,
    SearchResult,
    BuyLinks,
    ListLinks,
    AddFilter,
    CreateAutobuyer,
    StopAutobuyers,
    StartAutobuyers,
}

impl Op {
    pub const ALL: [Op; 10] = [
        Op::AddProject,
        Op::AddTexts,
        Op::SearchStart,
        Op::SearchResult,
        Op::BuyLinks,
        Op::ListLinks,
        Op::AddFilter,
        Op::CreateAutobuyer,
        Op::StopAutobuyers,
        Op::StartAutobuyers,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Op::AddProject => "add_project",
            Op::AddTexts => "add_texts",
            Op::SearchStart => "search_start",
            Op::SearchResult => "search_result",
            Op::BuyLinks => "buy_links",
            Op::ListLinks => "list_links",
            Op::AddFilter => "add_filter",
            Op::CreateAutobuyer => "create_autobuyer",
            Op::StopAutobuyers => "stop_autobuyers",
            Op::StartAutobuyers => "start_autobuyers",
        }
    }

    /// Operations that change state on the marketplace. Starting a search only queues a
    /// read, so it is not one of them.
    pub fn is_change(self) -> bool {
        !matches!(self, Op::SearchStart | Op::SearchResult | Op::ListLinks)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Op {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Op::ALL
            .into_iter()
            .find(|op| op.name() == s)
            .ok_or_else(|| format!("unknown operation `{s}`"))
    }
}

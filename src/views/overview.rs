//! One truth about every campaign: the state words that `status`, the HTTP API
//! (`/api/v1/campaigns`, `/api/v1/summary`), the status page and the
//! `linkrunner_campaign_state` metric all show, decided here once ([`classify`]) from the
//! journal and what the campaign files say ([`FileFacts`]). The summary over all campaigns
//! is `super::summary`.
//!
//! Why the files: the journal does not know that a campaign is paused or that its file is
//! gone; the daemon knows its loaded files, `status` reads the same directory.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::store::RoundState;

/// A campaign's state: one word for people and machines alike. The order is the priority
/// when several apply (a paused campaign whose credentials were rejected is `halted`) and
/// the order the page sorts the state column in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CampaignState {
    /// Its file is gone: nothing new is bought, its autobuyers are stopped.
    Removed,
    /// All spending stopped: the marketplace rejected the credentials.
    Halted,
    /// An operator must act: a halt of its own, or an autobuyer creation only an operator
    /// can settle (`linkrunner resolve`).
    WaitingForOperator,
    /// Its file says `paused: true`: nothing new is bought, what it holds is kept.
    Paused,
    /// Calls that may have executed wait to be settled by the next pass (from the link list).
    Settling,
    /// The last buy round could buy and did not, for a reason an operator should look at
    /// (`stalled.reason`: no readable price, insufficient balance, ...).
    Stalled,
    /// The last round failed, or was deferred because the marketplace or the journal did
    /// not answer; it is tried again.
    Failing,
    /// Nothing of the above.
    Running,
}

impl CampaignState {
    pub(crate) const ALL: [CampaignState; 8] = [
        CampaignState::Removed,
        CampaignState::Halted,
        CampaignState::WaitingForOperator,
        CampaignState::Paused,
        CampaignState::Settling,
        CampaignState::Stalled,
        CampaignState::Failing,
        CampaignState::Running,
    ];

    /// The machine word: the API's `state`, the page's `?state=` and its `data-state`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CampaignState::Removed => "removed",
            CampaignState::Halted => "halted",
            CampaignState::WaitingForOperator => "waiting_for_operator",
            CampaignState::Paused => "paused",
            CampaignState::Settling => "settling",
            CampaignState::Stalled => "stalled",
            CampaignState::Failing => "failing",
            CampaignState::Running => "running",
        }
    }

    /// The same word for people (`status`, the page): underscores read as spaces.
    pub(crate) fn words(self) -> String {
        self.as_str().replace('_', " ")
    }

    pub(crate) fn parse(text: &str) -> Option<CampaignState> {
        CampaignState::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// The value of the `state` label of `linkrunner_campaign_state`: a coarser closed set
    /// kept as it was for dashboards and alerts (settling, stalled, failing and running are
    /// `active`; stalls have their own `linkrunner_campaign_stalled`).
    pub(crate) fn metric_label(self) -> &'static str {
        match self {
            CampaignState::Removed => "removed",
            CampaignState::Halted => "halted",
            CampaignState::WaitingForOperator => "waiting_for_operator",
            CampaignState::Paused => "paused",
            CampaignState::Settling
            | CampaignState::Stalled
            | CampaignState::Failing
            | CampaignState::Running => "active",
        }
    }
}

/// What the campaign files say about one campaign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFact {
    Present {
        paused: bool,
    },
    /// The directory was read completely and holds no file of this campaign.
    Removed,
    /// Not known: the files were not read, or a file could not be (it may be this one's).
    Unknown,
}

impl FileFact {
    /// `paused` as the API carries it: `null` when not known.
    pub(crate) fn paused(self) -> Option<bool> {
        match self {
            FileFact::Present { paused } => Some(paused),
            FileFact::Removed => Some(false),
            FileFact::Unknown => None,
        }
    }
}

/// What a reader knows of the campaign files: the daemon its loaded set (complete while no
/// file is rejected: a rejected file's campaign is held, not removed), `status` the
/// directory it reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileFacts {
    /// Campaign name → paused, of every valid file; `None`: not read.
    paused: Option<BTreeMap<String, bool>>,
    /// Every file was valid, so a name missing is a removed file.
    complete: bool,
}

impl FileFacts {
    /// Nothing known (an API without a daemon, a `status` without a campaign directory).
    pub(crate) fn unknown() -> FileFacts {
        FileFacts::default()
    }

    /// The files read: `paused` by campaign name; `complete` when no file was rejected.
    pub fn read(paused: BTreeMap<String, bool>, complete: bool) -> FileFacts {
        FileFacts {
            paused: Some(paused),
            complete,
        }
    }

    pub(crate) fn of(&self, name: &str) -> FileFact {
        match &self.paused {
            None => FileFact::Unknown,
            Some(m) => match m.get(name) {
                Some(&paused) => FileFact::Present { paused },
                None if self.complete => FileFact::Removed,
                None => FileFact::Unknown,
            },
        }
    }
}

/// The facts a state is decided from; the gauges build it from counts, `status` from the
/// whole record, so both decide alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StateFacts {
    pub(crate) file: FileFact,
    /// A global halt applies (credentials rejected, or an operator's halt).
    pub(crate) halted: bool,
    /// A halt of its own applies.
    pub(crate) own_halt: bool,
    /// Uncertain autobuyer creations: only an operator settles them.
    pub(crate) uncertain_creations: usize,
    /// The file asks more than may be committed without a person (`resolve approve`).
    pub(crate) awaiting_approval: bool,
    /// Uncertain intents of any kind.
    pub(crate) uncertain: usize,
    /// The last buy pass stalled.
    pub(crate) stalled: bool,
    pub(crate) last_round: Option<RoundState>,
}

/// The one place a campaign's state is decided.
pub(crate) fn classify(f: &StateFacts) -> CampaignState {
    if f.file == FileFact::Removed {
        return CampaignState::Removed;
    }
    if f.halted {
        return CampaignState::Halted;
    }
    if f.own_halt || f.uncertain_creations > 0 || f.awaiting_approval {
        return CampaignState::WaitingForOperator;
    }
    if f.file == (FileFact::Present { paused: true }) {
        return CampaignState::Paused;
    }
    if f.uncertain > 0 {
        return CampaignState::Settling;
    }
    if f.stalled {
        return CampaignState::Stalled;
    }
    match f.last_round {
        Some(RoundState::Failed | RoundState::Deferred) => CampaignState::Failing,
        _ => CampaignState::Running,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> StateFacts {
        StateFacts {
            file: FileFact::Present { paused: false },
            halted: false,
            own_halt: false,
            uncertain_creations: 0,
            awaiting_approval: false,
            uncertain: 0,
            stalled: false,
            last_round: Some(RoundState::Succeeded),
        }
    }

    #[test]
    fn a_campaign_awaiting_approval_waits_for_an_operator_even_when_paused() {
        let f = StateFacts {
            file: FileFact::Present { paused: true },
            awaiting_approval: true,
            ..facts()
        };
        assert_eq!(classify(&f), CampaignState::WaitingForOperator);
    }

    #[test]
    fn a_paused_campaign_is_paused_not_running() {
        let f = StateFacts {
            file: FileFact::Present { paused: true },
            ..facts()
        };
        assert_eq!(classify(&f), CampaignState::Paused);
        assert_eq!(classify(&facts()), CampaignState::Running);
    }

    #[test]
    fn what_an_operator_must_do_outranks_a_pause_and_a_stall() {
        let f = StateFacts {
            file: FileFact::Present { paused: true },
            own_halt: true,
            stalled: true,
            ..facts()
        };
        assert_eq!(classify(&f), CampaignState::WaitingForOperator);
        let creation = StateFacts {
            uncertain_creations: 1,
            uncertain: 1,
            ..facts()
        };
        assert_eq!(classify(&creation), CampaignState::WaitingForOperator);
        let halted = StateFacts { halted: true, ..f };
        assert_eq!(classify(&halted), CampaignState::Halted);
        let removed = StateFacts {
            file: FileFact::Removed,
            ..halted
        };
        assert_eq!(classify(&removed), CampaignState::Removed);
    }

    #[test]
    fn settling_stalled_and_failing_in_that_order() {
        let failing = StateFacts {
            last_round: Some(RoundState::Deferred),
            ..facts()
        };
        assert_eq!(classify(&failing), CampaignState::Failing);
        let stalled = StateFacts {
            stalled: true,
            ..failing
        };
        assert_eq!(classify(&stalled), CampaignState::Stalled);
        let settling = StateFacts {
            uncertain: 2,
            ..stalled
        };
        assert_eq!(classify(&settling), CampaignState::Settling);
    }

    #[test]
    fn every_state_has_one_word_that_parses_back_and_a_metric_label() {
        for s in CampaignState::ALL {
            assert_eq!(CampaignState::parse(s.as_str()), Some(s));
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::json!(s.as_str())
            );
            assert!(crate::metrics::CAMPAIGN_STATES.contains(&s.metric_label()));
            assert_eq!(s.words().replace(' ', "_"), s.as_str());
        }
        assert_eq!(CampaignState::parse("active"), None);
    }

    #[test]
    fn a_name_missing_from_files_read_in_full_is_removed_else_unknown() {
        let paused = BTreeMap::from([("a".to_string(), true)]);
        let full = FileFacts::read(paused.clone(), true);
        assert_eq!(full.of("a"), FileFact::Present { paused: true });
        assert_eq!(full.of("b"), FileFact::Removed);
        assert_eq!(FileFacts::read(paused, false).of("b"), FileFact::Unknown);
        assert_eq!(FileFacts::unknown().of("a"), FileFact::Unknown);
        assert_eq!(FileFact::Unknown.paused(), None);
    }
}

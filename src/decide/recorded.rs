//! What the journal says about one campaign, read in one go: remote ids, budget, purchases,
//! uncertain intents, links held and seen, halts and rounds. The planner reads only this.

use std::collections::{BTreeMap, HashSet};

use linkrunner_domain::halts::Halt;
use linkrunner_domain::intents::{IntentKind, IntentRow, IntentState};
use linkrunner_domain::records::{
    BudgetSnapshot, CampaignCaps, ForeignLink, HeldLink, RemoteIds, RoundRow, StallRow,
};

/// Serializable: `GET /api/v1/state` serves it and `plan --state-from` plans against it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Recorded {
    pub ids: RemoteIds,
    pub budget: BudgetSnapshot,
    /// Purchase intents that hold, reserve or may hold money (every state but `failed`).
    pub purchases: Vec<IntentRow>,
    pub uncertain: Vec<IntentRow>,
    /// Halts that apply to this campaign: the global one (credentials) and its own.
    pub halts: Vec<Halt>,
    pub last_round: Option<RoundRow>,
    pub last_success: Option<RoundRow>,
    /// The judgment of the last buy pass: converged, or stalled and why.
    pub stall: Option<StallRow>,
    /// Number of start/stop intents per autobuyer id: the generation of its next transition.
    pub autobuyer_generations: BTreeMap<i64, usize>,
    /// Failed purchases that were once uncertain: their pages are never bought again
    /// automatically, and a list that shows them adopts them.
    pub blocked: Vec<IntentRow>,
    /// Links our purchases bought, released ones included.
    pub held: Vec<HeldLink>,
    /// Links the list showed that no purchase of ours bought, released ones included.
    pub foreign: Vec<ForeignLink>,
    /// The URL ids each autobuyer's spec covers, by autobuyer name (from its creation).
    pub autobuyer_urls: BTreeMap<String, Vec<i64>>,
    /// Creations per autobuyer name (failed ones aside): the replacement generation of its
    /// next creation (`decide::replace`).
    #[serde(default)]
    pub(crate) autobuyer_creations: BTreeMap<String, usize>,
    /// The spec each autobuyer's latest creation sent, by name (the `-` side of a replacement).
    #[serde(default)]
    pub(crate) autobuyer_specs: BTreeMap<String, linkrunner_domain::market::AutobuyerSpec>,
}

impl Recorded {
    /// What a link no intent of ours bought counts when the list shows no price: the
    /// campaign's `budget.unknown_link_rent` (else its `max_link_price`), or (its file
    /// removed) the dearest link it holds, whoever bought it.
    pub(crate) fn fallback_price(
        &self,
        c: Option<&crate::campaign::Campaign>,
    ) -> linkrunner_domain::money::Money {
        match c {
            Some(c) => c.unknown_link_rent(),
            None => {
                let foreign = self.foreign.iter().filter_map(|f| f.price);
                let held = self.held.iter().map(|h| h.price);
                held.chain(foreign).max().unwrap_or_default()
            }
        }
    }

    /// The fields drawn from the campaign's intents: live ones (`all`) and its switches.
    pub(crate) fn set_intents(&mut self, all: &[IntentRow], switches: &[IntentRow]) {
        self.purchases = all
            .iter()
            .filter(|i| i.kind == IntentKind::Purchase && i.state != IntentState::Failed)
            .cloned()
            .collect();
        self.uncertain = all
            .iter()
            .filter(|i| i.state == IntentState::Uncertain)
            .cloned()
            .collect();
        self.autobuyer_generations = generations(switches);
        self.autobuyer_urls = autobuyer_urls(all);
        self.autobuyer_creations = autobuyer_creations(all);
        self.autobuyer_specs = autobuyer_specs(all);
    }

    /// A campaign `name` the journal has not seen, with a cap of 1,000 RUB, 5 links a day
    /// and 50 in all, no halt: the tests' starting point.
    #[cfg(test)]
    pub(crate) fn unrecorded_for_tests(name: &str) -> Recorded {
        let caps = CampaignCaps {
            account: "default".into(),
            name: name.into(),
            monthly_cap: linkrunner_domain::money::Money::from_rubles(1000),
            daily_links: 5,
            total_links: 50,
        };
        Recorded::unrecorded_with(&caps, Vec::new())
    }

    /// The record of an autobuyer linkrunner created and runs, its budget `budget` all
    /// reserved, its spec `fingerprint`: the tests' starting point, varied with `..`.
    #[cfg(test)]
    pub(crate) fn running_autobuyer_for_tests(
        id: i64,
        fingerprint: &str,
        budget: linkrunner_domain::money::Money,
    ) -> linkrunner_domain::records::AutobuyerRecord {
        linkrunner_domain::records::AutobuyerRecord {
            id,
            running: true,
            spec_fingerprint: fingerprint.to_string(),
            monthly_budget: budget,
            reserved: budget,
            switch_state: linkrunner_domain::records::SwitchState::Running,
            stopped_at: None,
            adopted_at: None,
            adopted_id: None,
            covers: Vec::new(),
        }
    }

    /// [`Recorded::unrecorded`] with the halts in force already read: of them, those that stop
    /// every campaign of the campaign's account (`caps.account`) apply.
    pub(crate) fn unrecorded_with(caps: &CampaignCaps, halts: Vec<Halt>) -> Recorded {
        let halts = halts
            .into_iter()
            .filter(|h| h.is_wide() && h.scope.covers(&caps.name, &caps.account))
            .collect();
        let zero = linkrunner_domain::money::Money::ZERO;
        let budget = BudgetSnapshot {
            cap: caps.monthly_cap,
            committed: zero,
            held: zero,
            reserved_in_flight: zero,
            uncertain: zero,
            links_total: 0,
            links_today: 0,
            daily_cap: caps.daily_links,
            total_cap: caps.total_links,
            day: None,
            committed_today: zero,
            approval: None,
        };
        Recorded::with_budget(budget, halts)
    }

    /// A campaign with nothing recorded but its budget and the global halts.
    pub(crate) fn with_budget(budget: BudgetSnapshot, halts: Vec<Halt>) -> Recorded {
        Recorded {
            ids: RemoteIds::default(),
            budget,
            purchases: Vec::new(),
            uncertain: Vec::new(),
            halts,
            last_round: None,
            last_success: None,
            stall: None,
            autobuyer_generations: BTreeMap::new(),
            blocked: Vec::new(),
            held: Vec::new(),
            foreign: Vec::new(),
            autobuyer_urls: BTreeMap::new(),
            autobuyer_creations: BTreeMap::new(),
            autobuyer_specs: BTreeMap::new(),
        }
    }

    /// Whether an operator halted spending (`linkrunner halt`): its running autobuyers are
    /// stopped too, and none is created, until `linkrunner resume`.
    pub(crate) fn operator_halt(&self) -> Option<&Halt> {
        self.halts.iter().find(|h| h.is_operator())
    }

    /// Why this campaign may not spend now, if it may not.
    pub(crate) fn spending_stopped(&self, paused: bool) -> Option<String> {
        if let Some(h) = self.halts.iter().find(|h| h.is_wide()) {
            return Some(format!("{}: {}", h.scope.stopped(), h.describe()));
        }
        if let Some(h) = self.halts.first() {
            return Some(format!("waiting for an operator: {}", h.reason));
        }
        paused.then(|| "campaign is paused".to_string())
    }

    /// `(url, page_id)` pairs a buy round must never buy: bought, reserved or uncertain by
    /// our purchases, once uncertain (blocked), or held by the project through anyone else
    /// (an autobuyer, a purchase outside linkrunner) as the link list showed. A purchase
    /// names its URL by the id it was bought for, so a URL respelt with its `url_id` keeps
    /// its taken pages (`decide::respell`).
    pub(crate) fn taken_pages(&self) -> HashSet<(String, i64)> {
        let url_of: BTreeMap<i64, &String> = self.ids.urls.iter().map(|(u, id)| (*id, u)).collect();
        let ours = self.purchases.iter().chain(&self.blocked).filter_map(|i| {
            let url = self.purchase_url(i, &url_of)?;
            let page = i.request.get("page_id")?.as_i64()?;
            Some((url, page))
        });
        let theirs = self.foreign.iter().filter_map(|f| {
            let url = url_of.get(&f.url_id?)?;
            Some(((*url).clone(), f.page_id?))
        });
        ours.chain(theirs).collect()
    }

    /// Whether the campaign has ever had an autobuyer: its links may appear in the list at
    /// any time, so a buy round reads the list before it chooses.
    pub(crate) fn has_autobuyers(&self) -> bool {
        !self.ids.autobuyers.is_empty()
    }

    /// How many links each (url, text) already has, so rounds vary the anchors.
    pub(crate) fn text_usage(&self) -> BTreeMap<(String, String), u32> {
        let url_of: BTreeMap<i64, &String> = self.ids.urls.iter().map(|(u, id)| (*id, u)).collect();
        let mut m = BTreeMap::new();
        for i in &self.purchases {
            let (Some(u), Some(t)) = (
                self.purchase_url(i, &url_of),
                i.request.get("text").and_then(|v| v.as_str()),
            ) else {
                continue;
            };
            *m.entry((u, t.to_string())).or_insert(0) += 1;
        }
        m
    }

    /// The URL a purchase was for, spelt as the journal spells its id now (the spelling it
    /// was bought under when its id is not recorded).
    fn purchase_url(&self, i: &IntentRow, url_of: &BTreeMap<i64, &String>) -> Option<String> {
        let by_id = i.request.get("url_id").and_then(|v| v.as_i64());
        match by_id.and_then(|id| url_of.get(&id)) {
            Some(url) => Some((*url).clone()),
            None => Some(i.request.get("url")?.as_str()?.to_string()),
        }
    }
}

/// Which parts of a [`Recorded`] a step may have written, so the pass reads only those again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Parts {
    /// Remote ids: project, URLs, texts, filters, autobuyers and their switch state.
    pub(crate) ids: bool,
    pub(crate) budget: bool,
    /// Purchases, uncertain intents, autobuyer generations and URLs.
    pub(crate) intents: bool,
    pub(crate) halts: bool,
    /// Everything else too: blocked purchases, links, rounds, the stall.
    rest: bool,
}

impl Parts {
    pub(crate) const ALL: Parts = Parts {
        ids: true,
        budget: true,
        intents: true,
        halts: true,
        rest: true,
    };
    const NONE: Parts = Parts {
        ids: false,
        budget: false,
        intents: false,
        halts: false,
        rest: false,
    };
    /// A free creation (project, texts, filter): its ids, and its intent's state (an answer
    /// that could not be read leaves it uncertain).
    /// Halts are read again after every step: another campaign's pass may have set the
    /// credentials halt meanwhile.
    pub(crate) const CREATED: Parts = Parts {
        ids: true,
        intents: true,
        halts: true,
        ..Parts::NONE
    };
    /// An autobuyer created, started or stopped: its ids and switch state, its intents, and
    /// the commitment its budget moved.
    pub(crate) const SWITCHED: Parts = Parts {
        ids: true,
        budget: true,
        intents: true,
        halts: true,
        ..Parts::NONE
    };
    /// What ends a pass's report: uncertain intents and halts.
    pub(crate) const OUTCOME: Parts = Parts {
        intents: true,
        halts: true,
        ..Parts::NONE
    };
}

pub(crate) fn generations(all: &[IntentRow]) -> BTreeMap<i64, usize> {
    let mut m = BTreeMap::new();
    for i in all.iter().filter(|i| {
        matches!(
            i.kind,
            IntentKind::StartAutobuyer | IntentKind::StopAutobuyer
        )
    }) {
        if let Some(id) = i.request.get("autobuyer_id").and_then(|v| v.as_i64()) {
            *m.entry(id).or_insert(0) += 1;
        }
    }
    m
}

/// The URL ids each created autobuyer covers, from its creation intent's recorded spec.
pub(crate) fn autobuyer_urls(all: &[IntentRow]) -> BTreeMap<String, Vec<i64>> {
    let created = all
        .iter()
        .filter(|i| i.kind == IntentKind::CreateAutobuyer && i.state == IntentState::Succeeded);
    let mut m = BTreeMap::new();
    for i in created {
        let Some(name) = i.request.get("name").and_then(|v| v.as_str()) else {
            continue;
        };
        let urls = i
            .request
            .pointer("/spec/urls")
            .and_then(|v| v.as_array())
            .map(|a| a.iter().filter_map(|u| u.get("url_id")?.as_i64()).collect())
            .unwrap_or_default();
        m.insert(name.to_string(), urls);
    }
    m
}

/// Creations per autobuyer name, every state but `failed` (`all` holds no failed intent).
pub(crate) fn autobuyer_creations(all: &[IntentRow]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for i in all
        .iter()
        .filter(|i| i.kind == IntentKind::CreateAutobuyer && i.state != IntentState::Failed)
    {
        if let Some(name) = i.request.get("name").and_then(|v| v.as_str()) {
            *m.entry(name.to_string()).or_insert(0) += 1;
        }
    }
    m
}

/// The spec the latest successful creation of each autobuyer sent (intents are in id order).
pub(crate) fn autobuyer_specs(
    all: &[IntentRow],
) -> BTreeMap<String, linkrunner_domain::market::AutobuyerSpec> {
    let mut m = BTreeMap::new();
    for i in all
        .iter()
        .filter(|i| i.kind == IntentKind::CreateAutobuyer && i.state == IntentState::Succeeded)
    {
        let name = i.request.get("name").and_then(|v| v.as_str());
        let spec = i
            .request
            .get("spec")
            .and_then(|s| serde_json::from_value(s.clone()).ok());
        if let (Some(name), Some(spec)) = (name, spec) {
            m.insert(name.to_string(), spec);
        }
    }
    m
}

//! What the journal says about one campaign, read in one go: remote ids, budget, purchases,
//! uncertain intents, halts and rounds. The planner reads only this.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, NaiveDate, Utc};

use crate::store::{
    BudgetSnapshot, IntentFilter, IntentKind, IntentRow, IntentState, RemoteIds, RoundRow, Store,
    StoreError,
};

#[derive(Debug, Clone)]
pub struct Recorded {
    pub ids: RemoteIds,
    pub budget: BudgetSnapshot,
    /// Purchase intents that hold, reserve or may hold money (every state but `failed`).
    pub purchases: Vec<IntentRow>,
    pub uncertain: Vec<IntentRow>,
    /// Halts that apply to this campaign: the global one (credentials) and its own.
    pub halts: Vec<(String, String, DateTime<Utc>)>,
    pub last_round: Option<RoundRow>,
    pub last_success: Option<RoundRow>,
    /// Number of start/stop intents per autobuyer id: the generation of its next transition.
    pub autobuyer_generations: BTreeMap<i64, usize>,
    /// The state each autobuyer was last confirmed in by a start/stop call that succeeded.
    /// Absent right after creation: its state on the marketplace is then not known.
    pub confirmed_running: BTreeMap<i64, bool>,
}

impl Recorded {
    pub async fn load(
        store: &Store,
        campaign: &str,
        today: NaiveDate,
    ) -> Result<Recorded, StoreError> {
        let ids = store.remote_ids(campaign).await?;
        let budget = store.budget(campaign, today).await?;
        // Failed intents are history the plan never needs (their money is released); leaving
        // them in the database keeps this read small however long the campaign has run. Only
        // autobuyer switches are read in every state: their count is the next generation.
        let live = [
            IntentState::InFlight,
            IntentState::Succeeded,
            IntentState::Uncertain,
        ];
        let all = store.intents(filter(campaign, live.to_vec(), None)).await?;
        let mut switches = store
            .intents(filter(
                campaign,
                Vec::new(),
                Some(IntentKind::StartAutobuyer),
            ))
            .await?;
        switches.extend(
            store
                .intents(filter(
                    campaign,
                    Vec::new(),
                    Some(IntentKind::StopAutobuyer),
                ))
                .await?,
        );
        let halts = store
            .halts()
            .await?
            .into_iter()
            .filter(|(scope, _, _)| scope == "global" || scope == campaign)
            .collect();
        Ok(Recorded {
            ids,
            budget,
            purchases: all
                .iter()
                .filter(|i| i.kind == IntentKind::Purchase && i.state != IntentState::Failed)
                .cloned()
                .collect(),
            uncertain: all
                .iter()
                .filter(|i| i.state == IntentState::Uncertain)
                .cloned()
                .collect(),
            autobuyer_generations: generations(&switches),
            confirmed_running: confirmed(&switches),
            halts,
            last_round: store.last_round(campaign).await?,
            last_success: store.last_successful_round(campaign).await?,
        })
    }

    /// As [`Recorded::load`], but a campaign the journal has never seen (a new file, before its
    /// first pass) reads as nothing recorded under its own caps instead of an error.
    pub async fn load_or_new(
        store: &Store,
        c: &crate::campaign::Campaign,
        today: NaiveDate,
    ) -> Result<Recorded, StoreError> {
        match Recorded::load(store, &c.name, today).await {
            Err(StoreError::NotFound { .. }) => Recorded::unrecorded(store, &super::caps(c)).await,
            other => other,
        }
    }

    /// A campaign the journal has never seen (`plan` before the first pass): nothing created,
    /// nothing committed, its caps from the file; only the global halt can apply to it.
    pub async fn unrecorded(
        store: &Store,
        caps: &crate::store::CampaignCaps,
    ) -> Result<Recorded, StoreError> {
        let halts = store
            .halts()
            .await?
            .into_iter()
            .filter(|(scope, _, _)| scope == "global")
            .collect();
        let zero = crate::money::Money::ZERO;
        Ok(Recorded {
            ids: RemoteIds::default(),
            budget: BudgetSnapshot {
                cap: caps.monthly_cap,
                committed: zero,
                held: zero,
                reserved_in_flight: zero,
                uncertain: zero,
                links_total: 0,
                links_today: 0,
                daily_cap: caps.daily_links,
                total_cap: caps.total_links,
            },
            purchases: Vec::new(),
            uncertain: Vec::new(),
            halts,
            last_round: None,
            last_success: None,
            autobuyer_generations: BTreeMap::new(),
            confirmed_running: BTreeMap::new(),
        })
    }

    /// Why this campaign may not spend now, if it may not.
    pub fn spending_stopped(&self, paused: bool) -> Option<String> {
        if let Some((_, reason, _)) = self.halts.iter().find(|(s, _, _)| s == "global") {
            return Some(format!("all spending stopped: {reason}"));
        }
        if let Some((_, reason, _)) = self.halts.first() {
            return Some(format!("waiting for an operator: {reason}"));
        }
        paused.then(|| "campaign is paused".to_string())
    }

    /// `(url, page_id)` pairs bought, reserved or uncertain: never bought again for that URL.
    pub fn taken_pages(&self) -> HashSet<(String, i64)> {
        self.purchases
            .iter()
            .filter_map(|i| {
                let url = i.request.get("url")?.as_str()?.to_string();
                let page = i.request.get("page_id")?.as_i64()?;
                Some((url, page))
            })
            .collect()
    }

    /// How many links each (url, text) already has, so rounds vary the anchors.
    pub fn text_usage(&self) -> BTreeMap<(String, String), u32> {
        let mut m = BTreeMap::new();
        for i in &self.purchases {
            let (Some(u), Some(t)) = (
                i.request.get("url").and_then(|v| v.as_str()),
                i.request.get("text").and_then(|v| v.as_str()),
            ) else {
                continue;
            };
            *m.entry((u.to_string(), t.to_string())).or_insert(0) += 1;
        }
        m
    }
}

fn filter(campaign: &str, states: Vec<IntentState>, kind: Option<IntentKind>) -> IntentFilter {
    IntentFilter {
        campaign: Some(campaign.to_string()),
        states,
        kind,
    }
}

fn generations(all: &[IntentRow]) -> BTreeMap<i64, usize> {
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

fn confirmed(all: &[IntentRow]) -> BTreeMap<i64, bool> {
    let mut latest: BTreeMap<i64, (i64, bool)> = BTreeMap::new();
    let done = all.iter().filter(|i| i.state == IntentState::Succeeded);
    for i in done.filter(|i| {
        matches!(
            i.kind,
            IntentKind::StartAutobuyer | IntentKind::StopAutobuyer
        )
    }) {
        let Some(id) = i.request.get("autobuyer_id").and_then(|v| v.as_i64()) else {
            continue;
        };
        let running = i.kind == IntentKind::StartAutobuyer;
        let e = latest.entry(id).or_insert((i.id.0, running));
        if i.id.0 >= e.0 {
            *e = (i.id.0, running);
        }
    }
    latest.into_iter().map(|(k, (_, v))| (k, v)).collect()
}

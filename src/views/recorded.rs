//! Reading the journal into a [`Recorded`]: what the journal says about one campaign, the
//! decisions' input (`crate::decide::recorded`). The pass, `plan`, `status` and the API read it
//! through here.

use std::collections::BTreeMap;

use chrono::NaiveDate;

use crate::decide::recorded::{Parts, Recorded};
use crate::store::{Halt, IntentKind, IntentRow, IntentState, Store, StoreError};

impl Recorded {
    pub async fn load(
        store: &Store,
        campaign: &str,
        today: NaiveDate,
    ) -> Result<Recorded, StoreError> {
        let ids = store.campaigns().remote_ids(campaign).await?;
        let budget = store.campaigns().budget(campaign, today).await?;
        let (all, switches) = read_intents(store, campaign).await?;
        let mut r = Recorded {
            ids,
            budget,
            purchases: Vec::new(),
            uncertain: Vec::new(),
            autobuyer_generations: BTreeMap::new(),
            autobuyer_urls: BTreeMap::new(),
            autobuyer_creations: BTreeMap::new(),
            autobuyer_specs: BTreeMap::new(),
            blocked: store.intents().blocked_purchases(campaign).await?,
            held: store.links().held_links(campaign).await?,
            foreign: store.links().foreign_links(campaign).await?,
            halts: read_halts(store, campaign).await?,
            last_round: store.rounds().last_round(campaign).await?,
            last_success: store.rounds().last_successful_round(campaign).await?,
            stall: store.campaigns().stall(campaign).await?,
        };
        r.set_intents(&all, &switches);
        Ok(r)
    }

    /// Reads again only `parts`: what the step just run may have written (a pass keeps its
    /// record current this way instead of reading all of it before every step).
    pub(crate) async fn refresh(
        &mut self,
        store: &Store,
        campaign: &str,
        today: NaiveDate,
        parts: Parts,
    ) -> Result<(), StoreError> {
        if parts == Parts::ALL {
            *self = Recorded::load(store, campaign, today).await?;
            return Ok(());
        }
        if parts.ids {
            self.ids = store.campaigns().remote_ids(campaign).await?;
        }
        if parts.budget {
            self.budget = store.campaigns().budget(campaign, today).await?;
        }
        if parts.intents {
            let (all, switches) = read_intents(store, campaign).await?;
            self.set_intents(&all, &switches);
        }
        if parts.halts {
            self.halts = read_halts(store, campaign).await?;
        }
        Ok(())
    }

    /// As [`Recorded::load`], but a campaign the journal has never seen (a new file, before its
    /// first pass) reads as nothing recorded under its own caps instead of an error.
    pub async fn load_or_new(
        store: &Store,
        c: &crate::campaign::Campaign,
        today: NaiveDate,
    ) -> Result<Recorded, StoreError> {
        match Recorded::load(store, &c.name, today).await {
            Err(StoreError::NotFound { .. }) => {
                let mut r = Recorded::unrecorded(store, &crate::decide::caps::caps(c)).await?;
                r.budget.day = Some(today);
                Ok(r)
            }
            other => other,
        }
    }

    /// A campaign the journal has never seen (`plan` before the first pass): nothing created,
    /// nothing committed, its caps from the file; only the halts of every campaign, or of
    /// every campaign of its account, can apply to it.
    pub(crate) async fn unrecorded(
        store: &Store,
        caps: &crate::store::CampaignCaps,
    ) -> Result<Recorded, StoreError> {
        Ok(Recorded::unrecorded_with(caps, store.halts().await?))
    }
}

/// The campaign's live intents (not failed: their money is released, and leaving them in the
/// database keeps this read small however long the campaign has run), and its autobuyer
/// switches in every state (their count is the next generation).
async fn read_intents(
    store: &Store,
    campaign: &str,
) -> Result<(Vec<IntentRow>, Vec<IntentRow>), StoreError> {
    let rows = store.intents().live_intents_and_switches(campaign).await?;
    let switches = rows
        .iter()
        .filter(|i| {
            matches!(
                i.kind,
                IntentKind::StartAutobuyer | IntentKind::StopAutobuyer
            )
        })
        .cloned()
        .collect();
    let live = rows
        .into_iter()
        .filter(|i| i.state != IntentState::Failed)
        .collect();
    Ok((live, switches))
}

/// Halts that apply to the campaign: every account's, its account's and its own.
async fn read_halts(store: &Store, campaign: &str) -> Result<Vec<Halt>, StoreError> {
    store.halts_covering(campaign).await
}

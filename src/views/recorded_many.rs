//! [`Recorded`] of many campaigns from one batch read of the journal (`Reports::journal_read`:
//! each table in one query for all of them): start-up, `plan`, the state a daemon serves and
//! the gauges read every campaign at once. Each value is exactly what [`Recorded::load`]
//! (or, for a campaign the journal has never seen, [`Recorded::load_or_new`]) returns: tested
//! on both backends by tests/it `engine::recorded_many`.

use std::collections::BTreeMap;

use chrono::NaiveDate;

use crate::campaign::Campaign;
use crate::decide::recorded::{
    Recorded, autobuyer_creations, autobuyer_specs, autobuyer_urls, generations,
};
use crate::store::{
    BatchRead, CampaignJournal, Halt, HaltAccounts, IntentKind, IntentState, Store, StoreError,
};

impl Recorded {
    /// [`Recorded::load_many_with`], its rows found `how` (tests force each way).
    pub async fn load_many_with(
        store: &Store,
        names: &[String],
        today: NaiveDate,
        how: BatchRead,
    ) -> Result<BTreeMap<String, Recorded>, StoreError> {
        Ok(load_with_halts(store, names, today, how).await?.0)
    }

    /// As [`Recorded::load_or_new`] for each of `campaigns`, in their order.
    pub async fn load_or_new_many(
        store: &Store,
        campaigns: &[&Campaign],
        today: NaiveDate,
    ) -> Result<Vec<Recorded>, StoreError> {
        let names: Vec<String> = campaigns.iter().map(|c| c.name.clone()).collect();
        let (mut known, halts) = load_with_halts(store, &names, today, BatchRead::Auto).await?;
        let wide: Vec<Halt> = halts.into_iter().filter(Halt::is_wide).collect();
        Ok(campaigns
            .iter()
            .map(|c| match known.remove(&c.name) {
                Some(r) => r,
                None => {
                    let mut r =
                        Recorded::unrecorded_with(&crate::decide::caps::caps(c), wide.clone());
                    r.budget.day = Some(today);
                    r
                }
            })
            .collect())
    }
}

/// [`Recorded::load_many_with`] and every halt in force (read once for all campaigns).
pub(crate) async fn load_with_halts(
    store: &Store,
    names: &[String],
    today: NaiveDate,
    how: BatchRead,
) -> Result<(BTreeMap<String, Recorded>, Vec<Halt>), StoreError> {
    let journal = store.reports().journal_read(names, today, how).await?;
    let halts = store.halts().await?;
    let accounts = store.halt_accounts(&halts).await?;
    let recorded = journal
        .into_iter()
        .map(|(name, j)| {
            let r = assemble(&name, j, (&halts, &accounts));
            (name, r)
        })
        .collect();
    Ok((recorded, halts))
}

/// One campaign's [`Recorded`] from its rows, split as `Recorded::load`'s queries split them.
/// Each row is kept once (no copy of every intent): `generations` counts only switches and
/// `autobuyer_urls` reads only succeeded creations, so both see in the rows exactly the
/// intents they see in `load`'s lists.
fn assemble(
    name: &str,
    j: CampaignJournal,
    (halts, accounts): (&[Halt], &HaltAccounts),
) -> Recorded {
    let autobuyer_generations = generations(&j.intents);
    let autobuyer_urls = autobuyer_urls(&j.intents);
    let autobuyer_creations = autobuyer_creations(&j.intents);
    let autobuyer_specs = autobuyer_specs(&j.intents);
    let (mut purchases, mut uncertain, mut blocked) = (Vec::new(), Vec::new(), Vec::new());
    for i in j.intents {
        let live = matches!(
            i.state,
            IntentState::InFlight | IntentState::Succeeded | IntentState::Uncertain
        );
        if i.state == IntentState::Uncertain {
            uncertain.push(i.clone());
        }
        if i.kind != IntentKind::Purchase {
            continue;
        }
        if live {
            purchases.push(i);
        } else if i.state == IntentState::Failed && i.rebuy_blocked {
            blocked.push(i);
        }
    }
    Recorded {
        ids: j.ids,
        budget: j.budget,
        purchases,
        uncertain,
        autobuyer_generations,
        autobuyer_urls,
        autobuyer_creations,
        autobuyer_specs,
        blocked,
        held: j.held,
        foreign: j.foreign,
        halts: halts
            .iter()
            .filter(|h| accounts.covers(h, name))
            .cloned()
            .collect(),
        last_round: j.last_round,
        last_success: j.last_success,
        stall: j.stall,
    }
}

//! The journal's recorded state as `plan` reads it, for planning without the database: the
//! daemon serves it read-only (`GET /api/v1/state`) and `plan --state-from URL` plans the
//! files under review against it ([`StateSource`]). It is exactly what [`Recorded::load`]
//! reads per campaign, plus the global halts a campaign the journal has never seen is under,
//! read for many campaigns at once ([`Recorded::load_many_with`]: each table once a batch).
//! [`plan_all`] is `plan` itself (the bench's start-up measures it).
//! The journal holds no credentials, so neither does this (tested in `tests/it`
//! `daemon::state`).

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::recorded_many::load_with_halts;
use crate::campaign::{Campaign, InvalidFiles};
use crate::decide::plan::{CampaignPlan, plan_campaign, plan_claimed, plan_held, plan_removed};
use crate::decide::recorded::Recorded;
use crate::decide::rename::IdOwners;
use crate::decide::{moves, rename};
use crate::store::{BatchRead, CHUNK, CampaignFile, Halt, Store, StoreError};

/// Every campaign's recorded state at one instant.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordedState {
    /// When it was read (its budget's "links today" is of this day, UTC).
    pub(crate) at: DateTime<Utc>,
    /// Halts that stop every campaign (credentials rejected).
    pub(crate) global_halts: Vec<Halt>,
    /// Per campaign the journal knows, by name.
    pub(crate) campaigns: BTreeMap<String, Recorded>,
}

/// Reads the state of every campaign the journal knows, or of `only`.
pub async fn read_state(
    store: &Store,
    only: Option<&str>,
    now: DateTime<Utc>,
) -> Result<RecordedState, StoreError> {
    let mut names = store.campaigns().campaign_names().await?;
    names.retain(|name| only.is_none_or(|o| o == name));
    let state = read_state_of(store, &names, now).await?;
    // Every name listed has its budget: one missing is an error, as `Recorded::load` says.
    match names.iter().find(|n| !state.campaigns.contains_key(*n)) {
        Some(n) => Err(StoreError::NotFound {
            what: format!("campaign `{n}`"),
        }),
        None => Ok(state),
    }
}

/// The state of those of `names` the journal knows (the others are left out), in one batch.
pub(crate) async fn read_state_of(
    store: &Store,
    names: &[String],
    now: DateTime<Utc>,
) -> Result<RecordedState, StoreError> {
    let (campaigns, halts) =
        load_with_halts(store, names, now.date_naive(), BatchRead::Auto).await?;
    let global_halts = halts.into_iter().filter(Halt::is_global).collect();
    Ok(RecordedState {
        at: now,
        global_halts,
        campaigns,
    })
}

impl RecordedState {
    /// As [`Recorded::load_or_new`]: the campaign's recorded state, or nothing recorded under
    /// its own caps and the global halts.
    fn take_or_new(&mut self, c: &Campaign) -> Recorded {
        match self.campaigns.remove(&c.name) {
            Some(r) => r,
            None => {
                let caps = crate::decide::caps::caps(c);
                let mut r = Recorded::unrecorded_with(&caps, self.global_halts.clone());
                r.budget.day = Some(self.at.date_naive());
                r
            }
        }
    }
}

/// What `plan` shows: the plan of each `wanted` campaign file, in their order, then of each
/// `wanted` campaign the journal knows whose file is gone, or exists but fails validation
/// (`invalid`: held as recorded, planned to change nothing). The journal is read in batches of
/// [`CHUNK`] campaigns (a dozen queries each, not a dozen per campaign), each planned and
/// dropped before the next is read, so memory stays that of one batch however many there are.
pub async fn plan_all(
    source: &StateSource,
    campaigns: &[&Campaign],
    invalid: &InvalidFiles,
    wanted: impl Fn(&str) -> bool,
    now: DateTime<Utc>,
) -> Result<Vec<CampaignPlan>, StoreError> {
    let files: HashSet<&str> = campaigns.iter().map(|c| c.name.as_str()).collect();
    let chosen: Vec<&Campaign> = campaigns
        .iter()
        .copied()
        .filter(|c| wanted(&c.name))
        .collect();
    let mut removed = source.campaign_files().await?;
    let recorded: HashSet<String> = removed.iter().map(|k| k.name.clone()).collect();
    let handed_over = |c: &Campaign| {
        let old = c.renamed_from.as_deref()?;
        let how = rename::step(recorded.contains(old), recorded.contains(&c.name));
        (how == rename::RenameStep::HandOver).then(|| old.to_string())
    };
    // A campaign renamed by a loaded file is not removed: the new name's plan shows the rename.
    let renamed: HashSet<String> = campaigns.iter().filter_map(|c| handed_over(c)).collect();
    removed.retain(|k| {
        wanted(&k.name) && !files.contains(k.name.as_str()) && !renamed.contains(&k.name)
    });
    let owners = source.domain_owners().await?;
    let mut plans = Vec::with_capacity(chosen.len() + removed.len());
    for batch in chosen.chunks(CHUNK) {
        let mut names: Vec<String> = batch.iter().map(|c| c.name.clone()).collect();
        names.extend(batch.iter().filter_map(|c| handed_over(c)));
        names.extend(moved_from(batch));
        let mut state = source.state_of(&names, now).await?;
        // Ids the file names that another campaign holds, as the pass judges them: after a
        // rename is handed over, what the old name held is the new name's own.
        let mut claims = Vec::with_capacity(batch.len());
        for c in batch {
            let mut owners = source.id_owners(c).await?;
            let mut across = None;
            if let Some(old) = handed_over(c) {
                owners.drop_held_by(&old);
                across = source
                    .campaign_account(&old)
                    .await?
                    .and_then(|was| rename::cross_account(&old, &c.name, &was, &c.account));
            }
            claims.push(across.or_else(|| rename::claimed_id(c, &owners)));
        }
        // Judged for the whole batch first: a source in the batch is planned (and its record
        // taken) before the campaign its autobuyer moved to may be.
        let refusals: Vec<Option<String>> = batch
            .iter()
            .map(|c| {
                let here = state.campaigns.get(&c.name).map(|r| r.ids.clone());
                let source_of = |n: &str| state.campaigns.get(n).map(|r| &r.ids);
                moves::refused(c, &here.unwrap_or_default(), source_of)
            })
            .collect();
        for ((c, refused), claim) in batch.iter().zip(refusals).zip(claims) {
            let refused = refused.or(claim);
            let p = match handed_over(c).and_then(|old| Some((state.campaigns.remove(&old)?, old)))
            {
                Some((r, old)) => {
                    let mut p = match &refused {
                        Some(why) => plan_claimed(&c.name, &r, why),
                        None => plan_campaign(c, &r, c.buy.is_some()),
                    };
                    p.renamed = Some(rename::Renamed::of(&old, &c.name, &r));
                    p.moved = moves::carried(c, &old, &r.ids);
                    p
                }
                None => {
                    match (
                        refused,
                        recorded.contains(&c.name),
                        rename::domain_owner(c, &owners),
                    ) {
                        (Some(why), _, _) => plan_claimed(&c.name, &state.take_or_new(c), &why),
                        (None, false, Some(o)) => {
                            plan_claimed(&c.name, &state.take_or_new(c), &rename::claimed_by(o))
                        }
                        _ => plan_campaign(c, &state.take_or_new(c), c.buy.is_some()),
                    }
                }
            };
            plans.push(p);
        }
    }
    for batch in removed.chunks(CHUNK) {
        let names: Vec<String> = batch.iter().map(|k| k.name.clone()).collect();
        let mut state = source.state_of(&names, now).await?;
        for k in batch {
            let name = &k.name;
            let r = state
                .campaigns
                .remove(name)
                .ok_or_else(|| StoreError::NotFound {
                    what: format!("campaign `{name}`"),
                })?;
            plans.push(match invalid.holds(name, k.file.as_deref()) {
                true => {
                    let file = invalid.file_of(name, k.file.as_deref());
                    let file = file.map_or("its file".into(), |f| f.display().to_string());
                    plan_held(name, &r, &file)
                }
                false => plan_removed(name, &r),
            });
        }
    }
    Ok(plans)
}

/// Where `plan` reads what was recorded: the journal itself, or a daemon's served state.
pub enum StateSource {
    Journal(Store),
    Served(RecordedState),
}

impl StateSource {
    /// The campaigns the journal knows, with the file each was last loaded from (a served
    /// state does not say: a nameless invalid file then holds every campaign it may be).
    pub(crate) async fn campaign_files(&self) -> Result<Vec<CampaignFile>, StoreError> {
        match self {
            StateSource::Journal(s) => s.campaigns().campaign_files().await,
            StateSource::Served(st) => Ok(st
                .campaigns
                .keys()
                .map(|name| CampaignFile {
                    name: name.clone(),
                    file: None,
                    renamed_from: None,
                })
                .collect()),
        }
    }

    /// Every recorded campaign whose project's domain is known (a served state does not say:
    /// the daemon that serves it blocks a claimed domain at its pass).
    pub(crate) async fn domain_owners(
        &self,
    ) -> Result<Vec<linkrunner_domain::records::DomainOwner>, StoreError> {
        match self {
            StateSource::Journal(s) => s.campaigns().domain_owners().await,
            StateSource::Served(_) => Ok(Vec::new()),
        }
    }

    /// The ids `c` names that the journal records under other campaigns ([`id_owners`]; a
    /// served state does not say: the daemon that serves it blocks such a claim at its pass).
    pub(crate) async fn id_owners(&self, c: &Campaign) -> Result<IdOwners, StoreError> {
        match self {
            StateSource::Journal(s) => id_owners(s, c).await,
            StateSource::Served(_) => Ok(IdOwners::default()),
        }
    }

    /// The account the journal recorded `name` in (a served state does not say: the daemon
    /// that serves it refuses a rename across accounts at its pass).
    pub(crate) async fn campaign_account(&self, name: &str) -> Result<Option<String>, StoreError> {
        match self {
            StateSource::Journal(s) => s.campaigns().campaign_account(name).await,
            StateSource::Served(_) => Ok(None),
        }
    }

    /// The state of those of `names` it knows: from the journal in one batch read.
    pub(crate) async fn state_of(
        &self,
        names: &[String],
        now: DateTime<Utc>,
    ) -> Result<RecordedState, StoreError> {
        match self {
            StateSource::Journal(s) => read_state_of(s, names, now).await,
            StateSource::Served(st) => Ok(RecordedState {
                at: st.at,
                global_halts: st.global_halts.clone(),
                campaigns: names
                    .iter()
                    .filter_map(|n| Some((n.clone(), st.campaigns.get(n)?.clone())))
                    .collect(),
            }),
        }
    }
}

/// What the journal records, under other campaigns than `c`'s (live or removed) of `c`'s
/// account, of the ids `c` names: its `project_id`, its autobuyers' `id`s and its URLs'
/// `url_id`s (`decide::rename::claimed_id` judges it). Another account's campaigns are not
/// read: its ids are another marketplace account's, which may coincide (issue 34). One read
/// per id the file names, none otherwise.
pub(crate) async fn id_owners(store: &Store, c: &Campaign) -> Result<IdOwners, StoreError> {
    let campaigns = store.campaigns();
    let (name, account) = (c.name.as_str(), c.account.as_str());
    let mut owners = IdOwners::default();
    if let Some(pid) = c.project_id {
        owners.project = campaigns.project_owner(pid, name, account).await?;
    }
    for id in c.autobuyers.iter().filter_map(|a| a.id) {
        if let Some(owner) = campaigns.autobuyer_owner(id, name, account).await? {
            owners.autobuyers.insert(id, owner);
        }
    }
    for id in c.urls.iter().filter_map(|u| u.url_id) {
        if let Some(owner) = campaigns.url_owner(id, name, account).await? {
            owners.urls.insert(id, owner);
        }
    }
    Ok(owners)
}

/// The campaigns the batch's autobuyers say they moved from (`moved_from`), read with the
/// batch so `plan` judges each move against its source's record.
fn moved_from(batch: &[&Campaign]) -> Vec<String> {
    let mut names: Vec<String> = batch
        .iter()
        .flat_map(|c| c.autobuyers.iter().filter_map(|a| a.moved_from.clone()))
        .collect();
    names.sort();
    names.dedup();
    names
}

//! The journal's recorded state as `plan` reads it, for planning without the database: the
//! daemon serves it read-only (`GET /api/v1/state`) and `plan --state-from URL` plans the
//! files under review against it ([`StateSource`]). It is exactly what [`Recorded::load`]
//! reads per campaign, plus the global halts a campaign the journal has never seen is under.
//! The journal holds no credentials, so neither does this (tested in `tests/it`
//! `daemon::state`).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::recorded::Recorded;
use crate::campaign::Campaign;
use crate::store::{Halt, Store, StoreError};

/// Every campaign's recorded state at one instant.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordedState {
    /// When it was read (its budget's "links today" is of this day, UTC).
    pub at: DateTime<Utc>,
    /// Halts that stop every campaign (credentials rejected).
    pub global_halts: Vec<Halt>,
    /// Per campaign the journal knows, by name.
    pub campaigns: BTreeMap<String, Recorded>,
}

/// Reads the state of every campaign the journal knows, or of `only`.
pub async fn read_state(
    store: &Store,
    only: Option<&str>,
    now: DateTime<Utc>,
) -> Result<RecordedState, StoreError> {
    let today = now.date_naive();
    let mut campaigns = BTreeMap::new();
    for name in store.campaign_names().await? {
        if only.is_none_or(|o| o == name) {
            let r = Recorded::load(store, &name, today).await?;
            campaigns.insert(name, r);
        }
    }
    let global_halts = store
        .halts()
        .await?
        .into_iter()
        .filter(Halt::is_global)
        .collect();
    Ok(RecordedState {
        at: now,
        global_halts,
        campaigns,
    })
}

/// Where `plan` reads what was recorded: the journal itself, or a daemon's served state.
pub enum StateSource {
    Journal(Store),
    Served(RecordedState),
}

impl StateSource {
    /// The campaigns the journal knows.
    pub async fn campaign_names(&self) -> Result<Vec<String>, StoreError> {
        match self {
            StateSource::Journal(s) => s.campaign_names().await,
            StateSource::Served(st) => Ok(st.campaigns.keys().cloned().collect()),
        }
    }

    /// As [`Recorded::load_or_new`].
    pub async fn load_or_new(
        &self,
        c: &Campaign,
        now: DateTime<Utc>,
    ) -> Result<Recorded, StoreError> {
        match self {
            StateSource::Journal(s) => Recorded::load_or_new(s, c, now.date_naive()).await,
            StateSource::Served(st) => Ok(match st.campaigns.get(&c.name) {
                Some(r) => r.clone(),
                None => Recorded::unrecorded_with(&super::caps(c), st.global_halts.clone()),
            }),
        }
    }

    /// As [`Recorded::load`], for a campaign [`StateSource::campaign_names`] listed.
    pub async fn load(&self, name: &str, now: DateTime<Utc>) -> Result<Recorded, StoreError> {
        match self {
            StateSource::Journal(s) => Recorded::load(s, name, now.date_naive()).await,
            StateSource::Served(st) => {
                st.campaigns
                    .get(name)
                    .cloned()
                    .ok_or_else(|| StoreError::NotFound {
                        what: format!("campaign {name} in the served state"),
                    })
            }
        }
    }
}

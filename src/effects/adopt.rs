//! The effect of the plan's `AdoptProject` (issue 24): the journal's record of what a file
//! adopts in an account already in use, as `decide::adoption::adoption_step` decided it — the
//! project (never created), the URL and text ids the file gives, and autobuyers by id (counted
//! as running at their declared budget from this moment). The pass runs it first
//! (`decide::pass::pre_plan`), before the link list is first read, so that read is matched
//! against it. Nothing here calls the marketplace or decides: when the journal's own guard
//! finds another process changed what the decision read (two daemons racing), the pass stops
//! with the decision's words for the re-pointing it refused. Changes on the project wait for
//! the operator's `resolve adopt` (`crate::decide::plan`, and the pass's gate).

use crate::decide::adoption::{
    AdoptedAutobuyer, Adopting, autobuyer_repointed, project_repointed, url_repointed,
};
use crate::market::Market;
use crate::store::{AdoptOutcome, AdoptedAutobuyer as AutobuyerRow};

use super::Engine;
use super::error::EngineError;

impl<M: Market> Engine<M> {
    /// Records what campaign `name` adopts (`a`): the project, then its URL and text ids,
    /// then each autobuyer, each step only once the one before it was recorded unchanged.
    pub(super) async fn adopt(&self, name: &str, a: &Adopting) -> Result<(), EngineError> {
        let campaigns = self.store.campaigns();
        let now = self.clock.now();
        if let AdoptOutcome::OtherProject { recorded } =
            campaigns.adopt_project(name, a.project_id, now).await?
        {
            return Err(EngineError::Blocked(project_repointed(
                a.project_id,
                recorded,
            )));
        }
        let differ = campaigns.adopt_ids(name, &a.urls, &a.texts).await?;
        if !differ.is_empty() {
            return Err(EngineError::Blocked(url_repointed(&differ)));
        }
        for ab in &a.autobuyers {
            if let Some(recorded) = campaigns.adopt_autobuyer(name, &row(ab), now).await? {
                return Err(EngineError::Blocked(autobuyer_repointed(
                    &ab.name, recorded, ab.id,
                )));
            }
        }
        Ok(())
    }
}

/// The journal's row of an autobuyer the decision adopts.
fn row(ab: &AdoptedAutobuyer) -> AutobuyerRow<'_> {
    AutobuyerRow {
        name: &ab.name,
        id: ab.id,
        spec_fingerprint: &ab.spec_fingerprint,
        monthly_budget: ab.monthly_budget,
        covers: ab.covers.clone(),
    }
}

//! Adopting what a file names in an account already in use (issue 24), before the pass
//! plans: the project (never created, never re-pointed), the URL and text ids the file gives,
//! and autobuyers by id (counted as running at their declared budget from this moment).
//! Nothing here calls the marketplace: it records what the file declares, so that the first
//! read of the link list is matched against it. Changes on the project wait for the
//! operator's `resolve adopt` (`crate::decide::plan`, and the pass's gate).

use crate::campaign::Campaign;
use crate::decide::adoption::project_clash;
use crate::decide::caps::{autobuyer_budget, autobuyer_fingerprint};
use crate::decide::recorded::Recorded;
use crate::market::Market;
use crate::store::{AdoptOutcome, AdoptedAutobuyer};

use super::Engine;
use super::error::EngineError;

impl<M: Market> Engine<M> {
    /// Records what `c` adopts; `Ok(true)` when the journal may have changed (read it again).
    /// A project, URL or autobuyer id that differs from what the journal holds is refused.
    pub(super) async fn prepare_adoption(
        &self,
        c: Option<&Campaign>,
        r: &Recorded,
    ) -> Result<bool, EngineError> {
        let Some(c) = c else {
            return Ok(false);
        };
        if let Some(why) = project_clash(c, r) {
            return Err(EngineError::Blocked(why));
        }
        let Some(project_id) = c.project_id else {
            return Ok(false);
        };
        let now = self.clock.now();
        if let AdoptOutcome::OtherProject { recorded } = self
            .store
            .campaigns()
            .adopt_project(&c.name, project_id, now)
            .await?
        {
            return Err(EngineError::Blocked(format!(
                "`project_id` is {project_id}, but this campaign already ran on project {recorded}: refused"
            )));
        }
        self.adopt_ids(c).await?;
        for ab in &c.autobuyers {
            let Some(id) = ab.id else { continue };
            let covers = ab
                .urls
                .iter()
                .filter_map(|u| c.urls.iter().find(|x| x.url == u.url)?.url_id)
                .collect();
            let a = AdoptedAutobuyer {
                name: &ab.name,
                id,
                spec_fingerprint: &autobuyer_fingerprint(c, ab),
                monthly_budget: autobuyer_budget(ab),
                covers,
            };
            if let Some(recorded) = self
                .store
                .campaigns()
                .adopt_autobuyer(&c.name, &a, now)
                .await?
            {
                return Err(EngineError::Blocked(format!(
                    "autobuyer {} is recorded with id {recorded}, but the file adopts id {id}: an autobuyer is \
                     never re-pointed; give the adopted one a new name (the recorded one is then stopped)",
                    ab.name
                )));
            }
        }
        Ok(true)
    }

    async fn adopt_ids(&self, c: &Campaign) -> Result<(), EngineError> {
        let urls: Vec<(String, i64)> = c
            .urls
            .iter()
            .filter_map(|u| Some((u.url.clone(), u.url_id?)))
            .collect();
        let texts: Vec<((String, String), i64)> = c
            .urls
            .iter()
            .flat_map(|u| {
                u.text_ids
                    .iter()
                    .map(|(t, id)| ((u.url.clone(), t.clone()), *id))
            })
            .collect();
        let differ = self
            .store
            .campaigns()
            .adopt_ids(&c.name, &urls, &texts)
            .await?;
        if !differ.is_empty() {
            return Err(EngineError::Blocked(format!(
                "the journal holds another url id for {}: a URL's id is never re-pointed; correct `url_id` in the file",
                differ.join(", ")
            )));
        }
        Ok(())
    }
}

//! A rename handed over at the new name's pass (issue 32): before the new name is recorded
//! at all, the pass takes the old name's in-process lock and journal lease (so no pass of the
//! old name, here or in another process, runs while its record moves), reads what carries
//! over, and moves it in one journal transaction (`store::Campaigns::rename_campaign`).
//! While another process holds the old name's lease, the rename waits: the new name's pass
//! is skipped (nothing recorded under it, nothing bought), and tried again.
//!
//! An autobuyer's `moved_from` is judged with the campaign's identity (`check_identity`): a
//! move the rename carries goes with it; any other is refused before anything is recorded.
//!
//! A URL respelt with its recorded `url_id` is re-spelt the same way at its campaign's pass,
//! under that campaign's own lease (`store::Campaigns::respell_urls`).

use crate::decide::moves::refused;
use crate::decide::rename::{
    RenameStep, Renamed, claimed_by, claimed_id, cross_account, domain_owner, renamed_key, step,
};
use crate::decide::respell::respelling;
use crate::market::Market;
use crate::store::RespeltUrl;

use super::{Engine, EngineError};

/// What a file's `renamed_from` did at this pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HandOver {
    /// Nothing to do: the new name is recorded already, or the old one never was.
    Ignored,
    /// The old name's record is now the new name's.
    Done(Renamed),
    /// Another process holds the old name's lease: who, until when.
    Waits(String),
    /// The old name spends in another account than the file names: its project, ids and
    /// money are that account's, so nothing is handed over (why, with the way out).
    Refused(String),
}

impl<M: Market> Engine<M> {
    /// Hands everything `old` owns to `new` when the journal holds `old` and not `new`.
    pub(crate) async fn hand_over(&self, old: &str, new: &str) -> Result<HandOver, EngineError> {
        let recorded = self.store.campaigns().recorded_among(&[old, new]).await?;
        let has = |n: &str| recorded.iter().any(|r| r == n);
        if step(has(old), has(new)) == RenameStep::Ignore {
            return Ok(HandOver::Ignored);
        }
        // This engine is the file's account's (`pass::account_engine`): a rename from another
        // account would send the old account's project and ids to this one's marketplace.
        let was = self.store.campaigns().campaign_account(old).await?;
        if let Some(why) = was.and_then(|was| cross_account(old, new, &was, &self.account)) {
            return Ok(HandOver::Refused(why));
        }
        let lock = self.campaign_lock(old);
        let _guard = self.slots.idle(lock.lock()).await;
        let token = match self.acquire_lease(old).await? {
            Ok(token) => token,
            Err(why) => return Ok(HandOver::Waits(why)),
        };
        let moved = async {
            let r = self.load(old).await?;
            let renamed = Renamed::of(old, new, &r);
            let rekey = |k: &str| renamed_key(k, old, new);
            let done = self
                .store
                .campaigns()
                .rename_campaign(old, new, &token, self.clock.now(), &rekey)
                .await?;
            Ok::<_, EngineError>(done.then_some(renamed))
        }
        .await;
        match moved {
            Ok(Some(renamed)) => {
                tracing::info!(from = %old, to = %new, project = ?renamed.project_id, links = renamed.links, "campaign renamed: everything it held carries over");
                Ok(HandOver::Done(renamed))
            }
            other => {
                // The lease was not consumed by the rename: let it go for the next pass.
                let _ = self.store.leases().release_lease(&token).await;
                other.map(|_| HandOver::Ignored)
            }
        }
    }
}

/// Whether a campaign file's campaign may be recorded and worked on at this pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Identity {
    /// Go on; `record_domain`: its project's domain is not recorded yet.
    Ready { record_domain: bool },
    /// Not recorded yet, and its site is a recorded campaign's: blocked, never a second
    /// project; why, with the way out (`renamed_from`).
    Claimed(String),
}

impl<M: Market> Engine<M> {
    /// Checks a campaign file against what the journal records of other campaigns' domains
    /// (`decide::rename::domain_owner`): only a campaign not recorded yet reads them.
    pub(crate) async fn check_identity(
        &self,
        c: &crate::campaign::Campaign,
    ) -> Result<Identity, EngineError> {
        let ready = |record_domain| Ok(Identity::Ready { record_domain });
        if let Some(why) = self.refused_move(c).await? {
            return Ok(Identity::Claimed(why));
        }
        if let Some(why) = self.claimed_ids(c).await? {
            return Ok(Identity::Claimed(why));
        }
        match self.store.campaigns().campaign_domain(&c.name).await? {
            Some(domain) => ready(domain.is_none()),
            None => {
                let owners = self.store.campaigns().domain_owners().await?;
                match domain_owner(c, &owners) {
                    Some(o) => Ok(Identity::Claimed(claimed_by(o))),
                    None => ready(true),
                }
            }
        }
    }

    /// Why an autobuyer's `moved_from` is refused (`decide::moves::refused`), read against
    /// what the journal holds under this campaign and under each source. No read at all
    /// when no autobuyer says it moved.
    async fn refused_move(
        &self,
        c: &crate::campaign::Campaign,
    ) -> Result<Option<String>, EngineError> {
        let mut sources: Vec<&str> = c
            .autobuyers
            .iter()
            .filter_map(|a| a.moved_from.as_deref())
            .collect();
        if sources.is_empty() {
            return Ok(None);
        }
        sources.sort_unstable();
        sources.dedup();
        let campaigns = self.store.campaigns();
        let here = campaigns.remote_ids(&c.name).await?;
        let mut read = std::collections::BTreeMap::new();
        for s in sources {
            read.insert(s.to_string(), campaigns.remote_ids(s).await?);
        }
        Ok(refused(c, &here, |n: &str| read.get(n)))
    }

    /// The first id the file names (`project_id`, an autobuyer's `id`, a URL's `url_id`)
    /// that the journal records under another campaign, live or removed, said with its owner
    /// (`views::state::id_owners` reads them, `decide::rename::claimed_id` judges).
    async fn claimed_ids(
        &self,
        c: &crate::campaign::Campaign,
    ) -> Result<Option<String>, EngineError> {
        let owners = crate::views::state::id_owners(&self.store, c).await?;
        Ok(claimed_id(c, &owners))
    }

    /// Whether a scheduled round may record the campaign now: not while its rename waits
    /// to be handed over, nor while its domain is another campaign's (the reconciliation's
    /// pass does the one and reports the other).
    pub(crate) async fn may_record(
        &self,
        c: &crate::campaign::Campaign,
    ) -> Result<bool, EngineError> {
        if let Some(old) = c.renamed_from.as_deref() {
            let recorded = self
                .store
                .campaigns()
                .recorded_among(&[old, &c.name])
                .await?;
            let has = |n: &str| recorded.iter().any(|r| r == n);
            if step(has(old), has(&c.name)) == RenameStep::HandOver {
                return Ok(false);
            }
        }
        Ok(matches!(
            self.check_identity(c).await?,
            Identity::Ready { .. }
        ))
    }
}

impl<M: Market> Engine<M> {
    /// Re-spells the URLs `c` gives under a new spelling with their recorded `url_id`
    /// (`decide::respell`), under the campaign's lease, before anything is planned: so
    /// nothing is added on the marketplace for the new spelling and no page is bought again.
    /// A `url_id` the journal refuses blocks the pass (nothing is done). `Ok(true)`: the
    /// journal changed (read it again).
    pub(crate) async fn respell_urls(
        &self,
        lease: &crate::effects::lease::HeldLease,
        c: Option<&crate::campaign::Campaign>,
        r: &crate::decide::recorded::Recorded,
    ) -> Result<bool, EngineError> {
        let Some(c) = c else { return Ok(false) };
        let s = respelling(c, r).map_err(EngineError::Blocked)?;
        if s.is_empty() {
            return Ok(false);
        }
        let urls: Vec<RespeltUrl<'_>> = s
            .urls
            .iter()
            .map(|u| RespeltUrl {
                url_id: u.url_id,
                from: &u.from,
                to: &u.to,
            })
            .collect();
        let name = c.name.as_str();
        let done = self
            .store
            .campaigns()
            .respell_urls(
                name,
                lease.token(),
                self.clock.now(),
                &urls,
                &s.fingerprints,
            )
            .await?;
        for u in s.urls.iter().take(done) {
            tracing::info!(campaign = %name, url_id = u.url_id, from = %u.from, to = %u.to, links = u.links, "URL respelt: its links, purchases and taken pages carry over (keyed by its url id)");
        }
        Ok(done > 0)
    }
}

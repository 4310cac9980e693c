//! Removals judged under the daemon (issue 32): after every reload, and every few seconds
//! while a removal is held (another process's `resolve removals`, a replica's files), the
//! campaigns whose files are gone are judged ([`crate::effects::removals`]) with the set's
//! write lock held, so no reconciliation can remove a campaign before the verdict.

use std::sync::atomic::Ordering;

use crate::market::Market;

use super::campaigns::CampaignSet;
use super::run::Daemon;

impl<M: Market> Daemon<M> {
    /// Judges the removals of `set`; returns why they are held, if they are. When the journal
    /// cannot answer, every campaign whose file is gone is held until it does.
    pub(super) async fn judge_removals(&self, set: &mut CampaignSet) -> Option<String> {
        // Every file's campaign, held here or of an account another process works: a
        // campaign not held here still has its file, so it is neither gone nor counted so.
        let names: Vec<String> = set.file_names().map(str::to_string).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        // From the files' own account each time: a hold of an earlier judgement is not input.
        let mut invalid = set.files_invalid().clone();
        let held = match self.engine.judge_removals(&names, &mut invalid).await {
            Ok(j) => {
                if let Some(why) = &j.held {
                    tracing::warn!(campaigns = ?j.campaigns, "{why}");
                } else {
                    for name in &j.campaigns {
                        tracing::info!(campaign = %name, "campaign file removed: the campaign is reconciled as removed (nothing new bought, its autobuyers stopped)");
                    }
                }
                j.held
            }
            Err(e) => {
                invalid.hold_everything();
                let why = format!(
                    "removals not judged (journal: {}): every campaign whose file is gone is held until the journal answers",
                    e.label()
                );
                tracing::warn!(error = %e, "{why}");
                Some(why)
            }
        };
        set.set_invalid(invalid);
        self.removals_unsettled
            .store(held.is_some(), Ordering::Release);
        self.health.set_removal_hold(held.clone());
        held
    }

    /// While removals are held: judges them again (an operator's `resolve removals` from any
    /// process, files returned); when they now proceed, their campaigns are reconciled at once.
    pub(super) async fn rejudge_held_removals(&self) {
        if !self.removals_unsettled.load(Ordering::Acquire) {
            return;
        }
        let held = {
            let mut set = self.set.write().await;
            let held = self.judge_removals(&mut set).await;
            self.publish_files(&set);
            held
        };
        if held.is_none() {
            self.reconcile_changed(None).await;
        }
    }
}

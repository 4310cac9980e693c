//! Removals judged before anything is stopped (issue 32). After each reading of the campaign
//! files, `run` and `once` note in the journal which recorded campaigns' files are gone and
//! which returned, ask [`crate::decide::removal::judge`] whether those removals proceed, record
//! the verdict, and hold the campaigns of a held removal as recorded (through
//! [`InvalidFiles::hold_removals`], so every pass that would remove them holds them instead).

use std::collections::BTreeSet;

use crate::campaign::InvalidFiles;
use crate::decide::removal::{Verdict, judge};
use crate::market::Market;

use super::{Engine, EngineError};

/// What a judgement found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RemovalJudgement {
    /// Why removals are held (`None`: nothing is held).
    pub(crate) held: Option<String>,
    /// The campaigns whose removal is held, or that proceed now.
    pub(crate) campaigns: Vec<String>,
}

impl<M: Market> Engine<M> {
    /// Judges the removals with `loaded` campaign names read from the files and `invalid` the
    /// files that exist but did not load; marks the held ones in `invalid`. A directory that
    /// could not be read tells no file gone: nothing is judged.
    pub(crate) async fn judge_removals(
        &self,
        loaded: &[&str],
        invalid: &mut InvalidFiles,
    ) -> Result<RemovalJudgement, EngineError> {
        let rule = &self.settings.removals;
        invalid.hold_removals(Vec::new(), "");
        invalid.hold_behind_renames(Vec::new());
        if invalid.holds_everything() {
            return Ok(RemovalJudgement::default());
        }
        let known = self.store.campaigns().campaign_files().await?;
        let loaded: BTreeSet<&str> = loaded.iter().copied().collect();
        let mut present: BTreeSet<String> = loaded.iter().map(|n| n.to_string()).collect();
        let mut gone = Vec::new();
        let mut behind = Vec::new();
        for k in known.iter().filter(|k| !loaded.contains(k.name.as_str())) {
            // Renamed by another process whose files are newer: this one still loads the old
            // name's file. Present (held as recorded), so a replica that reloads before the
            // others stops nothing.
            if let Some(old) = k.renamed_from.as_deref().filter(|o| loaded.contains(o)) {
                behind.push((k.name.clone(), old.to_string()));
                present.insert(k.name.clone());
                continue;
            }
            // A file that exists but fails validation holds its campaign: present, not gone.
            // So does a file renamed from it (`renamed_from`): its record is handed over.
            let renamed = invalid
                .renamed_to(&k.name)
                .is_some_and(|new| !known.iter().any(|k| k.name == new));
            match renamed || invalid.holds(&k.name, k.file.as_deref()) {
                true => present.insert(k.name.clone()),
                false => {
                    gone.push(k.name.clone());
                    false
                }
            };
        }
        invalid.hold_behind_renames(behind);
        let now = self.clock.now();
        let rows = self
            .store
            .campaigns()
            .observe_removals(&gone, &present, now)
            .await?;
        match judge(present.len(), &rows, rule, now) {
            Verdict::Hold(hold) => {
                self.store.campaigns().hold_removals(&hold.held).await?;
                let reason = hold.reason(rule);
                self.metrics.removals_held.set(hold.held.len() as i64);
                invalid.hold_removals(hold.held.iter().cloned(), &reason);
                Ok(RemovalJudgement {
                    held: Some(reason),
                    campaigns: hold.held,
                })
            }
            Verdict::Proceed { proceed } => {
                self.store.campaigns().proceed_removals(&proceed).await?;
                self.metrics.removals_held.set(0);
                Ok(RemovalJudgement {
                    held: None,
                    campaigns: proceed,
                })
            }
        }
    }
}

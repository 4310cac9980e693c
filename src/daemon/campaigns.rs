//! The campaigns the daemon runs. A file that fails validation is reported and ignored, and
//! its campaign is held as the journal recorded it — nothing stopped, nothing bought, no round
//! run — whether the file broke while the daemon ran or was already broken when it started
//! ([`crate::campaign::InvalidFiles`]), as `once` and `plan` do: an operator's typo must not
//! keep spending on a version the operator is changing. A file that is gone is dropped (the
//! engine then treats the campaign as removed: nothing new is bought, its autobuyers stop).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::campaign::{self, Diagnostic, InvalidFiles, LoadedCampaign};
use crate::views::overview::FileFact;

#[derive(Debug, Default, Clone)]
pub(crate) struct CampaignSet {
    /// Shared, so a reconciliation's or a round's copy is a pointer, not a second copy of
    /// every campaign (at 10,000 campaigns that copy was 20 MiB).
    by_path: BTreeMap<PathBuf, Arc<LoadedCampaign>>,
    /// Each campaign's file, by campaign name: [`Self::get`] runs per round and per report,
    /// so with thousands of campaigns it must not scan them all.
    by_name: HashMap<String, PathBuf>,
    /// The files of the last reload that exist but did not load: the engine holds their
    /// recorded campaigns instead of removing them.
    invalid: InvalidFiles,
    /// [`Self::invalid`] as the last reload found the files, before removals were judged
    /// (each judgement starts from it; [`Self::set_invalid`] adds the held removals).
    files_invalid: InvalidFiles,
}

/// What a reload did.
#[derive(Debug, Default, Clone)]
pub struct ReloadSummary {
    pub loaded: usize,
    pub changed: Vec<String>,
    /// Files that loaded before and fail validation now: their campaigns are held.
    pub held: Vec<PathBuf>,
    /// Files that are gone: their campaigns are removed.
    pub removed: Vec<PathBuf>,
    pub problems: Vec<Diagnostic>,
    /// Files that exist but fail validation (each once), their campaigns held as recorded:
    /// the `linkrunner_campaign_file_invalid` gauge.
    pub(crate) invalid_files: usize,
    /// Why the removal of the campaigns whose files are gone is held (issue 32), if it is.
    pub(crate) removal_held: Option<String>,
}

impl ReloadSummary {
    pub(crate) fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

impl CampaignSet {
    pub(crate) fn iter(&self) -> impl Iterator<Item = &LoadedCampaign> {
        self.by_path.values().map(|c| &**c)
    }

    /// Every loaded campaign, shared: a reader that outlives the lock (the anomaly brake's
    /// check) takes these rather than copies of thousands of campaigns.
    pub(crate) fn shared(&self) -> impl Iterator<Item = &Arc<LoadedCampaign>> {
        self.by_path.values()
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<LoadedCampaign>> {
        self.by_path.get(self.by_name.get(name)?)
    }

    /// The files of the last reload that exist but did not load.
    pub(crate) fn invalid(&self) -> &InvalidFiles {
        &self.invalid
    }

    /// The files of the last reload that exist but did not load, before any removal was held.
    pub(crate) fn files_invalid(&self) -> &InvalidFiles {
        &self.files_invalid
    }

    /// Replaces what is held: the removals judged held (`effects::removals`) are in it.
    pub(crate) fn set_invalid(&mut self, invalid: InvalidFiles) {
        self.invalid = invalid;
    }

    /// What the files say of the recorded campaign `name`: loaded (paused or not), removed,
    /// or not known — an invalid file may be its own, and then it is held, not removed.
    pub(crate) fn file_fact(&self, name: &str) -> FileFact {
        match self.get(name) {
            Some(lc) => FileFact::Present {
                paused: lc.campaign.paused,
            },
            None if self.invalid.holds(name, None) => FileFact::Unknown,
            None => FileFact::Removed,
        }
    }

    /// Loads `dir` again: valid files replace their old version; an invalid file's campaign
    /// leaves the set and is held (see [`Self::invalid`]); vanished files are dropped. A file
    /// naming an account not in `accounts` (the deployment's) is invalid at its `account` key.
    pub(crate) fn reload(
        &mut self,
        dir: &Path,
        accounts: &std::collections::BTreeSet<String>,
    ) -> ReloadSummary {
        let mut report = campaign::load_dir(dir);
        campaign::reject_unknown_accounts(&mut report, accounts);
        let mut next = BTreeMap::new();
        let mut s = ReloadSummary::default();
        for lc in report.campaigns {
            let changed = self
                .by_path
                .get(&lc.path)
                .is_none_or(|old| old.fingerprint != lc.fingerprint);
            if changed {
                s.changed.push(lc.campaign.name.clone());
            }
            next.insert(lc.path.clone(), Arc::new(lc));
        }
        let mut invalid = report.invalid;
        for p in &report.problems {
            if let (false, Some(old)) = (next.contains_key(&p.path), self.by_path.get(&p.path)) {
                // The daemon knows what this file held: a file too broken to show its name
                // still holds that campaign, whether or not the journal recorded its path.
                invalid.push(&p.path, Some(old.campaign.name.clone()));
                if !s.held.contains(&p.path) {
                    s.held.push(p.path.clone());
                }
            }
        }
        // A directory that cannot be listed tells no file gone: every campaign is held.
        let (gone, kept): (Vec<PathBuf>, Vec<PathBuf>) = self
            .by_path
            .keys()
            .filter(|p| !next.contains_key(*p) && !s.held.contains(p))
            .cloned()
            .partition(|_| !invalid.holds_everything());
        s.removed = gone;
        s.held.extend(kept);
        s.problems = report.problems;
        s.invalid_files = invalid.len();
        self.files_invalid = invalid.clone();
        self.invalid = invalid;
        s.loaded = next.len();
        // The first file in path order wins a name, as a scan would find it.
        self.by_name.clear();
        for (path, lc) in &next {
            self.by_name
                .entry(lc.campaign.name.clone())
                .or_insert_with(|| path.clone());
        }
        self.by_path = next;
        s
    }
}

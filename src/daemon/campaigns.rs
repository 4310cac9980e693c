//! The campaigns the daemon runs. A file that fails validation is reported and ignored; the
//! campaign keeps running with its last good version, and one the daemon has no good version
//! of (the file was already invalid when it started) is held as the journal recorded it:
//! nothing stopped, nothing bought ([`crate::campaign::InvalidFiles`]). A file that is gone is
//! dropped (the engine then treats the campaign as removed: nothing new is bought, its
//! autobuyers stop).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::campaign::{self, Diagnostic, InvalidFiles, LoadedCampaign};

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
}

/// What a reload did.
#[derive(Debug, Default, Clone)]
pub struct ReloadSummary {
    pub loaded: usize,
    pub changed: Vec<String>,
    pub kept_last_good: Vec<PathBuf>,
    pub removed: Vec<PathBuf>,
    pub problems: Vec<Diagnostic>,
    /// Files that exist but fail validation (each once), kept last good or held as recorded:
    /// the `linkrunner_campaign_file_invalid` gauge.
    pub invalid_files: usize,
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

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<LoadedCampaign>> {
        self.by_path.get(self.by_name.get(name)?)
    }

    /// The files of the last reload that exist but did not load.
    pub(crate) fn invalid(&self) -> &InvalidFiles {
        &self.invalid
    }

    /// Loads `dir` again and merges: valid files replace their old version, invalid files keep
    /// their last good version, vanished files are dropped.
    pub(crate) fn reload(&mut self, dir: &Path) -> ReloadSummary {
        let report = campaign::load_dir(dir);
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
        for p in &report.problems {
            if let (false, Some(old)) = (next.contains_key(&p.path), self.by_path.get(&p.path)) {
                next.insert(p.path.clone(), old.clone());
                if !s.kept_last_good.contains(&p.path) {
                    s.kept_last_good.push(p.path.clone());
                }
            }
        }
        s.removed = self
            .by_path
            .keys()
            .filter(|p| !next.contains_key(*p))
            .cloned()
            .collect();
        s.problems = report.problems;
        s.invalid_files = report.invalid.len();
        self.invalid = report.invalid;
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

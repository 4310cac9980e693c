//! The campaigns the daemon runs. A file that fails validation is reported and ignored, and
//! its campaign is held as the journal recorded it — nothing stopped, nothing bought, no round
//! run — whether the file broke while the daemon ran or was already broken when it started
//! ([`crate::campaign::InvalidFiles`]), as `once` and `plan` do: an operator's typo must not
//! keep spending on a version the operator is changing. A file that is gone is dropped (the
//! engine then treats the campaign as removed: nothing new is bought, its autobuyers stop).
//!
//! Replicas that divide the accounts (`division.rs`) hold only their accounts' campaigns
//! (issue 34, item 2: a replica's memory is its share). Every file is still read and checked,
//! so problems and the cross-file checks are every file's; a valid campaign whose account
//! another process works is then kept apart ([`CampaignSet::elsewhere`]): never reconciled,
//! scheduled or given pass state here, never taken for a removed one (no removal pass, no
//! count toward a mass removal, never in [`ReloadSummary::removed`]), and read only by the
//! anomaly brake, which watches every campaign of the journal. When this process starts
//! working its account, the daemon reloads at once and the campaign is held here.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::campaign::{self, Diagnostic, InvalidFiles, LoadedCampaign};
use crate::decide::division::Worked;
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
    /// The valid campaigns of accounts another process works, by name: not held here; the
    /// anomaly brake alone reads them (a runaway process working their account is what it is
    /// there to stop).
    elsewhere: HashMap<String, Arc<LoadedCampaign>>,
    /// The accounts this process worked at the last reload (`None`: every account): when the
    /// engine's differ, the daemon reloads ([`Self::loaded_for`]).
    loaded_for: Worked,
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

    /// The campaigns whose files loaded but whose accounts another process works, as their
    /// files say: only the anomaly brake reads them.
    pub(crate) fn elsewhere_shared(&self) -> impl Iterator<Item = &Arc<LoadedCampaign>> {
        self.elsewhere.values()
    }

    /// The campaign `name` when its file loaded but its account is worked by another
    /// process: it has a file, and it is not held here.
    pub(crate) fn elsewhere(&self, name: &str) -> Option<&Arc<LoadedCampaign>> {
        self.elsewhere.get(name)
    }

    /// Every campaign name the valid files hold: those held here and those of accounts
    /// another process works (what removals are judged against).
    pub(crate) fn file_names(&self) -> impl Iterator<Item = &str> {
        let held = self.by_path.values().map(|lc| lc.campaign.name.as_str());
        held.chain(self.elsewhere.keys().map(String::as_str))
    }

    /// Every campaign of the valid files, held here or not, with whether it is paused.
    pub(crate) fn paused(&self) -> impl Iterator<Item = (&str, bool)> {
        let held = self
            .by_path
            .values()
            .map(|lc| (lc.campaign.name.as_str(), lc.campaign.paused));
        held.chain(
            self.elsewhere
                .iter()
                .map(|(n, e)| (n.as_str(), e.campaign.paused)),
        )
    }

    /// The campaign name the last reload read from `path`, held here or not.
    fn old_name(&self, path: &Path) -> Option<String> {
        if let Some(old) = self.by_path.get(path) {
            return Some(old.campaign.name.clone());
        }
        let mut others = self.elsewhere.iter();
        others.find(|(_, e)| e.path == path).map(|(n, _)| n.clone())
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
            None => match self.elsewhere(name) {
                Some(e) => FileFact::Present {
                    paused: e.campaign.paused,
                },
                None if self.invalid.holds(name, None) => FileFact::Unknown,
                None => FileFact::Removed,
            },
        }
    }

    /// Loads `dir` again: valid files replace their old version; an invalid file's campaign
    /// leaves the set and is held (see [`Self::invalid`]); vanished files are dropped. A file
    /// naming an account not in `accounts` (the deployment's) is invalid at its `account` key.
    /// A valid campaign of an account not in `worked` (another process works it) is kept apart
    /// ([`Self::elsewhere`]): never changed, held or removed here.
    pub(crate) fn reload(
        &mut self,
        dir: &Path,
        accounts: &std::collections::BTreeSet<String>,
        worked: Worked,
    ) -> ReloadSummary {
        let works = |a: &str| worked.as_ref().is_none_or(|w| w.contains(a));
        let mut report = campaign::load_dir(dir);
        campaign::reject_unknown_accounts(&mut report, accounts);
        let mut next = BTreeMap::new();
        let mut elsewhere = HashMap::new();
        let mut s = ReloadSummary::default();
        for lc in report.campaigns {
            if !works(&lc.campaign.account) {
                let name = lc.campaign.name.clone();
                elsewhere.entry(name).or_insert_with(|| Arc::new(lc));
                continue;
            }
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
        let present: std::collections::HashSet<&Path> = next
            .keys()
            .map(PathBuf::as_path)
            .chain(elsewhere.values().map(|e| e.path.as_path()))
            .collect();
        for p in &report.problems {
            if let (false, Some(old)) = (present.contains(p.path.as_path()), self.old_name(&p.path))
            {
                // The daemon knows what this file held: a file too broken to show its name
                // still holds that campaign, whether or not the journal recorded its path.
                invalid.push(&p.path, Some(old));
                if !s.held.contains(&p.path) {
                    s.held.push(p.path.clone());
                }
            }
        }
        // A directory that cannot be listed tells no file gone: every campaign is held. A
        // file of an account worked elsewhere that is still there is not gone.
        let before = self
            .by_path
            .keys()
            .chain(self.elsewhere.values().map(|e| &e.path));
        let (gone, kept): (Vec<PathBuf>, Vec<PathBuf>) = before
            .filter(|p| !present.contains(p.as_path()) && !s.held.contains(p))
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
        self.elsewhere = elsewhere;
        self.loaded_for = worked;
        s
    }

    /// The accounts this process worked when the set was last loaded (`None`: every one).
    pub(crate) fn loaded_for(&self) -> &Worked {
        &self.loaded_for
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A valid campaign `name` in `account` (the default one when `None`).
    fn file(name: &str, account: Option<&str>) -> String {
        let account = account.map_or_else(String::new, |a| format!("account: {a}\n"));
        format!(
            "{account}name: {name}\ndomain: https://{name}.example\nurls:\n  - url: https://{name}.example/a\n    texts: [\"#a#a#/a#\"]\nbudget: {{monthly: 1000, max_link_price: 100, daily_links: 5, total_links: 50}}\n"
        )
    }

    fn worked(accounts: &[&str]) -> Worked {
        Some(accounts.iter().map(|a| a.to_string()).collect())
    }

    #[test]
    fn a_set_holds_only_its_accounts_campaigns_and_never_takes_another_accounts_for_removed() {
        // Arrange: one campaign in each of two accounts; this process works only `default`.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.yaml"), file("home-a", None)).unwrap();
        std::fs::write(dir.path().join("b.yaml"), file("away-b", Some("b"))).unwrap();
        let accounts = ["default".to_string(), "b".to_string()].into();
        let mut set = CampaignSet::default();

        // Act 1: load for `default` alone.
        let s = set.reload(dir.path(), &accounts, worked(&["default"]));

        // Assert 1: b's campaign is not held, but it has a file: present, never removed.
        let held: Vec<&str> = set.iter().map(|c| c.campaign.name.as_str()).collect();
        assert_eq!(held, ["home-a"]);
        assert_eq!((s.loaded, s.problems.len()), (1, 0), "{:?}", s.problems);
        assert!(set.get("away-b").is_none());
        assert_eq!(
            set.elsewhere("away-b").map(|e| e.campaign.account.as_str()),
            Some("b")
        );
        assert_eq!(set.file_fact("away-b"), FileFact::Present { paused: false });
        let mut names: Vec<&str> = set.file_names().collect();
        names.sort();
        assert_eq!(
            names,
            ["away-b", "home-a"],
            "removals are judged against every file"
        );

        // Act 2: this process takes `b`.
        let s = set.reload(dir.path(), &accounts, worked(&["default", "b"]));

        // Assert 2: b's campaign is held now, as a changed one (reconciled first).
        assert_eq!(s.changed, ["away-b"]);
        assert!(s.removed.is_empty());
        assert!(set.get("away-b").is_some() && set.elsewhere("away-b").is_none());

        // Act 3: `b` goes to another process, and b's file is then removed.
        let s = set.reload(dir.path(), &accounts, worked(&["default"]));
        assert!(
            s.removed.is_empty(),
            "an account given back is no removal: {s:?}"
        );
        assert!(set.get("away-b").is_none());
        std::fs::remove_file(dir.path().join("b.yaml")).unwrap();
        let s = set.reload(dir.path(), &accounts, worked(&["default"]));

        // Assert 3: a file really gone is gone, whichever process works its account.
        assert_eq!(s.removed, [dir.path().join("b.yaml")]);
        assert_eq!(set.file_fact("away-b"), FileFact::Removed);
    }
}

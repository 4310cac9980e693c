//! Files that exist but did not load: a type error, an unknown key, broken YAML, an empty or
//! unreadable file, a name another file also uses. Their campaigns are *held*: kept exactly
//! as the journal recorded them (nothing stopped, nothing bought), never taken as removed.
//! Only a file that is really gone removes its campaign (issue 25, point 0).
//!
//! A recorded campaign is matched to an invalid file by the name the file still shows, or by
//! the file path the journal recorded for it (`campaigns.file`), so a file too broken to show
//! its `name` still holds the campaign last loaded from that path. When the directory itself
//! cannot be listed, nothing can be told gone, so every campaign is held.
//!
//! A file that is really gone is held too while its removal is held (issue 32,
//! `decide::removal`: many files gone at once, a failed checkout): [`InvalidFiles::hold_removals`].

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// One file that exists but contributed no campaign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidFile {
    /// Absolute (not resolved through symlinks: a Kubernetes ConfigMap's `..data` link changes
    /// its target on every update), as [`file_key`] spells it.
    pub(crate) path: PathBuf,
    /// The `name` the file still shows, when it parses that far.
    pub(crate) name: Option<String>,
}

/// Every file being ignored, and whether the directory could not be read at all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InvalidFiles {
    files: Vec<InvalidFile>,
    everything: bool,
    /// Campaigns whose file is gone but whose removal is held, and why.
    removals: BTreeSet<String>,
    removal_reason: Option<String>,
    /// Recorded names a loaded file says it was renamed from (`renamed_from`), old → new:
    /// such a campaign is neither removed nor held while its rename is pending; the new
    /// name's pass hands it over (`decide::rename`).
    renames: std::collections::BTreeMap<String, String>,
    /// Recorded names renamed (by another process) from a name whose file this process still
    /// loads, new → old: its files predate the rename, so the new name is held as recorded,
    /// never removed (`effects::removals`).
    behind: std::collections::BTreeMap<String, String>,
}

impl InvalidFiles {
    /// Holds every recorded campaign: the directory (or a path given) could not be read, so
    /// no campaign can be told removed.
    pub(crate) fn hold_everything(&mut self) {
        self.everything = true;
    }

    pub(crate) fn push(&mut self, path: &Path, name: Option<String>) {
        let path = file_key(path);
        if !self.files.iter().any(|f| f.path == path) {
            self.files.push(InvalidFile { path, name });
        } else if let Some(f) = self.files.iter_mut().find(|f| f.path == path) {
            f.name = f.name.take().or(name);
        }
    }

    /// Holds the campaigns `names`, whose files are gone, as recorded: their removal is held
    /// (`decide::removal`) for `reason`. Replaces the removals held before.
    pub(crate) fn hold_removals(&mut self, names: impl IntoIterator<Item = String>, reason: &str) {
        self.removals = names.into_iter().collect();
        self.removal_reason = (!self.removals.is_empty()).then(|| reason.to_string());
    }

    /// Holds the recorded campaigns `renamed` (new → old) whose old name's file this process
    /// still loads. Replaces the ones held before.
    pub(crate) fn hold_behind_renames(
        &mut self,
        renamed: impl IntoIterator<Item = (String, String)>,
    ) {
        self.behind = renamed.into_iter().collect();
    }

    /// The name `name` was renamed from, when this process's files predate that rename.
    pub(crate) fn behind_rename(&self, name: &str) -> Option<&str> {
        self.behind.get(name).map(String::as_str)
    }

    /// Notes that the loaded campaign `new` says `renamed_from: old`.
    pub(crate) fn renamed(&mut self, old: &str, new: &str) {
        self.renames.insert(old.to_string(), new.to_string());
    }

    /// The loaded campaign that says it was renamed from `name`, if one does.
    pub(crate) fn renamed_to(&self, name: &str) -> Option<&str> {
        self.renames.get(name).map(String::as_str)
    }

    /// Why the removal of `name` is held, when it is.
    pub(crate) fn removal_held(&self, name: &str) -> Option<&str> {
        match self.removals.contains(name) {
            true => self.removal_reason.as_deref(),
            false => None,
        }
    }

    pub(crate) fn holds_everything(&self) -> bool {
        self.everything
    }

    /// Files being ignored (the `linkrunner_campaign_file_invalid` gauge).
    pub(crate) fn len(&self) -> usize {
        self.files.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.files.is_empty()
            && !self.everything
            && self.removals.is_empty()
            && self.behind.is_empty()
    }

    /// Whether the recorded campaign `name`, last loaded from `recorded_file` (`None`: the
    /// journal has no path for it, recorded before paths were), is held rather than removed.
    /// Without a recorded path, any invalid file that shows no name may be its file: held.
    pub(crate) fn holds(&self, name: &str, recorded_file: Option<&str>) -> bool {
        self.everything
            || self.removals.contains(name)
            || self.behind.contains_key(name)
            || self.files.iter().any(|f| {
                f.name.as_deref() == Some(name)
                    || match recorded_file {
                        Some(p) => Path::new(p) == f.path,
                        None => f.name.is_none(),
                    }
            })
    }

    /// The invalid file that holds `name`, for messages.
    pub(crate) fn file_of(&self, name: &str, recorded_file: Option<&str>) -> Option<&Path> {
        self.files
            .iter()
            .find(|f| {
                f.name.as_deref() == Some(name)
                    || recorded_file.is_some_and(|p| Path::new(p) == f.path)
            })
            .map(|f| f.path.as_path())
    }
}

/// How the journal records a campaign's file: absolute, lexically (symlinks not resolved).
pub fn file_key(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invalid(files: &[(&str, Option<&str>)]) -> InvalidFiles {
        let mut i = InvalidFiles::default();
        for (p, n) in files {
            i.push(Path::new(p), n.map(str::to_string));
        }
        i
    }

    #[test]
    fn a_file_that_still_shows_its_name_holds_that_campaign_wherever_it_was_recorded() {
        let i = invalid(&[("/c/a.yaml", Some("shop-a"))]);
        assert!(i.holds("shop-a", Some("/c/old.yaml")));
        assert!(!i.holds("shop-b", Some("/c/b.yaml")));
    }

    #[test]
    fn a_file_too_broken_to_show_a_name_holds_the_campaign_recorded_from_its_path() {
        let i = invalid(&[("/c/a.yaml", None)]);
        assert!(i.holds("shop-a", Some("/c/a.yaml")));
        assert!(!i.holds("shop-b", Some("/c/b.yaml")));
        assert_eq!(
            i.file_of("shop-a", Some("/c/a.yaml")),
            Some(Path::new("/c/a.yaml"))
        );
    }

    #[test]
    fn a_campaign_recorded_without_a_path_is_held_by_any_nameless_invalid_file() {
        assert!(invalid(&[("/c/a.yaml", None)]).holds("shop-a", None));
        assert!(!invalid(&[("/c/a.yaml", Some("shop-z"))]).holds("shop-a", None));
    }

    #[test]
    fn an_unreadable_directory_holds_every_campaign_and_no_file_holds_none() {
        let mut i = InvalidFiles::default();
        assert!(i.is_empty() && !i.holds("shop-a", Some("/c/a.yaml")));
        i.hold_everything();
        assert!(!i.is_empty() && i.holds("shop-a", Some("/c/a.yaml")));
    }

    #[test]
    fn relative_paths_are_recorded_absolute() {
        assert!(file_key(Path::new("campaigns/a.yaml")).is_absolute());
    }
}

//! `campaign/loading/`: where campaign files come from and what did not load. Every source
//! goes through the same parse and validation (`crate::campaign`), so what CI accepts is
//! exactly what the daemon runs.
//!
//! - `load`: files and directories → [`crate::campaign::LoadReport`]; the loader the daemon uses too;
//! - `invalid`: [`crate::campaign::InvalidFiles`]: files that exist but did not load; their campaigns are held, never removed;
//! - `git`: the commit checked out in the campaigns directory, read from `.git` without `git`;
//! - `revision`: the campaign files of a git revision (`plan --base`), read with `git`.
//!
//! May import: nothing.

pub(super) mod git;
pub(super) mod invalid;
pub(super) mod load;
pub(super) mod revision;

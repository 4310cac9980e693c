//! Target 5: loading and validating a directory of campaign files, as `validate` does.

use std::path::Path;
use std::time::{Duration, Instant};

use linkrunner::campaign;

/// Loads and validates every file in `dir`; the time and how many campaigns were valid.
pub(crate) fn time_load_dir(dir: &Path) -> (Duration, usize, usize) {
    let started = Instant::now();
    let report = campaign::load_dir(dir);
    (
        started.elapsed(),
        report.campaigns.len(),
        report.problems.len(),
    )
}

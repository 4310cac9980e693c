//! Problems found in campaign files, each with the file, line and column it is about.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::span::Pos;

/// One problem in one file. Displays as `path:line:column: error: message`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Diagnostic {
    pub(crate) path: PathBuf,
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub message: String,
}

impl Diagnostic {
    pub(crate) fn new(path: &Path, pos: Pos, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            path: path.to_path_buf(),
            line: pos.line,
            column: pos.column,
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: error: {}",
            self.path.display(),
            self.line,
            self.column,
            self.message
        )
    }
}

/// Problems of one file while it is checked, before the file's path is attached.
#[derive(Debug, Default)]
pub(super) struct Problems(Vec<(Pos, String)>);

impl Problems {
    pub(super) fn at(&mut self, pos: Pos, message: impl Into<String>) {
        self.0.push((pos, message.into()));
    }
    /// Adds `other`'s problems except those at one of `skip`'s positions.
    pub(super) fn extend_except(&mut self, other: Problems, skip: &std::collections::HashSet<Pos>) {
        self.0
            .extend(other.0.into_iter().filter(|(pos, _)| !skip.contains(pos)));
    }
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Attaches the path, in file order so a reader can walk the file top to bottom.
    pub(super) fn into_diagnostics(self, path: &Path) -> Vec<Diagnostic> {
        let mut v: Vec<Diagnostic> = self
            .0
            .into_iter()
            .map(|(pos, m)| Diagnostic::new(path, pos, m))
            .collect();
        v.sort();
        v.dedup();
        v
    }
}

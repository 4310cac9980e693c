//! Whether the journal can be written, as the last write found: a full disk, a read-only
//! file, a locked or lost database make every write fail, and `/readyz` answers 503 with the
//! reason, the `linkrunner_journal_writable` gauge reads 0, until a write succeeds again
//! (issue 25, point 3). Only database errors count: a refusal by the journal's own rules (a
//! cap, a lost fence) is an answer, not a fault.
//!
//! Every connection that existed at a fault is replaced before its next use
//! ([`WriteHealth::predates_last_fault`], checked as the pools hand connections out): SQLite
//! opens a file it cannot write read-only and keeps it so, and a connection that met an I/O
//! error may keep failing, so after a read-only file was made writable again the old
//! connection answered "attempt to write a readonly database" until a restart.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::Utc;

use linkrunner_domain::outage::{Outage, OutageCell};

use super::StoreError;

/// The journal could not be written: since when (the first failure in a row), and the
/// last error.
pub(crate) type WriteFault = Outage;

#[derive(Debug, Default)]
pub(super) struct WriteHealth {
    fault: OutageCell,
    /// When a write last failed with a database error.
    last_fault: Mutex<Option<Instant>>,
}

impl WriteHealth {
    pub(super) fn fault(&self) -> Option<WriteFault> {
        self.fault.current()
    }

    /// Whether a connection opened `age` ago already existed when a write last failed: it is
    /// closed instead of used again, and a fresh one opened.
    pub(super) fn predates_last_fault(&self, age: Duration) -> bool {
        let last = *self.last_fault.lock().unwrap_or_else(|e| e.into_inner());
        last.is_some_and(|at| age >= at.elapsed())
    }

    /// Takes in a write's result; returns whether the journal is writable now, or `None`
    /// when the result says nothing about it.
    pub(super) fn observe<T>(&self, result: &Result<T, StoreError>) -> Option<bool> {
        match result {
            Ok(_) => {
                if let Some(f) = self.fault.ended() {
                    tracing::info!(since = %f.since, "the journal can be written again");
                }
                Some(true)
            }
            Err(e @ (StoreError::Database { .. } | StoreError::Connect { .. })) => {
                *self.last_fault.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
                let error = e.to_string();
                if self.fault.failed(error.clone(), Utc::now()).1 {
                    tracing::error!(error = %error, "the journal cannot be written; nothing is sent until it can");
                }
                Some(false)
            }
            Err(_) => None,
        }
    }
}

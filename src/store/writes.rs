//! Whether the journal can be written, as the last write found: a full disk, a read-only
//! file, a locked or lost database make every write fail, and `/readyz` answers 503 with the
//! reason, the `linkrunner_journal_writable` gauge reads 0, until a write succeeds again
//! (issue 25, point 3). Only database errors count: a refusal by the journal's own rules (a
//! cap, a lost fence) is an answer, not a fault.

use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::StoreError;

/// The journal could not be written: since when (the first failure in a row), and the
/// last error, once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WriteFault {
    pub since: DateTime<Utc>,
    pub error: String,
}

#[derive(Debug, Default)]
pub(super) struct WriteHealth {
    fault: Mutex<Option<WriteFault>>,
}

impl WriteHealth {
    pub(super) fn fault(&self) -> Option<WriteFault> {
        self.fault.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Takes in a write's result; returns whether the journal is writable now, or `None`
    /// when the result says nothing about it.
    pub(super) fn observe<T>(&self, result: &Result<T, StoreError>) -> Option<bool> {
        let mut fault = self.fault.lock().unwrap_or_else(|e| e.into_inner());
        match result {
            Ok(_) => {
                if let Some(f) = fault.take() {
                    tracing::info!(since = %f.since, "the journal can be written again");
                }
                Some(true)
            }
            Err(e @ (StoreError::Database { .. } | StoreError::Connect { .. })) => {
                let error = e.to_string();
                match fault.as_mut() {
                    Some(f) => f.error = error,
                    None => {
                        tracing::error!(error = %error, "the journal cannot be written; nothing is sent until it can");
                        *fault = Some(WriteFault {
                            since: Utc::now(),
                            error,
                        });
                    }
                }
                Some(false)
            }
            Err(_) => None,
        }
    }
}

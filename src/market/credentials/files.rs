//! Files mode: re-reading the token and ticket files. New values replace the current ones;
//! a file that cannot be read, or holds a value that cannot be sent, keeps them.

use std::sync::atomic::Ordering;

use chrono::{DateTime, Utc};
use secrecy::ExposeSecret as _;

use super::super::auth::{Credentials, CredentialsError};
use super::{CredentialProvider, CredentialSource, SecretOrigin, Trigger};

impl CredentialProvider {
    /// Re-reads the given files; new values replace the current ones. A file that cannot
    /// be read, or holds a value that cannot be sent, keeps the current values.
    pub(super) fn reread_files(&self, trigger: Trigger, now: DateTime<Utc>) {
        let CredentialSource::Given { token, ticket } = &self.source else {
            return;
        };
        self.files_read_at
            .store(now.timestamp_millis(), Ordering::Relaxed);
        if !token.is_file() && !ticket.is_file() {
            return;
        }
        let read = match read_given(token, ticket) {
            Ok(c) => c,
            Err(e) => {
                self.failed();
                tracing::warn!(error = %e, trigger = ?trigger, "cannot re-read the marketplace credentials; the current ones stay in use");
                return;
            }
        };
        self.metrics.credentials.refresh_failing.set(0);
        let Some(old) = self.snapshot() else {
            self.install(read, "files");
            return;
        };
        let token_changed = old.credentials.token().expose_secret() != read.token().expose_secret();
        let ticket_changed =
            old.credentials.ticket().expose_secret() != read.ticket().expose_secret();
        if token_changed || ticket_changed {
            let what = match (token_changed, ticket_changed) {
                (true, true) => "token and ticket",
                (true, false) => "token",
                _ => "ticket",
            };
            tracing::info!(changed = what, trigger = ?trigger, "marketplace credentials changed in their files; the new ones are in use");
            self.install(read, "files");
        } else if trigger == Trigger::Rejected {
            tracing::warn!(
                "the marketplace rejected the credentials and their files still hold the same values"
            );
        }
    }
}

/// Reads the given token and ticket and checks they can be sent.
pub(super) fn read_given(
    token: &SecretOrigin,
    ticket: &SecretOrigin,
) -> Result<Credentials, CredentialsError> {
    let t = token.read().map_err(|source| CredentialsError::File {
        what: "API token",
        source,
    })?;
    let k = ticket.read().map_err(|source| CredentialsError::File {
        what: "auth ticket",
        source,
    })?;
    Credentials::new(t, k)
}

//! Readiness: the database answers and can be written, campaigns are loaded, the marketplace has not rejected
//! our credentials, and the process is not shutting down. Each is reported separately; the
//! credentials' detail also says how they are obtained (fixed, files, login). An operator's
//! halt is shown (`halt`) but never makes the process unready: it is a decision, not a fault,
//! and the status page that explains it must stay reachable.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::store::Store;
use crate::views::overview::FileFacts;
use linkrunner_domain::credentials::CredentialsMode;

#[derive(Debug, Default)]
pub struct Health {
    campaigns_loaded: AtomicBool,
    shutting_down: AtomicBool,
    /// When each buying campaign's next round is due, as the daemon's timer has it (the
    /// status page shows it; the journal does not know schedules).
    next_rounds: Mutex<BTreeMap<String, DateTime<Utc>>>,
    /// What the daemon's loaded campaign files say (paused, removed): the journal does not
    /// know; `/api/v1/campaigns` and the page read it from here.
    files: Mutex<std::sync::Arc<FileFacts>>,
    /// How the marketplace credentials are obtained; set once at start.
    credentials_mode: std::sync::OnceLock<CredentialsMode>,
    /// Why the removal of campaigns whose files are gone is held (issue 32), if it is.
    removal_hold: Mutex<Option<String>>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Component {
    ready: bool,
    detail: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Readiness {
    pub(crate) ready: bool,
    database: Component,
    campaigns: Component,
    credentials: Component,
    /// An operator's halt: shown, never unready (the status page must stay reachable).
    halt: Component,
    shutdown: Component,
    /// Held removals (issue 32): ready all the same (the other campaigns run); the detail
    /// says which hold and why.
    removals: Component,
}

fn comp(ready: bool, detail: impl Into<String>) -> Component {
    Component {
        ready,
        detail: detail.into(),
    }
}

impl Health {
    pub(crate) fn set_credentials_mode(&self, mode: Option<CredentialsMode>) {
        if let Some(m) = mode {
            let _ = self.credentials_mode.set(m);
        }
    }

    pub fn set_campaigns_loaded(&self) {
        self.campaigns_loaded.store(true, Ordering::SeqCst);
    }
    pub(crate) fn set_shutting_down(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
    }
    pub(crate) fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::SeqCst)
    }
    pub(crate) fn set_next_rounds(&self, next: BTreeMap<String, DateTime<Utc>>) {
        *self.next_rounds.lock().unwrap_or_else(|e| e.into_inner()) = next;
    }
    pub(crate) fn next_round(&self, campaign: &str) -> Option<DateTime<Utc>> {
        let next = self.next_rounds.lock().unwrap_or_else(|e| e.into_inner());
        next.get(campaign).copied()
    }

    pub(crate) fn set_removal_hold(&self, why: Option<String>) {
        *self.removal_hold.lock().unwrap_or_else(|e| e.into_inner()) = why;
    }
    pub(crate) fn removal_hold(&self) -> Option<String> {
        self.removal_hold
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(crate) fn set_files(&self, files: FileFacts) {
        *self.files.lock().unwrap_or_else(|e| e.into_inner()) = std::sync::Arc::new(files);
    }
    pub(crate) fn files(&self) -> std::sync::Arc<FileFacts> {
        self.files.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) async fn readiness(&self, store: &Store) -> Readiness {
        let db = tokio::time::timeout(Duration::from_secs(2), store.ping()).await;
        let database = match db {
            Ok(Ok(())) => match store.write_fault() {
                // Reads work, writes do not (a full disk, a read-only file): nothing can be
                // recorded, so nothing is sent.
                Some(f) => comp(
                    false,
                    format!(
                        "cannot be written since {}: {}",
                        f.since.format("%Y-%m-%d %H:%M:%S UTC"),
                        f.error
                    ),
                ),
                None => comp(true, "reachable"),
            },
            Ok(Err(e)) => comp(false, format!("unreachable: {}", e.kind_label())),
            Err(_) => comp(false, "unreachable: no answer within 2s"),
        };
        let halts = match database.ready {
            true => tokio::time::timeout(Duration::from_secs(2), store.halts())
                .await
                .ok()
                .and_then(Result::ok),
            false => None,
        };
        let credentials = match &halts {
            Some(h) if h.iter().any(|h| h.is_credentials()) => comp(false, rejected_words(h)),
            Some(_) => comp(true, "not rejected"),
            None => comp(false, "unknown: journal unavailable"),
        };
        let halt = match halts.as_ref().map(|h| operator_halt_words(h)) {
            Some(Some(words)) => comp(true, words),
            Some(None) => comp(true, "none"),
            None => comp(true, "unknown: journal unavailable"),
        };
        let credentials = match self.credentials_mode.get() {
            Some(m) => comp(
                credentials.ready,
                format!("{}; mode {}", credentials.detail, m.describe()),
            ),
            None => credentials,
        };
        let loaded = self.campaigns_loaded.load(Ordering::SeqCst);
        let campaigns = comp(loaded, if loaded { "loaded" } else { "not loaded yet" });
        let stopping = self.is_shutting_down();
        let shutdown = comp(
            !stopping,
            if stopping { "shutting down" } else { "running" },
        );
        let ready = database.ready && campaigns.ready && credentials.ready && shutdown.ready;
        let removals = match self.removal_hold() {
            Some(why) => comp(true, why),
            None => comp(true, "none held"),
        };
        Readiness {
            ready,
            database,
            campaigns,
            credentials,
            halt,
            shutdown,
            removals,
        }
    }
}

/// The credentials component's words while some account's credentials are rejected: which
/// accounts (the others keep buying).
fn rejected_words(halts: &[crate::store::Halt]) -> String {
    let scopes: Vec<String> = halts
        .iter()
        .filter(|h| h.is_credentials())
        .map(|h| h.scope.describe())
        .collect();
    format!(
        "rejected by the marketplace for {}; its spending stopped",
        scopes.join(", ")
    )
}

/// The halt component's words: the operator's halt of every account, else each account's
/// operator's halt; `None` when no operator's halt stops more than a campaign.
fn operator_halt_words(halts: &[crate::store::Halt]) -> Option<String> {
    let wide: Vec<&crate::store::Halt> = halts
        .iter()
        .filter(|h| h.is_operator() && h.is_wide())
        .collect();
    if let Some(h) = wide.iter().find(|h| h.is_global()) {
        return Some(format!("all spending stopped: {}", h.describe()));
    }
    let words: Vec<String> = wide
        .iter()
        .map(|h| format!("{}: {}", h.scope.stopped(), h.describe()))
        .collect();
    (!words.is_empty()).then(|| words.join("; "))
}

//! A reconciliation that only looks (issue 34, item 3): when the last full pass of a campaign
//! converged with nothing open or due (`decide::quiet::quiet_until`), and its file, the lease's
//! fence and the journal's stamp are as that pass saw them (`decide::quiet::may_look_only`),
//! the pass reads the link list; when it answers what it answered last, the links' "last
//! seen" moves to this read and the pass ends converged, without planning or writing anything
//! else. Otherwise the pass is full, and it reuses the list this look read (no second call).
//!
//! What the last full pass saw is kept in this process's memory, per campaign. That is
//! correct across replicas: another process can only work on the campaign under its lease,
//! and taking the lease moves its fence; an operator's words (halt, resume, approve,
//! resolve, release) move the journal's stamp (`store/quiet.rs`). A restarted process starts
//! with nothing remembered, so its first pass of each campaign is full. Keeping it in the
//! journal would cost a write per full pass and buys nothing these do not already prove.
//! `EngineSettings::quiet_looks` turns it off (the model test runs both ways).

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Utc};

use crate::campaign::Campaign;
use crate::decide::plan::Action;
use crate::decide::quiet::{self, Full, Now, Seen};
use crate::decide::recorded::Recorded;
use crate::market::{LinkList, Market};

use super::Engine;
use super::error::EngineError;
use super::lease::HeldLease;

/// What the full passes of this process saw, per campaign, and what the pass under way read.
/// A campaign's passes run one at a time in a process (its in-process lock), so one pass
/// never sees another's entries of the same campaign.
#[derive(Debug, Default)]
pub(crate) struct QuietMemory {
    seen: Mutex<HashMap<String, Seen>>,
    /// The last link list the pass under way read: its digest and when.
    read: Mutex<HashMap<String, (u64, DateTime<Utc>)>>,
    /// A list a look read and found changed, for the full pass's first read.
    prefetched: Mutex<HashMap<String, LinkList>>,
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a full pass notes when it begins, to remember at its end.
pub(crate) struct Begun {
    file: String,
    fence: i64,
    stamp: Vec<i64>,
    /// `quiet_until` of the record it planned from, and its project.
    until: Option<(Result<DateTime<Utc>, Full>, i64)>,
}

impl<M: Market> Engine<M> {
    /// What the last full pass of `name` saw, when this pass may try to only look: a
    /// reconciliation (not a buy round) of a loaded file, the same file as then.
    pub(super) fn quiet_candidate(
        &self,
        c: Option<&Campaign>,
        name: &str,
        buy_round: bool,
        file: Option<&str>,
    ) -> Option<Seen> {
        if !self.settings.quiet_looks || buy_round || c.is_none() {
            return None;
        }
        let seen = locked(&self.quiet.seen).get(name).cloned()?;
        (Some(seen.file.as_str()) == file).then_some(seen)
    }

    /// With the lease held: forgets what the last full pass saw (this pass replaces it), and
    /// notes what this one sees as it begins when it may be remembered: a reconciliation of a
    /// loaded file.
    pub(super) async fn quiet_begin(
        &self,
        lease: &HeldLease,
        file: Option<&str>,
        name: &str,
        buy_round: bool,
    ) -> Result<Option<Begun>, EngineError> {
        locked(&self.quiet.seen).remove(name);
        locked(&self.quiet.read).remove(name);
        let Some(file) = file.filter(|_| self.settings.quiet_looks && !buy_round) else {
            return Ok(None);
        };
        let stamp = self.store.campaigns().quiet_stamp(name).await?;
        Ok(Some(Begun {
            file: file.to_string(),
            fence: lease.fence(),
            stamp,
            until: None,
        }))
    }

    /// The look: `Ok(None)` when it is done (the pass converged, having read the list and
    /// recorded that it saw it, releasing `lease` in the same write; said in `done`), else
    /// why the pass must be full (the lease still held).
    pub(super) async fn look_only(
        &self,
        (seen, begun): (&Seen, &Begun),
        lease: &HeldLease,
        name: &str,
        done: &mut Vec<String>,
    ) -> Result<Option<Full>, EngineError> {
        let now = self.clock.now();
        let here = Now {
            file: &begun.file,
            fence: begun.fence,
            journal: &begun.stamp,
            at: now,
        };
        if let Err(why) = quiet::may_look_only(seen, &here) {
            return Ok(Some(why));
        }
        let list = self
            .market
            .list_links(seen.project)
            .await
            .map_err(|e| self.read_error(e))?;
        if let Err(why) = quiet::list_unchanged(seen, quiet::list_digest(&list)) {
            locked(&self.quiet.prefetched).insert(name.to_string(), list);
            return Ok(Some(why));
        }
        self.store
            .campaigns()
            .record_look(lease.token(), seen.listed_at, now)
            .await?;
        let mut next = seen.clone();
        next.listed_at = now;
        locked(&self.quiet.seen).insert(name.to_string(), next);
        done.push(Action::SyncLinks.describe());
        self.metrics.load.reconciliations_looked_total.inc();
        Ok(None)
    }

    /// Before the plan: until when the record it plans from is quiet.
    pub(super) fn quiet_planned(
        &self,
        begun: &mut Option<Begun>,
        c: Option<&Campaign>,
        r: &Recorded,
    ) {
        let (Some(b), Some(c), Some(project)) = (begun.as_mut(), c, r.ids.project.as_ref()) else {
            return;
        };
        let until = quiet::quiet_until(c, r, self.clock.now(), self.settings.settle_grace);
        b.until = Some((until, project.project_id));
    }

    /// After a full pass: remembers what it saw when it `converged` (for good, nothing that
    /// may pass by itself) with nothing open or due and read the link list; forgets what a
    /// look left unread.
    pub(super) fn quiet_end(&self, name: &str, begun: Option<Begun>, converged: bool) {
        locked(&self.quiet.prefetched).remove(name);
        let read = locked(&self.quiet.read).remove(name);
        let Some(b) = begun else {
            return;
        };
        let (Some((Ok(until), project)), Some((list, listed_at)), true) =
            (b.until, read, converged)
        else {
            return;
        };
        let seen = Seen {
            file: b.file,
            fence: b.fence,
            project,
            journal: b.stamp,
            list,
            listed_at,
            until,
        };
        locked(&self.quiet.seen).insert(name.to_string(), seen);
    }

    /// The link list for a read of `project`: the one a look just read, else a new read.
    pub(super) async fn read_list(
        &self,
        name: &str,
        project: i64,
    ) -> Result<LinkList, EngineError> {
        if let Some(list) = locked(&self.quiet.prefetched).remove(name) {
            return Ok(list);
        }
        self.market
            .list_links(project)
            .await
            .map_err(|e| self.read_error(e))
    }

    /// Notes a read of the link list whose links were recorded as seen `at`, for
    /// [`Self::quiet_end`].
    pub(super) fn quiet_note_read(&self, name: &str, list: &LinkList, at: DateTime<Utc>) {
        if self.settings.quiet_looks {
            let digest = quiet::list_digest(list);
            locked(&self.quiet.read).insert(name.to_string(), (digest, at));
        }
    }
}

//! Whether a reconciliation may only look (issue 34, item 3): a campaign that converged and
//! whose file, journal and link list are as the last full pass left them, with nothing
//! time-driven due, is read (its link list, one cheap journal stamp) and not planned. Pure:
//! `effects/quiet.rs` keeps what the last full pass saw and acts on what these say.
//!
//! Two halves. At the end of a full pass that converged, [`quiet_until`] says until when
//! nothing time-driven can change what a pass would do (or that something is due or open, and
//! the next pass must be full too). Before the next pass, [`may_look_only`] compares what the
//! last full pass saw ([`Seen`]) with what this pass sees; [`list_digest`] then tells whether
//! the link list answers what it answered then. Any doubt is a full pass.

use std::hash::{Hash, Hasher};

use chrono::{DateTime, Duration, NaiveTime, Utc};

use crate::campaign::Campaign;
use linkrunner_domain::intents::{IntentKind, IntentState};
use linkrunner_domain::market::{LinkList, ListCompleteness};

use super::pass::settles_something;
use super::recorded::Recorded;

/// Why a pass is full rather than a look. Each is one of the things the brief names: what
/// the journal holds open, what time brings, what changed since the last full pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Full {
    /// Money or a step is open: an uncertain intent, a purchase in flight (its
    /// reservation), a round under way.
    Open,
    /// A halt applies: it is an operator's or the credentials', and the plan acts on it.
    Halted,
    /// The project is adopted: the team buys there by hand and every pass reads first.
    Adopted,
    /// The link list settles something: a blocked purchase, a link leaving, a stop to settle.
    Settling,
    /// Something happened within the settle grace (a purchase, a switch, a link first seen):
    /// a later read may show it differently, and time alone changes what it proves.
    WithinGrace,
    /// A buy round's slot passed since the last round.
    RoundDue,
    /// The UTC day turned (a new month, too) since the last full pass: the day's and the
    /// month's counts start again, and an operator's word for the month lapses.
    DayTurned,
    /// The schedule's next slot came since the last full pass.
    SlotCame,
    /// The campaign file is not the one the last full pass ran.
    FileChanged,
    /// Another process held the campaign's lease since (its fence moved).
    FenceMoved,
    /// The journal's stamp moved: a halt, a resume, an approval, a release, an intent,
    /// anything an operator or a pass wrote.
    JournalChanged,
    /// The clock went back behind the last look.
    ClockBack,
    /// The link list answers something else than before (a link added, removed, changed).
    ListChanged,
}

impl Full {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Full::Open => "open",
            Full::Halted => "halted",
            Full::Adopted => "adopted",
            Full::Settling => "settling",
            Full::WithinGrace => "within_grace",
            Full::RoundDue => "round_due",
            Full::DayTurned => "day_turned",
            Full::SlotCame => "slot_came",
            Full::FileChanged => "file_changed",
            Full::FenceMoved => "fence_moved",
            Full::JournalChanged => "journal_changed",
            Full::ClockBack => "clock_back",
            Full::ListChanged => "list_changed",
        }
    }
}

/// What a full pass that converged saw, for the looks after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seen {
    /// The campaign file's fingerprint (SHA-256 of its bytes).
    pub(crate) file: String,
    /// The fence of the lease the pass held.
    pub(crate) fence: i64,
    /// The project whose link list a look reads.
    pub(crate) project: i64,
    /// The journal's stamp of the campaign, read when the pass began (`store/quiet.rs`).
    pub(crate) journal: Vec<i64>,
    /// [`list_digest`] of the last link list read, and when it was read (the links it
    /// showed carry this time as "last seen").
    pub(crate) list: u64,
    pub(crate) listed_at: DateTime<Utc>,
    /// Until when nothing time-driven is due ([`quiet_until`]).
    pub(crate) until: DateTime<Utc>,
}

/// What this pass sees before it reads the link list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Now<'a> {
    pub(crate) file: &'a str,
    pub(crate) fence: i64,
    pub(crate) journal: &'a [i64],
    pub(crate) at: DateTime<Utc>,
}

/// Until when nothing time-driven can change what a pass of this converged campaign does:
/// the next UTC midnight (a new day, a new month) or the schedule's next slot, whichever
/// comes first. `Err` when something is open or due now: the next pass is full too.
pub(crate) fn quiet_until(
    c: &Campaign,
    r: &Recorded,
    now: DateTime<Utc>,
    grace: Duration,
) -> Result<DateTime<Utc>, Full> {
    let open = !r.uncertain.is_empty()
        || r.budget.reserved_in_flight.kopecks() != 0
        || r.budget.uncertain.kopecks() != 0
        || r.purchases.iter().any(|i| i.state == IntentState::InFlight)
        || r.last_round
            .as_ref()
            .is_some_and(|x| x.finished_at.is_none());
    if open {
        return Err(Full::Open);
    }
    if !r.halts.is_empty() {
        return Err(Full::Halted);
    }
    if r.ids.account.adoption.is_some() {
        return Err(Full::Adopted);
    }
    if settles_something(r) {
        return Err(Full::Settling);
    }
    let since = now - grace;
    let recent = r
        .purchases
        .iter()
        .filter(|i| i.kind == IntentKind::Purchase)
        .any(|i| i.updated_at > since)
        || r.held.iter().any(|h| h.bought_at > since)
        || r.foreign.iter().any(|f| f.first_seen_at > since)
        || r.ids
            .autobuyers
            .values()
            .any(|a| a.stopped_at.is_some_and(|t| t > since));
    if recent {
        return Err(Full::WithinGrace);
    }
    let midnight = (now.date_naive() + Duration::days(1))
        .and_time(NaiveTime::MIN)
        .and_utc();
    let Some(buy) = &c.buy else {
        return Ok(midnight);
    };
    // A schedule that does not parse here would not have loaded; say "due" all the same.
    let Ok(cron) = crate::campaign::parse_schedule(&buy.schedule) else {
        return Err(Full::RoundDue);
    };
    if let Some(last) = &r.last_round
        && cron
            .find_next_occurrence(&last.slot, false)
            .is_ok_and(|next| next <= now)
    {
        return Err(Full::RoundDue);
    }
    let next = cron.find_next_occurrence(&now, false).ok();
    Ok(next.map_or(midnight, |n| n.min(midnight)))
}

/// Whether this pass may only look: the same file, the same lease fence, the same journal
/// stamp as the last full pass saw, and the time still before what it said was due. `Err`:
/// why the pass is full.
pub(crate) fn may_look_only(seen: &Seen, now: &Now<'_>) -> Result<(), Full> {
    if seen.file != now.file {
        return Err(Full::FileChanged);
    }
    if seen.fence != now.fence {
        return Err(Full::FenceMoved);
    }
    if seen.journal != now.journal {
        return Err(Full::JournalChanged);
    }
    if now.at < seen.listed_at {
        return Err(Full::ClockBack);
    }
    if now.at >= seen.until {
        let midnight = seen.listed_at.date_naive() != now.at.date_naive();
        return Err([Full::SlotCame, Full::DayTurned][usize::from(midnight)]);
    }
    Ok(())
}

/// Whether the link list answers what the last full pass read: its digest is the same.
pub(crate) fn list_unchanged(seen: &Seen, list: u64) -> Result<(), Full> {
    match seen.list == list {
        true => Ok(()),
        false => Err(Full::ListChanged),
    }
}

/// A digest of everything one read of the link list answered: every link's fields in their
/// order, and what the answers said of the links not shown. Two reads with the same digest
/// answered the same (a 64-bit hash, compared only with this process's own earlier reads).
pub(crate) fn list_digest(list: &LinkList) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    list.links.len().hash(&mut h);
    for l in &list.links {
        (l.link_id, l.page_id, l.url_id, l.text_id).hash(&mut h);
        l.price.map(|p| p.kopecks()).hash(&mut h);
        l.status.hash(&mut h);
    }
    // The completeness's own words (pages read, why a list may be cut) count too.
    match &list.completeness {
        ListCompleteness::NoPagingFields => 0u8.hash(&mut h),
        other => format!("{other:?}").hash(&mut h),
    }
    h.finish()
}

#[cfg(test)]
mod tests;

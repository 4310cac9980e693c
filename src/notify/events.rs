//! What a person must act on, derived from the journal's read models and nothing else: the
//! halts in force (`Store::halts`), each campaign's state and reason (the list's rows,
//! `views::list`), its uncertain intents and the "what to run" texts of its status
//! (`views::report`), its caps. So a new halt kind or a new campaign state is told without a
//! line here: a global halt is a halt whatever set it, and a state word this module does not
//! know is an [`EventKind::Other`] with the state's own reason.
//!
//! Pure: [`derive`] takes what was read and the time and returns the events; `watch.rs`
//! reads and claims.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::store::{Halt, HaltScope, HeldTwiceFinding, LostLinks};
use crate::views::list::CampaignRow;
use crate::views::report::CampaignStatus;
use linkrunner_domain::records::{RemovalRow, RemovalState};

/// The kinds of event: a closed set, the `event` label of the notification counters and
/// the words of the notify file's `events`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EventKind {
    /// A halt that stops every campaign (credentials rejected, or any halt kind to come).
    Halted,
    /// A campaign waits for an operator (a halt of its own, an uncertain autobuyer creation).
    WaitingForOperator,
    /// A buy round could buy and did not, for a reason an operator should look at.
    Stalled,
    /// A campaign's monthly cap or total links cap is reached: nothing more is bought.
    CapReached,
    /// Intents that may have executed are still unsettled after the settle grace.
    Uncertain,
    /// Links left a project's link list (removed or rejected in the marketplace) lately.
    LinksLost,
    /// Many campaign files vanished at once: their removals are held until the files return
    /// or an operator says they really were removed.
    RemovalsHeld,
    /// The link list showed a donor page holding two links for one URL (issue 32): the team
    /// withdraws one of them.
    PageHeldTwice,
    /// A campaign state this version does not name (added by a later change): told with the
    /// state's own reason.
    Other,
}

impl EventKind {
    pub(crate) const ALL: [EventKind; 9] = [
        EventKind::Halted,
        EventKind::WaitingForOperator,
        EventKind::Stalled,
        EventKind::CapReached,
        EventKind::Uncertain,
        EventKind::LinksLost,
        EventKind::RemovalsHeld,
        EventKind::PageHeldTwice,
        EventKind::Other,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EventKind::Halted => "halted",
            EventKind::WaitingForOperator => "waiting_for_operator",
            EventKind::Stalled => "stalled",
            EventKind::CapReached => "cap_reached",
            EventKind::Uncertain => "uncertain",
            EventKind::LinksLost => "links_lost",
            EventKind::RemovalsHeld => "removals_held",
            EventKind::PageHeldTwice => "page_held_twice",
            EventKind::Other => "other",
        }
    }

    /// The kind a campaign state is told as; `None` for the states nobody must act on
    /// (running, paused, removed, settling by itself, failing and retried) and for `halted`,
    /// told once for all campaigns by its halt. A state word not listed here is `Other`.
    fn of_state(word: &str) -> Option<EventKind> {
        match word {
            "running" | "paused" | "removed" | "settling" | "failing" | "halted" => None,
            "waiting_for_operator" => Some(EventKind::WaitingForOperator),
            "stalled" => Some(EventKind::Stalled),
            _ => Some(EventKind::Other),
        }
    }
}

/// One event: what happened, to which campaign, why, and what resolves it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Event {
    /// Its identity in the journal (`notices.key`): the same condition has the same key, so
    /// it is claimed once however many replicas see it.
    pub(crate) key: String,
    pub(crate) kind: EventKind,
    /// `None`: every campaign (a global halt).
    pub(crate) campaign: Option<String>,
    pub(crate) reason: String,
    /// What an operator runs or does to resolve it.
    pub(crate) command: String,
    /// When the condition began, where the journal says.
    pub(crate) since: Option<DateTime<Utc>>,
}

impl Event {
    /// One line for a chat: campaign, reason and command.
    pub(crate) fn text(&self) -> String {
        let whom = match &self.campaign {
            Some(c) => format!("campaign {c}"),
            None => "all campaigns".to_string(),
        };
        format!(
            "linkrunner: {whom}: {} — {}. To resolve: {}",
            self.kind.as_str().replace('_', " "),
            self.reason,
            self.command
        )
    }
}

/// How long links that left the list are told as lost: a loss older than this is not told
/// (nor, after a restart on an old journal, the losses of long ago).
pub(crate) const LOST_WINDOW: chrono::Duration = chrono::Duration::hours(24);

/// What [`derive`] reads.
pub(crate) struct Observed<'a> {
    pub(crate) halts: &'a [Halt],
    pub(crate) rows: &'a [CampaignRow],
    /// The full status of the campaigns whose rows need one (waiting, uncertain), by name.
    pub(crate) statuses: &'a BTreeMap<String, CampaignStatus>,
    /// Links lost within [`LOST_WINDOW`], per campaign.
    pub(crate) lost: &'a [LostLinks],
    /// The journal's removals (`campaign_removals`): the held ones are told, once per hold.
    pub(crate) removals: &'a [RemovalRow],
    /// The pages recorded held twice and not cleared (`pages_held_twice`).
    pub(crate) held_twice: &'a [HeldTwiceFinding],
    pub(crate) now: DateTime<Utc>,
    /// Uncertain intents older than this are told.
    pub(crate) settle_grace: chrono::Duration,
}

/// The campaigns whose full status [`derive`] uses: their "what to run" texts and the age
/// of their uncertain intents are only in it.
pub(crate) fn needs_status(row: &CampaignRow) -> bool {
    row.uncertain > 0 || EventKind::of_state(row.state.as_str()).is_some()
}

/// Every event in force.
pub(crate) fn derive(o: &Observed<'_>) -> Vec<Event> {
    let mut events: Vec<Event> = o.halts.iter().filter(|h| h.is_wide()).map(halted).collect();
    for row in o.rows {
        let status = o.statuses.get(&row.campaign);
        events.extend(of_state(row, status));
        if !matches!(row.state.as_str(), "removed" | "paused") {
            events.extend(caps_reached(row));
        }
        events.extend(status.and_then(|s| uncertain(s, o.now, o.settle_grace)));
    }
    events.extend(o.lost.iter().filter(|l| l.links > 0).map(links_lost));
    events.extend(removals_held(o.removals));
    events.extend(o.held_twice.iter().map(page_held_twice));
    events
}

/// One event per page held twice, keyed by campaign, URL, page and when a read first showed
/// it: the same finding is told once; one that cleared (a complete read no longer showed it)
/// and recurs is told again.
fn page_held_twice(f: &HeldTwiceFinding) -> Event {
    let t = &f.held;
    let name = &f.campaign;
    let ids: Vec<String> = t.link_ids.iter().map(i64::to_string).collect();
    let url = f.url.as_deref().unwrap_or("a URL no file names");
    let project = f
        .project_id
        .map_or_else(String::new, |p| format!(" of project {p}"));
    Event {
        key: format!(
            "page_held_twice:{name}:{}:{}:{}",
            t.url_id,
            t.page_id,
            f.first_seen.timestamp_millis()
        ),
        kind: EventKind::PageHeldTwice,
        campaign: Some(name.clone()),
        reason: format!(
            "page {} holds {} links for {url} (URL id {}{project}): links {}; the URL pays twice for one page",
            t.page_id,
            t.links,
            t.url_id,
            ids.join(", ")
        ),
        command: format!(
            "withdraw one of links {} in the marketplace (`linkrunner status {name}` lists every page held twice)",
            ids.join(", ")
        ),
        since: Some(f.first_seen),
    }
}

/// One event for every removal held at once (one failed checkout is one thing to tell), keyed
/// by the names and the first time one was seen gone, so a later, different hold is told
/// again.
fn removals_held(removals: &[RemovalRow]) -> Option<Event> {
    let held: Vec<&RemovalRow> = removals
        .iter()
        .filter(|r| r.state == RemovalState::Held)
        .collect();
    let since = held.iter().map(|r| r.seen_at).min()?;
    let names: Vec<&str> = held.iter().map(|r| r.campaign.as_str()).collect();
    const SHOWN: usize = 5;
    let mut shown = names[..names.len().min(SHOWN)].join(", ");
    if names.len() > SHOWN {
        shown.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    Some(Event {
        key: format!("removals_held:{}:{}", since.timestamp_millis(), names.join(",")),
        kind: EventKind::RemovalsHeld,
        campaign: None,
        reason: format!(
            "the files of {} campaign(s) vanished together ({shown}), gone since {}: nothing of them is stopped",
            names.len(),
            since.to_rfc3339()
        ),
        command: "restore the campaign files (a failed checkout or mount), or `linkrunner resolve removals --reason …` if they really were removed".into(),
        since: Some(since),
    })
}

fn links_lost(l: &LostLinks) -> Event {
    let name = &l.campaign;
    Event {
        // The latest loss in the key: a later one is a new thing to tell.
        key: format!("links_lost:{name}:{}", l.latest.timestamp_millis()),
        kind: EventKind::LinksLost,
        campaign: Some(name.clone()),
        reason: format!(
            "{} link(s) left the project's link list in the last {} h (removed or rejected in the marketplace), the latest at {}: their rent is released",
            l.links,
            LOST_WINDOW.num_hours(),
            l.latest.to_rfc3339()
        ),
        command: format!(
            "`linkrunner history {name}` shows which; check them in the marketplace (the next buy rounds buy replacements within the caps)"
        ),
        since: Some(l.latest),
    }
}

fn halted(h: &Halt) -> Event {
    Event {
        key: format!("halted:{}:{}", h.scope.key(), h.since.timestamp_millis()),
        kind: EventKind::Halted,
        campaign: None,
        reason: match &h.scope {
            HaltScope::Account(_) => format!("{}: {}", h.scope.describe(), h.describe()),
            _ => h.describe(),
        },
        command: if h.is_operator() {
            // Only `resume` lifts an operator's halt (the stop button or the anomaly brake).
            format!(
                "`linkrunner resume{} --reason …` once its cause is dealt with (`linkrunner status` shows who halted and why)",
                h.scope.resume_flags()
            )
        } else {
            "`linkrunner status` says what stopped it; a credentials halt lifts itself at the first pass the marketplace accepts renewed credentials (their files are re-read, SIGHUP at once)".into()
        },
        since: Some(h.since),
    }
}

fn of_state(row: &CampaignRow, status: Option<&CampaignStatus>) -> Option<Event> {
    let kind = EventKind::of_state(row.state.as_str())?;
    let name = &row.campaign;
    let first_to_do = status.and_then(|s| s.uncertain.first().map(|u| u.what_to_do.clone()));
    let command = match kind {
        EventKind::WaitingForOperator => first_to_do,
        _ => None,
    };
    Some(Event {
        key: format!("state:{}:{name}", row.state.as_str()),
        kind,
        campaign: Some(name.clone()),
        reason: row
            .state_reason
            .clone()
            .unwrap_or_else(|| row.state.words()),
        command: command.unwrap_or_else(|| format!("`linkrunner status {name}` says what to run")),
        since: None,
    })
}

fn caps_reached(row: &CampaignRow) -> Vec<Event> {
    let (m, l) = (&row.money, &row.links);
    let mut out = Vec::new();
    if m.monthly_cap.kopecks() > 0 && m.monthly_commitment >= m.monthly_cap {
        let reason = format!(
            "the monthly commitment {} RUB reached the cap {} RUB: nothing more is bought",
            m.monthly_commitment, m.monthly_cap
        );
        let key = ("monthly", m.monthly_cap.kopecks());
        out.push(cap_reached(row, key, reason, ", or let links lapse"));
    }
    if l.total_links_cap > 0 && l.links_total >= l.total_links_cap {
        let reason = format!(
            "{} link(s) bought of `budget.total_links` {}: nothing more is bought",
            l.links_total, l.total_links_cap
        );
        let key = ("total_links", i64::from(l.total_links_cap));
        out.push(cap_reached(row, key, reason, ""));
    }
    out
}

/// The event of one cap reached: `(cap, limit)` names the file's `budget.<cap>` and its value.
fn cap_reached(row: &CampaignRow, (cap, limit): (&str, i64), reason: String, or: &str) -> Event {
    let name = &row.campaign;
    Event {
        // The limit in the key: a raised cap reached again is a new thing to tell.
        key: format!("cap_reached:{cap}:{name}:{limit}"),
        kind: EventKind::CapReached,
        campaign: Some(name.clone()),
        reason,
        command: format!(
            "raise `budget.{cap}` in {name}'s campaign file (`linkrunner plan` shows the change){or}"
        ),
        since: None,
    }
}

fn uncertain(s: &CampaignStatus, now: DateTime<Utc>, grace: chrono::Duration) -> Option<Event> {
    let old: Vec<_> = s
        .uncertain
        .iter()
        .filter(|u| now - u.since >= grace)
        .collect();
    let oldest = old.iter().min_by_key(|u| u.since)?;
    let name = &s.campaign;
    Some(Event {
        key: format!("uncertain:{name}"),
        kind: EventKind::Uncertain,
        campaign: Some(name.clone()),
        reason: format!(
            "{} intent(s) may have executed and are unsettled after the settle grace ({} s); the oldest is intent {} ({}) since {}",
            old.len(),
            grace.num_seconds(),
            oldest.intent_id,
            oldest.kind.as_str(),
            oldest.since.to_rfc3339()
        ),
        command: oldest.what_to_do.clone(),
        since: Some(oldest.since),
    })
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone as _;

    use super::*;
    use crate::metrics::notify::{NOTIFY_EVENTS, NOTIFY_FORMATS};
    use crate::notify::config::Format;
    use crate::views::list::{LinkUse, MoneyUse};
    use crate::views::overview::CampaignState;
    use linkrunner_domain::money::Money;
    use linkrunner_domain::records::HeldTwice;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 28, 3, 0, 0).unwrap()
    }

    fn row(name: &str, state: CampaignState, reason: Option<&str>) -> CampaignRow {
        CampaignRow {
            campaign: name.into(),
            account: "default".into(),
            state,
            state_reason: reason.map(str::to_string),
            next_round: None,
            money: MoneyUse {
                monthly_commitment: Money::from_rubles(100),
                monthly_cap: Money::from_rubles(1000),
                uncertain_money: Money::ZERO,
            },
            links_held: 1,
            other_links: 0,
            links: LinkUse {
                links_today: 1,
                daily_links_cap: 5,
                links_total: 1,
                total_links_cap: 10,
            },
            autobuyers: 0,
            autobuyers_running: 0,
            uncertain: 0,
            last_round: None,
        }
    }

    fn derive_of(halts: &[Halt], rows: &[CampaignRow]) -> Vec<Event> {
        derive(&Observed {
            halts,
            rows,
            statuses: &BTreeMap::new(),
            lost: &[],
            removals: &[],
            held_twice: &[],
            now: t0(),
            settle_grace: chrono::Duration::seconds(120),
        })
    }

    #[test]
    fn a_global_halt_is_one_event_for_all_campaigns_not_one_per_campaign() {
        let halt = Halt::automatic(
            HaltScope::Global,
            "credentials rejected during list_links",
            t0(),
        );
        let rows = [
            row("a", CampaignState::Halted, Some("all spending stopped")),
            row("b", CampaignState::Halted, Some("all spending stopped")),
        ];
        let events = derive_of(std::slice::from_ref(&halt), &rows);
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0].kind, EventKind::Halted);
        assert_eq!(events[0].campaign, None);
        assert!(events[0].text().contains("credentials rejected"));
        // A halt set again later is another event; the same one keeps its key.
        let again = Halt {
            since: t0() + chrono::Duration::minutes(5),
            ..halt.clone()
        };
        assert_ne!(derive_of(&[again], &[])[0].key, events[0].key);
        assert_eq!(derive_of(&[halt], &[])[0].key, events[0].key);
    }

    #[test]
    fn states_an_operator_must_act_on_are_told_with_their_reason_and_a_command() {
        let rows = [
            row(
                "w",
                CampaignState::WaitingForOperator,
                Some("waiting for an operator: x"),
            ),
            row(
                "s",
                CampaignState::Stalled,
                Some("stalled (insufficient_balance): y"),
            ),
            row("r", CampaignState::Running, None),
            row("p", CampaignState::Paused, Some("paused")),
            row("f", CampaignState::Failing, Some("the last round failed")),
            row("t", CampaignState::Settling, Some("1 intent(s)")),
        ];
        let events = derive_of(&[], &rows);
        let kinds: Vec<_> = events
            .iter()
            .map(|e| (e.campaign.clone().unwrap(), e.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("w".to_string(), EventKind::WaitingForOperator),
                ("s".to_string(), EventKind::Stalled)
            ]
        );
        assert_eq!(events[0].reason, "waiting for an operator: x");
        assert!(events[0].command.contains("linkrunner status w"));
        let text = events[1].text();
        assert!(
            text.contains("campaign s")
                && text.contains("insufficient_balance")
                && text.contains("linkrunner status s"),
            "{text}"
        );
    }

    #[test]
    fn a_state_this_version_does_not_name_is_told_as_other() {
        assert_eq!(EventKind::of_state("removals_held"), Some(EventKind::Other));
        assert_eq!(EventKind::of_state("running"), None);
        assert_eq!(EventKind::of_state("halted"), None);
    }

    #[test]
    fn caps_reached_are_told_while_the_campaign_buys() {
        let mut full = row("c", CampaignState::Running, None);
        full.money.monthly_commitment = full.money.monthly_cap;
        full.links.links_total = full.links.total_links_cap;
        let events = derive_of(&[], std::slice::from_ref(&full));
        let keys: Vec<_> = events.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "cap_reached:monthly:c:100000",
                "cap_reached:total_links:c:10"
            ]
        );
        assert!(events[0].command.contains("budget.monthly"));
        assert!(events[1].command.contains("budget.total_links"));
        let paused = CampaignRow {
            state: CampaignState::Paused,
            ..full
        };
        assert!(derive_of(&[], &[paused]).is_empty());
    }

    #[test]
    fn links_lost_are_told_once_per_latest_loss() {
        let lost = |latest| LostLinks {
            campaign: "l".into(),
            links: 2,
            latest,
        };
        let told = |l: LostLinks| {
            derive(&Observed {
                halts: &[],
                rows: &[],
                statuses: &BTreeMap::new(),
                lost: &[l],
                removals: &[],
                held_twice: &[],
                now: t0(),
                settle_grace: chrono::Duration::seconds(120),
            })
        };
        let first = told(lost(t0()));
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].kind, EventKind::LinksLost);
        assert!(first[0].reason.starts_with("2 link(s) left"));
        assert!(first[0].command.contains("linkrunner history l"));
        let later = told(lost(t0() + chrono::Duration::minutes(1)));
        assert_ne!(later[0].key, first[0].key);
    }

    #[test]
    fn removals_held_together_are_one_event_naming_them_and_the_way_out() {
        let removal = |name: &str, state| RemovalRow {
            campaign: name.into(),
            seen_at: t0(),
            state,
            resolved: None,
        };
        let told = |removals: &[RemovalRow]| {
            derive(&Observed {
                halts: &[],
                rows: &[],
                statuses: &BTreeMap::new(),
                lost: &[],
                removals,
                held_twice: &[],
                now: t0(),
                settle_grace: chrono::Duration::seconds(120),
            })
        };
        let held = [
            removal("a", RemovalState::Held),
            removal("b", RemovalState::Held),
            removal("c", RemovalState::Proceeded),
        ];
        let events = told(&held);
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0].kind, EventKind::RemovalsHeld);
        assert!(
            events[0]
                .reason
                .contains("2 campaign(s) vanished together (a, b)")
        );
        assert!(events[0].command.contains("linkrunner resolve removals"));
        assert!(
            told(&held[2..]).is_empty(),
            "a removal that went ahead is not held"
        );
        let more = [held[0].clone(), removal("d", RemovalState::Held)];
        assert_ne!(
            told(&more)[0].key,
            events[0].key,
            "another hold is told again"
        );
    }

    #[test]
    fn a_page_held_twice_is_told_with_both_links_the_url_and_the_campaign_once_per_finding() {
        let finding = |first_seen| HeldTwiceFinding {
            campaign: "acme".into(),
            url: Some("https://acme.example/shoes".into()),
            project_id: Some(5000),
            first_seen,
            held: HeldTwice {
                url_id: 7,
                page_id: 42,
                links: 2,
                link_ids: vec![101, 205],
            },
        };
        let told = |f: HeldTwiceFinding| {
            derive(&Observed {
                halts: &[],
                rows: &[],
                statuses: &BTreeMap::new(),
                lost: &[],
                removals: &[],
                held_twice: &[f],
                now: t0(),
                settle_grace: chrono::Duration::seconds(120),
            })
        };
        let events = told(finding(t0()));
        assert_eq!(events.len(), 1, "{events:?}");
        let e = &events[0];
        assert_eq!(e.kind, EventKind::PageHeldTwice);
        assert_eq!(e.campaign.as_deref(), Some("acme"));
        assert_eq!(
            e.reason,
            "page 42 holds 2 links for https://acme.example/shoes (URL id 7 of project 5000): links 101, 205; the URL pays twice for one page"
        );
        assert!(e.command.starts_with("withdraw one of links 101, 205"));
        assert_eq!(
            told(finding(t0()))[0].key,
            e.key,
            "the same finding, one key"
        );
        let recurred = told(finding(t0() + chrono::Duration::minutes(5)));
        assert_ne!(recurred[0].key, e.key, "a recurrence is told again");
    }

    #[test]
    fn every_kind_and_format_is_a_label_of_the_counters() {
        let kinds: Vec<_> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(kinds, NOTIFY_EVENTS);
        let formats: Vec<_> = Format::ALL.iter().map(|f| f.as_str()).collect();
        assert_eq!(formats, NOTIFY_FORMATS);
        for k in EventKind::ALL {
            assert_eq!(
                serde_json::to_value(k).unwrap(),
                serde_json::json!(k.as_str())
            );
        }
    }
}

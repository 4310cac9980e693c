//! Keeps the per-campaign gauges true: read from the journal after each campaign's pass and
//! for every campaign at start, so `/metrics` never does database work on a scrape. Many
//! campaigns at once ([`refresh_campaigns`]: at start, after a reconciliation) are read in
//! batches that count intents instead of reading them (`Store::gauges_of`), not with a dozen
//! queries per campaign.

use chrono::{DateTime, Utc};

use crate::decide::recorded::Recorded;
use crate::effects::Engine;
use crate::market::Market;
use crate::metrics::{CAMPAIGN_STATES, CampaignGaugeValues, STALL_REASONS};
use crate::store::{
    CHUNK, CampaignGauges, Halt, HaltAccounts, IntentKind, IntentState, StallReason, StoreError,
};
use crate::views::overview::{FileFact, StateFacts, classify};
use linkrunner_domain::money::Money;

/// Refreshes one campaign's gauges. `file` is what its file says: present (paused or not),
/// removed, or not known (an invalid file holds the campaign as recorded: not removed).
pub async fn refresh_campaign<M: Market>(e: &Engine<M>, name: &str, file: FileFact) {
    let now = e.clock().now();
    match Recorded::load(e.store(), name, now.date_naive()).await {
        Ok(r) => {
            // The account-wide operator's halt covers each campaign's record.
            show_operator_halt(e, &r.halts);
            set_gauges(e, name, &Shown::of_recorded(&r), file)
        }
        Err(err) => not_refreshed(e, name, &err),
    }
}

/// [`refresh_campaign`] for each `(name, file)`: the same gauges, from a read of
/// [`CHUNK`] campaigns at a time that counts intents instead of reading them (`gauges_of`,
/// a few queries a batch), so refreshing 10,000 campaigns after a reconciliation costs
/// little however long their history.
pub async fn refresh_campaigns<M: Market>(e: &Engine<M>, campaigns: &[(String, FileFact)]) {
    for batch in campaigns.chunks(CHUNK) {
        refresh_batch(e, batch).await;
    }
}

async fn refresh_batch<M: Market>(e: &Engine<M>, campaigns: &[(String, FileFact)]) {
    let names: Vec<String> = campaigns.iter().map(|(n, _)| n.clone()).collect();
    let today = e.clock().now().date_naive();
    let read = async {
        Ok((
            e.store().reports().gauges_of(&names, today).await?,
            e.store().halts().await?,
        ))
    };
    let read = async {
        let (gauges, halts) = read.await?;
        let accounts = e.store().halt_accounts(&halts).await?;
        Ok::<_, StoreError>((gauges, halts, accounts))
    };
    let (gauges, halts, accounts) = match read.await {
        Ok(r) => r,
        Err(err) => return not_refreshed(e, "*", &err),
    };
    show_operator_halt(e, &halts);
    for (name, file) in campaigns {
        match gauges.get(name) {
            Some(g) => {
                let shown = Shown::of_gauges(name, g, (&halts, &accounts));
                set_gauges(e, name, &shown, *file)
            }
            None => not_refreshed(
                e,
                name,
                &StoreError::NotFound {
                    what: format!("campaign `{name}`"),
                },
            ),
        }
    }
}

/// `linkrunner_operator_halt`: read with the campaigns' gauges, from the halts just read.
fn show_operator_halt<M: Market>(e: &Engine<M>, halts: &[Halt]) {
    // Every account's or one account's: a campaign's (the anomaly brake's) stops that
    // campaign alone.
    let halted = halts.iter().any(|h| h.is_operator() && h.is_wide());
    e.metrics().operator_halt.set(i64::from(halted));
}

fn not_refreshed<M: Market>(e: &Engine<M>, name: &str, err: &StoreError) {
    e.metrics().database_errors_total.inc();
    tracing::warn!(campaign = name, error = %err, "could not refresh metrics");
}

/// What one campaign's gauges show, from its [`Recorded`] or from [`CampaignGauges`].
struct Shown {
    committed: Money,
    cap: Money,
    uncertain: usize,
    held: usize,
    stalled: Option<StallReason>,
    last_success: Option<DateTime<Utc>>,
    /// A wide halt applies: every account's or its account's (credentials rejected, or an
    /// operator's halt).
    halted: bool,
    /// An autobuyer creation is uncertain, a halt of its own applies, or the file asks more
    /// than is approved (`resolve approve`).
    waiting: bool,
}

impl Shown {
    /// Not a rule: the gauges copy what the journal recorded, as [`Shown::of_gauges`] does
    /// from the batch read.
    fn of_recorded(r: &Recorded) -> Shown {
        Shown {
            committed: r.budget.committed,
            cap: r.budget.cap,
            uncertain: r.uncertain.len(),
            held: r
                .purchases
                .iter()
                .filter(|i| i.state == IntentState::Succeeded)
                .count(),
            stalled: r.stall.as_ref().and_then(|s| s.reason),
            last_success: r.last_success.as_ref().map(|l| l.slot),
            halted: r.halts.iter().any(Halt::is_wide),
            waiting: r
                .uncertain
                .iter()
                .any(|i| i.kind == IntentKind::CreateAutobuyer)
                || r.halts.iter().any(|h| !h.is_wide())
                || crate::decide::approval::waiting_in(&r.budget).is_some(),
        }
    }

    fn of_gauges(
        name: &str,
        g: &CampaignGauges,
        (halts, accounts): (&[Halt], &HaltAccounts),
    ) -> Shown {
        let covering = || halts.iter().filter(|h| accounts.covers(h, name));
        Shown {
            committed: g.budget.committed,
            cap: g.budget.cap,
            uncertain: g.uncertain as usize,
            held: g.bought as usize,
            stalled: g.stall.as_ref().and_then(|s| s.reason),
            last_success: g.last_success.as_ref().map(|l| l.slot),
            halted: covering().any(Halt::is_wide),
            waiting: g.uncertain_creations > 0
                || covering().any(|h| !h.is_wide())
                || crate::decide::approval::waiting_in(&g.budget).is_some(),
        }
    }
}

fn set_gauges<M: Market>(e: &Engine<M>, name: &str, r: &Shown, file: FileFact) {
    // A removed campaign buys nothing more: whatever stalled it is no longer an operator's job.
    let stalled = r.stalled.filter(|_| file != FileFact::Removed);
    let state = campaign_state(r, file);
    let values = CampaignGaugeValues {
        state: CAMPAIGN_STATES
            .iter()
            .position(|s| *s == state)
            .unwrap_or(0),
        committed_rubles: r.committed.as_rubles_f64(),
        cap_rubles: r.cap.as_rubles_f64(),
        uncertain: r.uncertain as u64,
        held: r.held as u64,
        stalled: stalled.and_then(|s| STALL_REASONS.iter().position(|x| *x == s.as_str())),
        last_success: r.last_success.map(|slot| slot.timestamp() as f64),
    };
    e.metrics().campaigns.set(name, &values);
}

/// The `state` label, decided by the same `classify` as `status`, the API and the page
/// (its coarser metric word: what is not removed, halted, waiting or paused is `active`).
fn campaign_state(r: &Shown, file: FileFact) -> &'static str {
    let facts = StateFacts {
        file,
        halted: r.halted,
        // `waiting` already counts uncertain autobuyer creations and a wait for approval with
        // the campaign's halts.
        own_halt: r.waiting,
        uncertain_creations: 0,
        awaiting_approval: false,
        uncertain: r.uncertain,
        stalled: r.stalled.is_some(),
        last_round: None,
    };
    classify(&facts).metric_label()
}

/// Refreshes `linkrunner_intents{kind,state}` from one aggregate query.
pub(crate) async fn refresh_intents<M: Market>(e: &Engine<M>) {
    match e.store().intents().intent_counts().await {
        Ok(counts) => {
            for k in IntentKind::ALL {
                for s in IntentState::ALL {
                    let n = counts
                        .iter()
                        .find(|(ck, cs, _)| ck == k && cs == s)
                        .map(|c| c.2)
                        .unwrap_or(0);
                    e.metrics()
                        .intents
                        .with_label_values(&[k.as_str(), s.as_str()])
                        .set(n);
                }
            }
        }
        Err(err) => {
            e.metrics().database_errors_total.inc();
            tracing::warn!(error = %err, "could not count intents for metrics");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::{ROUND_OUTCOMES, STALL_REASONS};
    use crate::store::{RoundOutcome, StallReason};

    /// The metric's closed label sets are the store's enums, value for value.
    #[test]
    fn metric_label_sets_are_the_stores_enums() {
        let reasons: Vec<&str> = StallReason::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(reasons, STALL_REASONS);
        let outcomes: Vec<&str> = RoundOutcome::ALL.iter().map(|r| r.as_str()).collect();
        let mut want = ROUND_OUTCOMES.to_vec();
        want.sort_unstable();
        let mut got = outcomes.clone();
        got.sort_unstable();
        assert_eq!(got, want);
    }
}

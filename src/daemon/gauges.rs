//! Keeps the per-campaign gauges true: read from the journal after each campaign's pass and
//! for every campaign at start, so `/metrics` never does database work on a scrape. Many
//! campaigns at once ([`refresh_campaigns`]: at start, after a reconciliation) are read in
//! batches (`Recorded::load_many`, each table once a batch), not a dozen queries per campaign.

use crate::engine::Engine;
use crate::engine::recorded::Recorded;
use crate::market::Market;
use crate::store::{CHUNK, Halt, IntentKind, IntentState, StallReason, StoreError};

/// The closed set of values of the `state` label of `linkrunner_campaign_state`.
pub const CAMPAIGN_STATES: [&str; 5] = [
    "active",
    "paused",
    "halted",
    "waiting_for_operator",
    "removed",
];

/// Refreshes one campaign's gauges. `paused` is `None` for a campaign whose file was removed.
pub async fn refresh_campaign<M: Market>(e: &Engine<M>, name: &str, paused: Option<bool>) {
    let now = e.clock.now();
    match Recorded::load(&e.store, name, now.date_naive()).await {
        Ok(r) => set_gauges(e, name, &r, paused),
        Err(err) => not_refreshed(e, name, &err),
    }
}

/// [`refresh_campaign`] for each `(name, paused)`, from batch reads of the journal of
/// [`CHUNK`] campaigns each (a dozen queries a batch; memory that of one batch).
pub async fn refresh_campaigns<M: Market>(e: &Engine<M>, campaigns: &[(String, Option<bool>)]) {
    for batch in campaigns.chunks(CHUNK) {
        refresh_batch(e, batch).await;
    }
}

async fn refresh_batch<M: Market>(e: &Engine<M>, campaigns: &[(String, Option<bool>)]) {
    let names: Vec<String> = campaigns.iter().map(|(n, _)| n.clone()).collect();
    let today = e.clock.now().date_naive();
    let recorded = match Recorded::load_many(&e.store, &names, today).await {
        Ok(r) => r,
        Err(err) => return not_refreshed(e, "*", &err),
    };
    for (name, paused) in campaigns {
        match recorded.get(name) {
            Some(r) => set_gauges(e, name, r, *paused),
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

fn not_refreshed<M: Market>(e: &Engine<M>, name: &str, err: &StoreError) {
    e.metrics.database_errors_total.inc();
    tracing::warn!(campaign = name, error = %err, "could not refresh metrics");
}

fn set_gauges<M: Market>(e: &Engine<M>, name: &str, r: &Recorded, paused: Option<bool>) {
    let m = &e.metrics;
    let labels = [name];
    m.monthly_commitment_rubles
        .with_label_values(&labels)
        .set(r.budget.committed.as_rubles_f64());
    m.monthly_cap_rubles
        .with_label_values(&labels)
        .set(r.budget.cap.as_rubles_f64());
    m.uncertain_intents
        .with_label_values(&labels)
        .set(r.uncertain.len() as i64);
    let held = r
        .purchases
        .iter()
        .filter(|i| i.state == IntentState::Succeeded)
        .count();
    m.links_held.with_label_values(&labels).set(held as i64);
    m.init_campaign(name);
    // A removed campaign buys nothing more: whatever stalled it is no longer an operator's job.
    let stalled = r.stall.as_ref().and_then(|s| s.reason);
    let stalled = stalled.filter(|_| paused.is_some());
    let reasons = StallReason::ALL
        .iter()
        .map(|r| (r.as_str(), Some(*r) == stalled));
    m.set_stalled(name, reasons);
    if let Some(last) = &r.last_success {
        m.last_successful_round_timestamp_seconds
            .with_label_values(&labels)
            .set(last.slot.timestamp() as f64);
    }
    let state = campaign_state(r, paused);
    for s in CAMPAIGN_STATES {
        m.campaign_state
            .with_label_values(&[name, s])
            .set(i64::from(s == state));
    }
}

fn campaign_state(r: &Recorded, paused: Option<bool>) -> &'static str {
    let waiting = r
        .uncertain
        .iter()
        .any(|i| i.kind == IntentKind::CreateAutobuyer)
        || r.halts.iter().any(|h| !h.is_global());
    match paused {
        None => "removed",
        Some(_) if r.halts.iter().any(Halt::is_global) => "halted",
        Some(_) if waiting => "waiting_for_operator",
        Some(true) => "paused",
        Some(false) => "active",
    }
}

/// Refreshes `linkrunner_intents{kind,state}` from one aggregate query.
pub async fn refresh_intents<M: Market>(e: &Engine<M>) {
    match e.store.intent_counts().await {
        Ok(counts) => {
            for k in IntentKind::ALL {
                for s in IntentState::ALL {
                    let n = counts
                        .iter()
                        .find(|(ck, cs, _)| ck == k && cs == s)
                        .map(|c| c.2)
                        .unwrap_or(0);
                    e.metrics
                        .intents
                        .with_label_values(&[k.as_str(), s.as_str()])
                        .set(n);
                }
            }
        }
        Err(err) => {
            e.metrics.database_errors_total.inc();
            tracing::warn!(error = %err, "could not count intents for metrics");
        }
    }
}

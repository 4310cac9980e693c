//! Settling intents: an outcome is recorded in one transaction with everything it implies —
//! remote ids, a held link, an autobuyer's budget, or the release of a reservation.
//! `Failed` releases; `Uncertain` keeps the reservation counted as spent; `Succeeded` turns it
//! into what the effect holds. Operator evidence (`resolve_intent`) settles the same way.

use std::time::Instant;

use chrono::{DateTime, Utc};
use sqlx::AnyConnection;

use super::causes::{CauseKind, IntentCause, insert_causes};
use super::evidence::effect_from_request;
use super::rows::{intent_columns, intent_from_row, reserve_day};
use crate::store::StoreError;
use crate::store::campaigns::remote;
use crate::store::handles::Intents;
use crate::store::links::held;
use crate::store::money::budget::{self, Movement};
use crate::store::rows::db;
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::intents::{AttemptRef, Effect, IntentId, IntentRow, Outcome, Resolution};
use linkrunner_domain::money::Money;

/// A claimed intent: its row as it was before this settlement, plus its reservation day.
pub(crate) struct Claimed {
    row: IntentRow,
    day: Option<String>,
}

impl Intents<'_> {
    /// Records the outcome of one attempt. Only an `in_flight` or `uncertain` intent whose
    /// attempt count is still `at.attempt` can be completed, checked in this transaction: a
    /// finished one is `InvalidState` (an outcome is never applied twice) and one re-armed
    /// since is `Fenced` (only the attempt that sent the call records its outcome; tested by
    /// `an_outcome_is_recorded_only_by_the_attempt_that_sent_the_call`). A purchase that turns
    /// uncertain is marked never to be bought again automatically.
    pub async fn complete_intent(
        self,
        at: AttemptRef,
        outcome: Outcome,
        answer: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let started = Instant::now();
        let result = async {
            let mut tx = self.write_tx("complete_intent").await?;
            let (state, error) = match &outcome {
                Outcome::Succeeded(_) => ("succeeded", None),
                Outcome::Failed { error } | Outcome::Indeterminate { error, .. } => {
                    ("failed", Some(error.as_str()))
                }
                Outcome::Uncertain { error } => ("uncertain", Some(error.as_str())),
            };
            let change = Change {
                state,
                error,
                answer,
                attempt: Some(at.attempt),
            };
            let claimed = claim(
                &mut tx,
                at.intent,
                &["in_flight", "uncertain"],
                &change,
                now,
            )
            .await?;
            match outcome {
                Outcome::Succeeded(effect) => apply_effect(&mut tx, &claimed, effect, now).await?,
                Outcome::Failed { .. } => release(&mut tx, &claimed, now).await?,
                Outcome::Uncertain { .. } => {}
                Outcome::Indeterminate { effect, .. } => {
                    apply_effect(&mut tx, &claimed, effect, now).await?
                }
            }
            tx.commit().await.map_err(db("complete_intent"))
        }
        .await;
        self.observe_write("complete", started);
        self.write_done(result).await
    }

    /// Settles an uncertain intent on an operator's evidence, recording when and why.
    /// `Created` applies the effect its kind implies (see [`effect_from_request`]).
    pub async fn resolve_intent(
        self,
        id: IntentId,
        resolution: Resolution,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<IntentRow, StoreError> {
        transaction!(self, "resolve_intent", |tx| {
            let (state, error) = match resolution {
                Resolution::Created { .. } => ("succeeded", None),
                Resolution::NotCreated => ("failed", Some("resolved by an operator: not created")),
            };
            let change = Change {
                state,
                error,
                answer: None,
                attempt: None,
            };
            let claimed = claim(&mut tx, id, &["uncertain"], &change, now).await?;
            match resolution {
                Resolution::Created { remote_id } => {
                    let effect = effect_from_request(&claimed.row, remote_id)?;
                    apply_effect(&mut tx, &claimed, effect, now).await?;
                }
                Resolution::NotCreated => release(&mut tx, &claimed, now).await?,
            }
            let row = note_resolution(&mut tx, id, reason, now).await?;
            let attempt = AttemptRef {
                intent: id,
                attempt: claimed.row.attempts,
            };
            let mut cause = IntentCause::bare(CauseKind::Resolve);
            cause.note = reason.to_string();
            insert_causes(&mut tx, &[attempt], &cause, now).await?;
            Ok(row)
        })
    }
}

/// The new state of a claimed intent, and the attempt the claimer speaks for (`None`: the
/// current holder settling whatever attempt is recorded).
pub(crate) struct Change<'a> {
    state: &'a str,
    error: Option<&'a str>,
    answer: Option<&'a str>,
    attempt: Option<u32>,
}

/// Moves the intent to `change.state` if it is in one of `from` (and at `change.attempt`); the
/// conditional UPDATE makes two racing completions impossible (the loser sees `InvalidState`,
/// or `Fenced` when the attempt was superseded).
pub(crate) async fn claim(
    conn: &mut AnyConnection,
    id: IntentId,
    from: &[&str],
    change: &Change<'_>,
    now: DateTime<Utc>,
) -> Result<Claimed, StoreError> {
    let before = sqlx::query(concat!(
        "SELECT ",
        intent_columns!(),
        " FROM intents WHERE id = $1"
    ))
    .bind(id.0)
    .fetch_optional(&mut *conn)
    .await
    .map_err(db("settle"))?
    .ok_or_else(|| StoreError::NotFound {
        what: format!("intent {id}"),
    })?;
    let row = intent_from_row(&before)?;
    let day = reserve_day(&before)?;
    let from_first = from.first().copied().unwrap_or("in_flight");
    let from_second = from.get(1).copied().unwrap_or(from_first);
    if change.attempt.is_some_and(|a| a != row.attempts) {
        return Err(StoreError::Fenced {
            campaign: row.campaign,
        });
    }
    let moved = run!(
        fetch_optional, &mut *conn, "settle",
        "UPDATE intents SET state = $2, error = COALESCE($3, error), answer = COALESCE($4, answer), \
         updated_at = $5, rebuy_blocked = CASE WHEN $2 = 'uncertain' AND kind = 'purchase' \
         THEN 1 ELSE rebuy_blocked END \
         WHERE id = $1 AND (state = $6 OR state = $7) AND ($8 IS NULL OR attempts = $8) RETURNING id";
        id.0, change.state, change.error, change.answer, to_millis(now), from_first, from_second,
        change.attempt.map(i64::from)
    )?;
    if moved.is_none() {
        return Err(StoreError::invalid(format!(
            "intent {id} is {}; only {} can be settled",
            row.state,
            from.join(" or ")
        )));
    }
    Ok(Claimed { row, day })
}

async fn note_resolution(
    conn: &mut AnyConnection,
    id: IntentId,
    reason: &str,
    now: DateTime<Utc>,
) -> Result<IntentRow, StoreError> {
    let row = sqlx::query(concat!(
        "UPDATE intents SET resolution = $2, resolved_at = $3 WHERE id = $1 RETURNING ",
        intent_columns!()
    ))
    .bind(id.0)
    .bind(reason)
    .bind(to_millis(now))
    .fetch_one(&mut *conn)
    .await
    .map_err(db("resolve_intent"))?;
    intent_from_row(&row)
}

/// Gives back what the intent reserved: money, its links and its day's links.
async fn release(
    conn: &mut AnyConnection,
    c: &Claimed,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let m = Movement {
        campaign: &c.row.campaign,
        intent: Some(c.row.id),
        amount: -c.row.reserved.kopecks(),
        links: -i64::from(c.row.reserved_links),
        day: c.day.as_deref(),
        reason: "release",
    };
    budget::apply(conn, &m, now).await
}

/// A success whose effect holds no money must not silently drop the money its intent reserved.
fn refuse_dropped_reservation(c: &Claimed, effect: &Effect) -> Result<(), StoreError> {
    let takes_reservation = matches!(
        effect,
        Effect::Purchased { .. }
            | Effect::AutobuyerCreated { .. }
            | Effect::AutobuyerRunning { .. }
            | Effect::AutobuyerSwitchUnknown { .. }
    );
    if !takes_reservation && (c.row.reserved != Money::ZERO || c.row.reserved_links != 0) {
        return Err(StoreError::invalid(format!(
            "intent {} reserved {} RUB but its effect holds no money; complete it with the effect that does",
            c.row.id, c.row.reserved
        )));
    }
    Ok(())
}

/// A created autobuyer keeps its reservation while it runs; one created stopped releases it.
async fn autobuyer_created(
    conn: &mut AnyConnection,
    c: &Claimed,
    record: &remote::NewAutobuyer<'_>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let kept = if record.running {
        c.row.reserved
    } else {
        Money::ZERO
    };
    remote::save_autobuyer(conn, &c.row.campaign, record, kept).await?;
    if !record.running {
        release(conn, c, now).await?;
    }
    Ok(())
}

/// Records what a successful call did, and where its reservation goes.
async fn apply_effect(
    conn: &mut AnyConnection,
    c: &Claimed,
    effect: Effect,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let campaign = c.row.campaign.as_str();
    refuse_dropped_reservation(c, &effect)?;
    match effect {
        Effect::None => Ok(()),
        Effect::ProjectCreated(ids) => remote::save_project(conn, campaign, &ids).await,
        Effect::TextsAdded(urls) => remote::save_texts(conn, campaign, &urls).await,
        Effect::FilterCreated { name, id } => remote::save_filter(conn, campaign, &name, id).await,
        Effect::AutobuyerCreated {
            name,
            id,
            running,
            spec_fingerprint,
            monthly_budget,
        } => {
            let record = remote::NewAutobuyer {
                name: &name,
                id,
                running,
                spec_fingerprint: &spec_fingerprint,
                monthly_budget,
            };
            autobuyer_created(conn, c, &record, now).await
        }
        Effect::AutobuyerRunning { name, running } => {
            autobuyer_running(conn, c, &name, running, now).await
        }
        Effect::AutobuyerSwitchUnknown { name } => {
            remote::autobuyer_switch_unknown(conn, campaign, &name, c.row.reserved).await
        }
        Effect::Purchased {
            link,
            page_id,
            url_id,
            text_id,
            price,
        } => {
            let held = held::NewHeld {
                link,
                page_id,
                url_id,
                text_id,
                price,
            };
            held::hold(conn, &c.row, &held, now).await
        }
    }
}

/// A switch the marketplace confirmed. A start moves the reservation into the autobuyer's
/// counted budget; a stop reserves nothing, and its budget stays counted until the stop is
/// settled.
async fn autobuyer_running(
    conn: &mut AnyConnection,
    c: &Claimed,
    name: &str,
    running: bool,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let campaign = c.row.campaign.as_str();
    if running {
        return remote::autobuyer_started(conn, campaign, name, c.row.reserved).await;
    }
    release(conn, c, now).await?;
    remote::autobuyer_stop_confirmed(conn, campaign, name, now).await
}

//! Beginning intents: the fence check, the unique natural key (re-arming only a `failed`
//! intent) and the reservation, all in one transaction, so an intent is either fully
//! recorded with its money set aside or not at all. Also listing intents and the takeover
//! step that turns a previous holder's in-flight intents into uncertain ones.

use std::time::Instant;

use chrono::{DateTime, Utc};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use super::causes::{IntentCause, insert_causes};
use super::rows::{intent_columns, intent_from_row};
use crate::store::handles::Intents;
use crate::store::money::reserve;
use crate::store::rows::day_text;
use crate::store::rows::stored;
use crate::store::rows::{col, db, parsed};
use crate::store::{AnyQuery, StoreError};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::intents::{
    AttemptRef, BeginOutcome, IntentFilter, IntentKind, IntentRow, IntentState, NewIntent,
};
use linkrunner_domain::records::LeaseToken;

impl Intents<'_> {
    /// Records a batch of intents before their call, all or nothing. Never starts an intent
    /// whose natural key exists unless that intent `failed` and is not a purchase that was ever
    /// uncertain (then re-armed: attempts + 1, fresh reservation). Tested by `duplicate_natural_key_is_not_started_again`,
    /// `cap_is_never_passed_by_racing_stores` and `batch_is_all_or_nothing`.
    pub async fn begin_intents(
        self,
        lease: &LeaseToken,
        batch: &[NewIntent],
        now: DateTime<Utc>,
    ) -> Result<BeginOutcome, StoreError> {
        self.begin_intents_because(lease, batch, None, now).await
    }

    /// [`Store::begin_intents`], recording `cause` for every started attempt in the same
    /// transaction (the engine always gives one; `history` and `explain` read it).
    pub async fn begin_intents_because(
        self,
        lease: &LeaseToken,
        batch: &[NewIntent],
        cause: Option<&IntentCause>,
        now: DateTime<Utc>,
    ) -> Result<BeginOutcome, StoreError> {
        let started = Instant::now();
        if let Some(other) = batch.iter().find(|i| i.campaign != lease.campaign) {
            return Err(StoreError::invalid(format!(
                "intent `{}` is for campaign `{}` but the lease is for `{}`",
                other.natural_key, other.campaign, lease.campaign
            )));
        }
        let result = async {
            let mut tx = self.write_tx("begin_intents").await?;
            let outcome = begin_in(&mut tx, lease, batch, now).await?;
            if let (BeginOutcome::Started(ids), Some(cause)) = (&outcome, cause) {
                insert_causes(&mut tx, ids, cause, now).await?;
            }
            match outcome {
                BeginOutcome::Started(_) => tx.commit().await,
                _ => tx.rollback().await,
            }
            .map_err(db("begin_intents"))?;
            Ok(outcome)
        }
        .await;
        self.observe_write("begin", started);
        self.write_done(result).await
    }

    /// Lists intents, oldest first. One campaign's are found through its index: SQLite
    /// cannot use an index on `($1 IS NULL OR campaign = $1)` and scanned every campaign's
    /// intents instead (with 100,000 intents, 16 ms a call; `Recorded::load` makes three).
    pub async fn find_intents(self, filter: IntentFilter) -> Result<Vec<IntentRow>, StoreError> {
        let mut query = sqlx::query(sqlx::AssertSqlSafe(intents_sql(&filter)));
        if let Some(campaign) = &filter.campaign {
            query = query.bind(campaign.clone());
        }
        let rows = query.fetch_all(&self.pool).await.map_err(db("intents"));
        self.done(rows.and_then(|rows| rows.iter().map(intent_from_row).collect()))
    }

    /// What a campaign's record reads of its intents, in one query: every intent not
    /// `failed` (failed ones are history whose money is released; leaving them out keeps this
    /// small however long the campaign has run), and every autobuyer start or stop in any
    /// state (their count is the next generation). Ordered by id.
    pub(crate) async fn live_intents_and_switches(
        self,
        campaign: &str,
    ) -> Result<Vec<IntentRow>, StoreError> {
        let sql = LIVE_AND_SWITCHES_SQL;
        let query = sqlx::query(sql).bind(campaign);
        self.read_all("live_intents_and_switches", query, intent_from_row)
            .await
    }

    /// How many intents there are per kind and state: one aggregate query, for the
    /// `linkrunner_intents` gauge.
    pub(crate) async fn intent_counts(
        self,
    ) -> Result<Vec<(IntentKind, IntentState, i64)>, StoreError> {
        let rows = run!(
            fetch_all,
            &self.pool,
            "intent_counts",
            "SELECT kind, state, CAST(COUNT(*) AS BIGINT) AS n FROM intents GROUP BY kind, state"
        );
        let read = |row: &sqlx::any::AnyRow| -> Result<_, StoreError> {
            Ok((
                parsed(row, "kind", IntentKind::parse)?,
                parsed(row, "state", IntentState::parse)?,
                col::<i64>(row, "n")?,
            ))
        };
        self.done(rows.and_then(|rows| rows.iter().map(read).collect()))
    }

    /// Whether the campaign has an intent in flight: a pass that just took the lease reads
    /// this first, so the common case (nothing left behind) costs one read, not a write.
    pub(crate) async fn has_in_flight(self, campaign: &str) -> Result<bool, StoreError> {
        let row = run!(
            fetch_optional, &self.pool, "has_in_flight",
            "SELECT id FROM intents WHERE campaign = $1 AND state = 'in_flight' LIMIT 1";
            campaign
        );
        Ok(self.done(row)?.is_some())
    }

    /// At takeover or restart: the campaign's in-flight intents may have been sent by a process
    /// that is gone, so they become uncertain. Returns how many; [`StoreError::Fenced`] (and
    /// nothing written) when `lease` is no longer current.
    pub async fn mark_in_flight_uncertain(
        self,
        campaign: &str,
        lease: &LeaseToken,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let result = async {
            if lease.campaign != campaign {
                return Err(StoreError::invalid(format!(
                    "the lease is for `{}`, not `{campaign}`",
                    lease.campaign
                )));
            }
            let mut tx = self.write_tx("mark_in_flight_uncertain").await?;
            if !fence_holds(&mut tx, lease, now).await? {
                return Err(StoreError::Fenced {
                    campaign: campaign.to_string(),
                });
            }
            let done = run!(
                execute, &mut *tx, "mark_in_flight_uncertain",
                "UPDATE intents SET state = 'uncertain', updated_at = $2, \
                 error = COALESCE(error, 'in flight when the campaign lease changed hands'), \
                 rebuy_blocked = CASE WHEN kind = 'purchase' THEN 1 ELSE rebuy_blocked END \
                 WHERE campaign = $1 AND state = 'in_flight'";
                campaign, to_millis(now)
            )?;
            tx.commit().await.map_err(db("mark_in_flight_uncertain"))?;
            Ok(done.rows_affected())
        }
        .await;
        self.write_done(result).await
    }
}

async fn begin_in(
    conn: &mut AnyConnection,
    lease: &LeaseToken,
    batch: &[NewIntent],
    now: DateTime<Utc>,
) -> Result<BeginOutcome, StoreError> {
    if !fence_holds(conn, lease, now).await? {
        return Ok(BeginOutcome::Fenced);
    }
    let mut ids = Vec::with_capacity(batch.len());
    for intent in batch {
        match record(conn, intent, &lease.holder, now).await? {
            Ok(id) => ids.push(id),
            Err(existing) => return Ok(BeginOutcome::Exists(Box::new(existing))),
        }
    }
    if let Some(refused) = reserve::reserve_batch(conn, batch, &ids, now).await? {
        return Ok(refused);
    }
    Ok(BeginOutcome::Started(ids))
}

/// The SQL of [`Store::intents`], the campaign (if any) bound as `$1`: only the conditions
/// the filter sets, each one an index can serve. One text for every filter,
/// `($1 IS NULL OR campaign = $1) AND ...`, made SQLite scan the whole table for one
/// campaign (seconds with a million rows, issue 13). The kind and the states are written as
/// literals, so PostgreSQL's statistics of them serve a cached (generic) plan too; they are
/// the fixed texts of closed enums, never input. Empty `states` still lists the known states
/// only, as that text did.
/// A campaign's live intents and its autobuyer switches in every state
/// ([`Store::live_intents_and_switches`]). Two index ranges, not one condition with OR: a
/// campaign may hold millions of failed intents, and neither half may have to read them
/// (indexes `intents_campaign_state` and `intents_campaign_kind`).
pub(in crate::store) const LIVE_AND_SWITCHES_SQL: &str = concat!(
    "SELECT ",
    intent_columns!(),
    " FROM intents WHERE campaign = $1 AND state IN ('in_flight', 'succeeded', 'uncertain') \
     UNION ALL SELECT ",
    intent_columns!(),
    " FROM intents WHERE campaign = $1 AND kind IN ('start_autobuyer', 'stop_autobuyer') \
     AND state = 'failed' ORDER BY id"
);

pub(in crate::store) fn intents_sql(filter: &IntentFilter) -> String {
    let mut states = if filter.states.is_empty() {
        IntentState::ALL.to_vec()
    } else {
        filter.states.clone()
    };
    states.sort();
    states.dedup();
    let mut conditions = Vec::new();
    if filter.campaign.is_some() {
        conditions.push("campaign = $1".to_string());
    }
    if let Some(kind) = filter.kind {
        conditions.push(format!("kind = '{}'", kind.as_str()));
    }
    let states: Vec<String> = states.iter().map(|s| format!("'{}'", s.as_str())).collect();
    conditions.push(format!("state IN ({})", states.join(", ")));
    format!(
        "SELECT {} FROM intents WHERE {} ORDER BY id",
        intent_columns!(),
        conditions.join(" AND ")
    )
}

/// True when the lease row still names this holder and fence and has not expired. The no-op
/// UPDATE takes the row lock, so a takeover waits for this transaction instead of racing it.
pub(crate) async fn fence_holds(
    conn: &mut AnyConnection,
    lease: &LeaseToken,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let row = run!(
        fetch_optional, &mut *conn, "fence",
        "UPDATE leases SET fence = fence WHERE campaign = $1 AND holder = $2 AND fence = $3 \
         AND expires_at > $4 RETURNING fence";
        &lease.campaign, &lease.holder, lease.fence, to_millis(now)
    )?;
    Ok(row.is_some())
}

/// What one attempt of an intent stores: its request and its reservation.
struct Attempt<'a> {
    intent: &'a NewIntent,
    owner: &'a str,
    amount: i64,
    links: i64,
    day: Option<String>,
    at: i64,
}

/// Inserts a new intent or re-arms a failed one; `Err(row)` is the existing intent that
/// may not start again.
async fn record(
    conn: &mut AnyConnection,
    intent: &NewIntent,
    owner: &str,
    now: DateTime<Utc>,
) -> Result<Result<AttemptRef, IntentRow>, StoreError> {
    let r = intent.reserve.as_ref();
    let attempt = Attempt {
        intent,
        owner,
        amount: r.map_or(0, |r| r.amount.kopecks()),
        links: r.map_or(0, |r| i64::from(r.links)),
        day: r.map(|r| day_text(r.day)),
        at: to_millis(now),
    };
    if let Some(id) = insert_new(conn, &attempt).await? {
        return Ok(Ok(id));
    }
    match rearm_failed(conn, &attempt).await? {
        Some(id) => Ok(Ok(id)),
        None => Ok(Err(intent_by_key(conn, &intent.natural_key).await?)),
    }
}

async fn insert_new(
    conn: &mut AnyConnection,
    a: &Attempt<'_>,
) -> Result<Option<AttemptRef>, StoreError> {
    let insert = sqlx::query(
        "INSERT INTO intents (natural_key, fingerprint, request, reserved, reserved_links, \
         reserve_day, owner, created_at, updated_at, campaign, kind, state, attempts) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10, 'in_flight', 1) \
         ON CONFLICT (natural_key) DO NOTHING RETURNING id, attempts",
    );
    let row = bind_attempt(insert, a)
        .bind(&a.intent.campaign)
        .bind(a.intent.kind.as_str())
        .fetch_optional(&mut *conn)
        .await
        .map_err(db("begin_intents"))?;
    row.map(|r| attempt_of(&r)).transpose()
}

/// Only a `failed` intent (definitely not executed) is started again under its key, and
/// never a purchase that was ever uncertain: it may have bought the page after all. Only the
/// same campaign's: a purchase key names the URL id and page, not the campaign, so another
/// campaign's row under it is refused, never re-armed (its reservation would count against
/// the other campaign's budget). Tested by `a_page_bought_for_a_url_id_is_refused_under_a_new_name_without_a_rekey`.
async fn rearm_failed(
    conn: &mut AnyConnection,
    a: &Attempt<'_>,
) -> Result<Option<AttemptRef>, StoreError> {
    let rearm = sqlx::query(
        "UPDATE intents SET state = 'in_flight', attempts = attempts + 1, fingerprint = $2, \
         request = $3, answer = NULL, error = NULL, reserved = $4, reserved_links = $5, \
         reserve_day = $6, owner = $7, updated_at = $8, resolution = NULL, resolved_at = NULL \
         WHERE natural_key = $1 AND state = 'failed' AND rebuy_blocked = 0 AND campaign = $9 \
         RETURNING id, attempts",
    );
    let row = bind_attempt(rearm, a)
        .bind(&a.intent.campaign)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db("begin_intents"))?;
    row.map(|r| attempt_of(&r)).transpose()
}

/// What both ways of starting an attempt write, bound as `$1`..`$8` in this order: the key,
/// the request (fingerprint, body), the reservation (amount, links, day), the owner, the time.
fn bind_attempt<'q>(q: AnyQuery<'q>, a: &Attempt<'_>) -> AnyQuery<'q> {
    q.bind(a.intent.natural_key.clone())
        .bind(a.intent.fingerprint.clone())
        .bind(a.intent.request.to_string())
        .bind(a.amount)
        .bind(a.links)
        .bind(a.day.clone())
        .bind(a.owner.to_string())
        .bind(a.at)
}

fn attempt_of(row: &AnyRow) -> Result<AttemptRef, StoreError> {
    Ok(AttemptRef {
        intent: stored(row, "id")?,
        attempt: stored(row, "attempts")?,
    })
}

async fn intent_by_key(conn: &mut AnyConnection, key: &str) -> Result<IntentRow, StoreError> {
    let sql = concat!(
        "SELECT ",
        intent_columns!(),
        " FROM intents WHERE natural_key = $1"
    );
    let row = run!(fetch_one, &mut *conn, "begin_intents", sql; key)?;
    intent_from_row(&row)
}

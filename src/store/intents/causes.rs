//! Why money moved: each attempt of an intent records its cause ([`IntentCause`]) in the
//! transaction that records the attempt, and an operator's `resolve` adds one more; the
//! history joins the append-only ledger with intents and causes ([`HistoryEntry`]).
//!
//! Recording is one INSERT per started attempt, in `begin_intents`' own transaction, so an
//! intent never exists without its cause (tested by `tests/it` `store::history`).

use chrono::{DateTime, Utc};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use super::rows::{intent_columns, intent_from_row};
use crate::store::handles::Reports;
use crate::store::rows::col;
use crate::store::rows::{read_row, stored, stored_as_text};
use crate::store::{LedgerEntry, StoreError};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::intents::{AttemptRef, IntentId, IntentRow, text_enum};
use linkrunner_domain::money::Money;

text_enum!(
    /// What made an intent: a scheduled buy round (with its slot) or a `once` pass that
    /// buys (no slot), a reconciliation (project, texts, filters, autobuyers), the removal of
    /// a campaign file, or an operator's `resolve`.
    CauseKind {
        Round => "round",
        Reconcile => "reconcile",
        Removal => "removal",
        Resolve => "resolve",
    }
);
stored_as_text!(CauseKind);

/// Why an attempt was made, as the pass that made it saw things.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct IntentCause {
    pub kind: CauseKind,
    /// The buy round's schedule slot (none for `once` and reconciliations).
    pub slot: Option<DateTime<Utc>>,
    /// SHA-256 of the campaign file's bytes (none for a removed file).
    pub file_digest: Option<String>,
    /// The commit checked out in the campaigns directory, when it is a git work tree.
    pub git_commit: Option<String>,
    /// The campaign's caps in the file version that made the attempt.
    pub monthly_cap: Option<Money>,
    pub max_link_price: Option<Money>,
    /// Free text: the operator's reason for a `resolve`.
    pub note: String,
}

impl IntentCause {
    /// A cause that knows nothing but its kind.
    pub fn bare(kind: CauseKind) -> Self {
        IntentCause {
            kind,
            slot: None,
            file_digest: None,
            git_commit: None,
            monthly_cap: None,
            max_link_price: None,
            note: String::new(),
        }
    }
}

/// One recorded cause of one attempt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CauseRow {
    intent_id: IntentId,
    pub attempt: u32,
    pub cause: IntentCause,
    pub(crate) at: DateTime<Utc>,
}

/// One movement of the commitment with what caused it: the ledger row, its intent (if any)
/// and the cause of the attempt that moved it (the latest recorded at or before the movement).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HistoryEntry {
    pub ledger: LedgerEntry,
    #[serde(skip)]
    pub intent: Option<IntentRow>,
    pub cause: Option<CauseRow>,
}

/// Records `cause` for each started attempt; part of the caller's transaction.
pub(crate) async fn insert_causes(
    conn: &mut AnyConnection,
    ids: &[AttemptRef],
    cause: &IntentCause,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    for id in ids {
        run!(
            execute, &mut *conn, "intent_causes",
            "INSERT INTO intent_causes (intent_id, attempt, cause, slot, file_digest, git_commit, \
             monthly_cap, max_link_price, note, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
            id.intent.0, i64::from(id.attempt), cause.kind.as_str(), cause.slot.map(to_millis),
            cause.file_digest.clone(), cause.git_commit.clone(),
            cause.monthly_cap.map(Money::kopecks), cause.max_link_price.map(Money::kopecks),
            cause.note.clone(), to_millis(now)
        )?;
    }
    Ok(())
}

fn cause_from_row(row: &AnyRow) -> Result<CauseRow, StoreError> {
    Ok(read_row!(
        row,
        CauseRow {
            intent_id,
            attempt,
            cause: read_row!(
                row,
                IntentCause {
                    kind: stored(row, "cause")?,
                    slot,
                    file_digest,
                    git_commit,
                    monthly_cap,
                    max_link_price,
                    note,
                }
            ),
            at,
        }
    ))
}

/// The columns `cause_from_row` reads, as a literal for `concat!` (queries stay `&'static str`).
macro_rules! cause_columns {
    () => {
        "c.intent_id, c.attempt, c.cause, c.slot, c.file_digest, c.git_commit, c.monthly_cap, \
         c.max_link_price, c.note, c.at"
    };
}

impl Reports<'_> {
    /// Every recorded cause of one intent, oldest first.
    pub async fn causes_of(self, intent: IntentId) -> Result<Vec<CauseRow>, StoreError> {
        let sql = concat!(
            "SELECT ",
            cause_columns!(),
            " FROM intent_causes c WHERE c.intent_id = $1 ORDER BY c.id"
        );
        let query = sqlx::query(sql).bind(intent.0);
        self.read_all("causes_of", query, cause_from_row).await
    }

    /// One intent by id.
    pub(crate) async fn intent(self, id: IntentId) -> Result<Option<IntentRow>, StoreError> {
        let sql = concat!("SELECT ", intent_columns!(), " FROM intents WHERE id = $1");
        let query = sqlx::query(sql).bind(id.0);
        self.read_optional("intent", query, intent_from_row).await
    }

    /// The intent that bought the link the marketplace calls `link_id`, if one of ours did.
    /// Link ids are each marketplace account's own (issue 34): when two accounts' campaigns
    /// hold a link of that id, which one is meant is not guessed; the error names both
    /// intents, to be asked for as `intent:ID`.
    pub(crate) async fn intent_of_link(self, link_id: i64) -> Result<Option<IntentId>, StoreError> {
        let query = sqlx::query(
            "SELECT intent_id, campaign FROM held_links WHERE link_id = $1 ORDER BY intent_id",
        )
        .bind(link_id);
        let found: Vec<(i64, String)> = self
            .read_all("intent_of_link", query, |r| {
                Ok((col(r, "intent_id")?, col(r, "campaign")?))
            })
            .await?;
        match found.as_slice() {
            [] => Ok(None),
            [(id, _)] => Ok(Some(IntentId(*id))),
            many => {
                let named: Vec<String> = many
                    .iter()
                    .map(|(id, c)| format!("intent:{id} (campaign {c})"))
                    .collect();
                Err(StoreError::invalid(format!(
                    "link {link_id} is the id of links in several accounts' marketplaces: {}; ask for one of them",
                    named.join(", ")
                )))
            }
        }
    }

    /// The ledger entries of one intent, oldest first.
    pub(crate) async fn ledger_of_intent(
        self,
        id: IntentId,
    ) -> Result<Vec<LedgerEntry>, StoreError> {
        let query = sqlx::query(
            "SELECT id, campaign, intent_id, delta, links, reason, at FROM ledger \
             WHERE intent_id = $1 ORDER BY id",
        )
        .bind(id.0);
        self.read_all("ledger_of_intent", query, ledger_from_row)
            .await
    }

    /// What moved money and why: the ledger of one campaign (or all), from `since` on, oldest
    /// first, each movement with its intent and the cause of the attempt that moved it.
    pub async fn history(
        self,
        campaign: Option<&str>,
        since: Option<DateTime<Utc>>,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let result = async {
            let ledger = self.ledger_since(campaign, since).await?;
            let intents = self.intents_of_ledger(campaign, since).await?;
            let causes = self.causes_of_ledger(campaign, since).await?;
            Ok(ledger
                .into_iter()
                .map(|l| {
                    let intent = l.intent_id.and_then(|i| intents.get(&i).cloned());
                    let cause = l.intent_id.and_then(|i| latest_cause(&causes, i, l.at));
                    HistoryEntry {
                        ledger: l,
                        intent,
                        cause,
                    }
                })
                .collect())
        }
        .await;
        self.done(result)
    }

    async fn ledger_since(
        self,
        campaign: Option<&str>,
        since: Option<DateTime<Utc>>,
    ) -> Result<Vec<LedgerEntry>, StoreError> {
        let sql = "SELECT id, campaign, intent_id, delta, links, reason, at FROM ledger \
                   WHERE ($1 IS NULL OR campaign = $1) AND at >= $2 ORDER BY id";
        let rows = self.history_rows(sql, campaign, since).await?;
        rows.iter().map(ledger_from_row).collect()
    }

    async fn intents_of_ledger(
        self,
        campaign: Option<&str>,
        since: Option<DateTime<Utc>>,
    ) -> Result<std::collections::HashMap<IntentId, IntentRow>, StoreError> {
        let sql = concat!(
            "SELECT ",
            intent_columns!(),
            " FROM intents WHERE id IN (SELECT intent_id FROM ledger \
             WHERE ($1 IS NULL OR campaign = $1) AND at >= $2)"
        );
        let rows = self.history_rows(sql, campaign, since).await?;
        rows.iter()
            .map(|r| intent_from_row(r).map(|i| (i.id, i)))
            .collect()
    }

    async fn causes_of_ledger(
        self,
        campaign: Option<&str>,
        since: Option<DateTime<Utc>>,
    ) -> Result<Vec<CauseRow>, StoreError> {
        let sql = concat!(
            "SELECT ",
            cause_columns!(),
            " FROM intent_causes c WHERE c.intent_id IN (SELECT intent_id FROM ledger \
             WHERE ($1 IS NULL OR campaign = $1) AND at >= $2) ORDER BY c.id"
        );
        let rows = self.history_rows(sql, campaign, since).await?;
        rows.iter().map(cause_from_row).collect()
    }

    /// The rows of one of [`Self::history`]'s reads: `$1` the campaign (NULL: every one), `$2`
    /// the first moment (`since`, else the earliest).
    async fn history_rows(
        self,
        sql: &'static str,
        campaign: Option<&str>,
        since: Option<DateTime<Utc>>,
    ) -> Result<Vec<AnyRow>, StoreError> {
        run!(
            fetch_all, &self.pool, "history",
            sql;
            campaign.map(str::to_string), since.map_or(i64::MIN, to_millis)
        )
    }
}

/// The cause in force for a movement at `at`: the latest recorded at or before it. An
/// operator's resolve is recorded after its own ledger movement in the same transaction, at
/// the same time, so "at or before" finds it.
fn latest_cause(causes: &[CauseRow], intent: IntentId, at: DateTime<Utc>) -> Option<CauseRow> {
    causes
        .iter()
        .rev()
        .find(|c| c.intent_id == intent && c.at <= at)
        .or_else(|| causes.iter().find(|c| c.intent_id == intent))
        .cloned()
}

pub(crate) fn ledger_from_row(r: &AnyRow) -> Result<LedgerEntry, StoreError> {
    Ok(read_row!(
        r,
        LedgerEntry {
            id,
            campaign,
            intent_id,
            delta,
            links,
            reason,
            at,
        }
    ))
}

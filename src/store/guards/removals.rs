//! Removals as decisions (issue 32): a row per recorded campaign whose file was seen gone,
//! until the file returns. The daemon and `once` note what they see
//! ([`Campaigns::observe_removals`]), ask `decide::removal` whether to hold, and record the
//! verdict ([`Campaigns::hold_removals`], [`Campaigns::proceed_removals`]); the operator's
//! `resolve removals` is [`Campaigns::resolve_removals`]. Being in the journal, a restart and
//! every replica see the same removals and honour the same word. Tested by `tests/it`
//! `store::removals::*` on PostgreSQL and SQLite.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;

use crate::store::StoreError;
use crate::store::handles::Campaigns;
use crate::store::rows::{col, opt_time, read_row};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::records::{OperatorWord, RemovalRow};

const SELECT_ALL: &str = "SELECT campaign, seen_at, state, resolved_by, resolved_at, reason \
     FROM campaign_removals ORDER BY campaign";

impl Campaigns<'_> {
    /// Every removal the journal records, by campaign name.
    pub async fn removals(self) -> Result<Vec<RemovalRow>, StoreError> {
        let query = sqlx::query(SELECT_ALL);
        self.read_all("removals", query, removal_row).await
    }

    /// Notes what a reading of the campaign files showed, in one transaction: each of `gone`
    /// not yet recorded is recorded `pending`, seen at `now` (a row already there keeps its
    /// time and state: the first process to see a file gone sets when); the row of a campaign
    /// `present` again is deleted (its file returned, so its removal is over). Returns every
    /// row after that.
    pub async fn observe_removals(
        self,
        gone: &[String],
        present: &BTreeSet<String>,
        now: DateTime<Utc>,
    ) -> Result<Vec<RemovalRow>, StoreError> {
        transaction!(self, "observe_removals", |tx| {
            let before: Vec<String> = run!(
                fetch_all,
                &mut *tx,
                "observe_removals",
                "SELECT campaign FROM campaign_removals"
            )?
            .iter()
            .map(|r| col(r, "campaign"))
            .collect::<Result<_, _>>()?;
            for name in before.iter().filter(|n| present.contains(*n)) {
                run!(
                    execute, &mut *tx, "observe_removals",
                    "DELETE FROM campaign_removals WHERE campaign = $1";
                    name
                )?;
            }
            for name in gone.iter().filter(|n| !before.contains(n)) {
                run!(
                    execute, &mut *tx, "observe_removals",
                    "INSERT INTO campaign_removals (campaign, seen_at, state) VALUES ($1, $2, 'pending') \
                     ON CONFLICT (campaign) DO NOTHING";
                    name, to_millis(now)
                )?;
            }
            let rows = run!(fetch_all, &mut *tx, "observe_removals", SELECT_ALL)?;
            let rows = rows.iter().map(removal_row).collect::<Result<_, _>>()?;
            Ok(rows)
        })
    }

    /// The verdict was to hold: `pending` removals of `names` become `held`.
    pub async fn hold_removals(self, names: &[String]) -> Result<(), StoreError> {
        self.move_removals(
            "hold_removals",
            names,
            "UPDATE campaign_removals SET state = 'held' WHERE campaign = $1 AND state = 'pending'",
        )
        .await
    }

    /// The verdict was to proceed: `pending` and `held` removals of `names` become
    /// `proceeded` (a `resolved` one stays as the operator left it).
    pub async fn proceed_removals(self, names: &[String]) -> Result<(), StoreError> {
        self.move_removals(
            "proceed_removals",
            names,
            "UPDATE campaign_removals SET state = 'proceeded' \
             WHERE campaign = $1 AND state IN ('pending', 'held')",
        )
        .await
    }

    async fn move_removals(
        self,
        op: &'static str,
        names: &[String],
        sql: &'static str,
    ) -> Result<(), StoreError> {
        if names.is_empty() {
            return Ok(());
        }
        transaction!(self, op, |tx| {
            for name in names {
                run!(execute, &mut *tx, op, sql; name)?;
            }
            Ok(())
        })
    }

    /// The operator's `resolve removals`: every removal not yet decided or held proceeds,
    /// recorded with who, when and why. Returns the campaigns it let proceed.
    pub async fn resolve_removals(
        self,
        by: &str,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<Vec<String>, StoreError> {
        transaction!(self, "resolve_removals", |tx| {
            let names: Vec<String> = run!(
                fetch_all, &mut *tx, "resolve_removals",
                "SELECT campaign FROM campaign_removals WHERE state IN ('pending', 'held') ORDER BY campaign"
            )?
            .iter()
            .map(|r| col(r, "campaign"))
            .collect::<Result<_, _>>()?;
            run!(
                execute, &mut *tx, "resolve_removals",
                "UPDATE campaign_removals SET state = 'resolved', resolved_by = $1, resolved_at = $2, reason = $3 \
                 WHERE state IN ('pending', 'held')";
                by, to_millis(now), reason
            )?;
            Ok(names)
        })
    }
}

fn removal_row(r: &AnyRow) -> Result<RemovalRow, StoreError> {
    let resolution = match (
        col::<Option<String>>(r, "resolved_by")?,
        opt_time(r, "resolved_at")?,
    ) {
        (Some(by), Some(at)) => Some(OperatorWord {
            by,
            at,
            reason: col::<Option<String>>(r, "reason")?.unwrap_or_default(),
            links: None,
        }),
        _ => None,
    };
    Ok(read_row!(
        r,
        RemovalRow {
            campaign,
            seen_at,
            state,
            resolved: resolution,
        }
    ))
}

//! Spending halts: while a halt is set (e.g. the marketplace rejected an account's
//! credentials), nothing it covers is bought. A halt stops every campaign
//! ([`HaltScope::Global`], key `*`), every campaign of one marketplace account
//! ([`HaltScope::Account`], key `@ID`) or one campaign (its name). Kept in the database so
//! every replica sees it and a restart does not forget it. Which account a campaign spends in
//! is the journal's `campaigns.account` ([`Store::halt_accounts`]).
//!
//! Two tables, two kinds ([`HaltKind`]): `halts` holds the automatic halts, which
//! [`Store::set_halt`] and [`Store::clear_halt`] move with their causes; `operator_halts`
//! holds an operator's halt, which only [`Store::operator_resume`] deletes, with every halt
//! and resume kept in `operator_halt_events`. [`Store::halts`] reads both.

use chrono::{DateTime, Utc};

use crate::store::rows::{col, db, read_row, stored, time};
use crate::store::{AnyQuery, Store, StoreError, Tx};
use linkrunner_domain::account::DEFAULT_ACCOUNT;
use linkrunner_domain::clock::to_millis;

pub use linkrunner_domain::halts::{Halt, HaltEvent, HaltKind, HaltScope};

/// Who the anomaly brake's halts say set them: `status`, `history` and the resume that lifts
/// one show it.
const BRAKE: &str = "anomaly brake";

impl Store {
    /// Sets or updates the halt's reason; `since` stays the first time it was set.
    pub async fn set_halt(
        &self,
        scope: &HaltScope,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let change = sqlx::query(
            "INSERT INTO halts (scope, reason, since) VALUES ($1, $2, $3) \
             ON CONFLICT (scope) DO UPDATE SET reason = excluded.reason",
        )
        .bind(scope.key())
        .bind(reason)
        .bind(to_millis(now));
        self.write_one("set_halt", change).await.map(|_| ())
    }

    pub async fn clear_halt(&self, scope: &HaltScope) -> Result<(), StoreError> {
        let change = sqlx::query("DELETE FROM halts WHERE scope = $1").bind(scope.key());
        self.write_one("clear_halt", change).await.map(|_| ())
    }

    /// Every halt in force, the global ones first (an operator's before the credentials'),
    /// then by campaign (sorted here, not by the database, whose collation may place `*`
    /// anywhere).
    pub async fn halts(&self) -> Result<Vec<Halt>, StoreError> {
        // One statement, so a pass never sees one table's state without the other's.
        let rows = run!(
            fetch_all,
            &self.pool,
            "halts",
            "SELECT scope, reason, since, NULL AS halted_by FROM halts \
             UNION ALL SELECT scope, reason, since, halted_by FROM operator_halts"
        );
        let mut halts: Vec<Halt> = self.done(rows.and_then(|rows| {
            rows.iter()
                .map(|r| {
                    let halted_by: Option<String> = col(r, "halted_by")?;
                    Ok(read_row!(
                        r,
                        Halt {
                            scope: HaltScope::from_key(col(r, "scope")?),
                            reason,
                            since,
                            kind: match halted_by {
                                Some(_) => HaltKind::Operator,
                                None => HaltKind::Automatic,
                            },
                            by: halted_by,
                        }
                    ))
                })
                .collect()
        }))?;
        halts.sort_by(|a, b| (&a.scope, !a.is_operator()).cmp(&(&b.scope, !b.is_operator())));
        Ok(halts)
    }

    /// Each recorded campaign's account, for telling which campaigns an account's halt covers;
    /// read only when `halts` holds one (otherwise no account decides anything, and the
    /// answer, empty, says [`linkrunner_domain::account::DEFAULT_ACCOUNT`] of every campaign).
    pub async fn halt_accounts(&self, halts: &[Halt]) -> Result<HaltAccounts, StoreError> {
        if !halts
            .iter()
            .any(|h| matches!(h.scope, HaltScope::Account(_)))
        {
            return Ok(HaltAccounts::default());
        }
        let query = sqlx::query("SELECT name, account FROM campaigns");
        let accounts = self
            .read_all("halt_accounts", query, |r| {
                Ok((col(r, "name")?, col(r, "account")?))
            })
            .await?;
        Ok(HaltAccounts(accounts))
    }

    /// The halts in force that cover `campaign` (of its recorded account): every account's,
    /// its account's, its own.
    pub async fn halts_covering(&self, campaign: &str) -> Result<Vec<Halt>, StoreError> {
        let halts = self.halts().await?;
        let account = match halts
            .iter()
            .any(|h| matches!(h.scope, HaltScope::Account(_)))
        {
            true => self.campaigns().campaign_account(campaign).await?,
            false => None,
        };
        let account = account.as_deref().unwrap_or(DEFAULT_ACCOUNT);
        Ok(halts
            .into_iter()
            .filter(|h| h.scope.covers(campaign, account))
            .collect())
    }

    /// An operator halts all spending of every account (`linkrunner halt`,
    /// `POST /api/v1/halt`): [`Store::operator_halt_scope`] of [`HaltScope::Global`].
    pub async fn operator_halt(
        &self,
        by: &str,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        self.operator_halt_scope(&HaltScope::Global, by, reason, now)
            .await
    }

    /// An operator halts `scope` (every account, or one with `--account`): set, or its reason
    /// and author updated with `since` kept, and the press recorded, in one transaction.
    pub async fn operator_halt_scope(
        &self,
        scope: &HaltScope,
        by: &str,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let set = sqlx::query(
            "INSERT INTO operator_halts (scope, reason, halted_by, since) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (scope) DO UPDATE SET reason = excluded.reason, halted_by = excluded.halted_by",
        );
        let press = Press::new("halt", scope, by, reason, now);
        self.press("operator_halt", press.bind_halt(set), |_| true, &press)
            .await
            .map(|_| ())
    }

    /// The anomaly brake halts `scope` as an operator would, unless an operator's halt of that
    /// scope is already in force: then nothing changes (its reason and `since` stay those of
    /// the first press). Whether it set one, so the brake counts and alerts once. The halt
    /// and its event say the brake set them ([`BRAKE`]), whoever tripped it.
    pub async fn brake(
        &self,
        scope: &HaltScope,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let set = sqlx::query(
            "INSERT INTO operator_halts (scope, reason, halted_by, since) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (scope) DO NOTHING",
        );
        let press = Press::new("halt", scope, BRAKE, reason, now);
        self.press("brake", press.bind_halt(set), |set| set > 0, &press)
            .await
    }

    /// An operator lifts their halt (`linkrunner resume`). Whether one was in force: only
    /// then is the resume recorded (a resume of nothing changes nothing).
    pub async fn operator_resume(
        &self,
        by: &str,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        self.operator_resume_scope(&HaltScope::Global, by, reason, now)
            .await
    }

    /// `linkrunner resume` without `--account` or `--campaign`: every account resumes — the
    /// operator's halt of every account and each account's operator's halt (the anomaly
    /// brake's too) are lifted, each resume recorded; campaigns' halts stay. The scopes lifted.
    pub async fn operator_resume_accounts(
        &self,
        by: &str,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<Vec<HaltScope>, StoreError> {
        let wide = self.halts().await?.into_iter();
        let scopes = wide
            .filter(|h| h.is_operator() && h.is_wide())
            .map(|h| h.scope);
        let mut lifted = Vec::new();
        for scope in scopes {
            if self.operator_resume_scope(&scope, by, reason, now).await? {
                lifted.push(scope);
            }
        }
        Ok(lifted)
    }

    /// [`Store::operator_resume`] of one scope: `linkrunner resume --campaign NAME` lifts the
    /// anomaly brake of one campaign.
    pub async fn operator_resume_scope(
        &self,
        scope: &HaltScope,
        by: &str,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let lift = sqlx::query("DELETE FROM operator_halts WHERE scope = $1").bind(scope.key());
        let press = Press::new("resume", scope, by, reason, now);
        self.press("operator_resume", lift, |lifted| lifted > 0, &press)
            .await
    }

    /// The one shape of a halt's or a resume's transaction: `change` to `operator_halts`, then,
    /// when `recorded` says so of the rows it changed, the press in `operator_halt_events`, then
    /// the commit. Whether the press was recorded.
    async fn press(
        &self,
        op: &'static str,
        change: AnyQuery<'_>,
        recorded: fn(u64) -> bool,
        press: &Press<'_>,
    ) -> Result<bool, StoreError> {
        transaction!(self, op, |tx| {
            let changed = change.execute(&mut *tx).await.map_err(db(op))?;
            let record = recorded(changed.rows_affected());
            if record {
                press.record(&mut tx).await?;
            }
            Ok(record)
        })
    }

    /// When each scope was last resumed: the anomaly brake's windows start no earlier.
    pub async fn last_resumes(
        &self,
    ) -> Result<std::collections::HashMap<HaltScope, DateTime<Utc>>, StoreError> {
        let query = sqlx::query(
            "SELECT scope, MAX(at) AS at FROM operator_halt_events WHERE action = 'resume' \
             GROUP BY scope",
        );
        self.read_all("last_resumes", query, |r| {
            Ok((HaltScope::from_key(col(r, "scope")?), time(r, "at")?))
        })
        .await
    }

    /// The last `limit` halts and resumes, newest first.
    pub async fn halt_events(&self, limit: u32) -> Result<Vec<HaltEvent>, StoreError> {
        let query = sqlx::query(
            "SELECT action, scope, actor, reason, at FROM operator_halt_events \
             ORDER BY id DESC LIMIT $1",
        )
        .bind(i64::from(limit));
        self.read_all("halt_events", query, |r| {
            Ok(read_row!(
                r,
                HaltEvent {
                    action,
                    scope: HaltScope::from_key(col(r, "scope")?),
                    by: stored(r, "actor")?,
                    reason,
                    at,
                }
            ))
        })
        .await
    }
}

/// Each recorded campaign's marketplace account, as [`Store::halt_accounts`] read it.
#[derive(Debug, Clone, Default)]
pub struct HaltAccounts(std::collections::HashMap<String, String>);

impl HaltAccounts {
    /// The account `campaign` spends in: the default one when the journal does not say.
    pub fn of(&self, campaign: &str) -> &str {
        self.0
            .get(campaign)
            .map(String::as_str)
            .unwrap_or(DEFAULT_ACCOUNT)
    }

    /// Whether `halt` stops `campaign`.
    pub fn covers(&self, halt: &Halt, campaign: &str) -> bool {
        halt.scope.covers(campaign, self.of(campaign))
    }
}

/// A halt or a resume as `operator_halt_events` records it.
struct Press<'a> {
    action: &'static str,
    scope: &'a HaltScope,
    by: &'a str,
    reason: &'a str,
    now: DateTime<Utc>,
}

impl<'a> Press<'a> {
    fn new(
        action: &'static str,
        scope: &'a HaltScope,
        by: &'a str,
        reason: &'a str,
        now: DateTime<Utc>,
    ) -> Self {
        Press {
            action,
            scope,
            by,
            reason,
            now,
        }
    }

    /// An `operator_halts` insert's values, `$1`..`$4`: scope, reason, author, since.
    fn bind_halt<'q>(&self, insert: AnyQuery<'q>) -> AnyQuery<'q>
    where
        'a: 'q,
    {
        insert
            .bind(self.scope.key())
            .bind(self.reason)
            .bind(self.by)
            .bind(to_millis(self.now))
    }

    async fn record(&self, tx: &mut Tx) -> Result<(), StoreError> {
        run!(
            execute, &mut **tx, "record_halt_event",
            "INSERT INTO operator_halt_events (action, scope, actor, reason, at) \
             VALUES ($1, $2, $3, $4, $5)";
            self.action, self.scope.key(), self.by, self.reason, to_millis(self.now)
        )?;
        Ok(())
    }
}

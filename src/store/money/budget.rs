//! Caps and the append-only ledger. Every change of `budgets.committed` goes with a `ledger`
//! row in the same transaction, so `sum(ledger.delta) == committed` always (checked after
//! every step in `tests/it/store.rs`, and by a proptest over random sequences).

use chrono::{DateTime, NaiveDate, Utc};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::store::StoreError;
use crate::store::handles::Campaigns;
use crate::store::intents::causes::ledger_from_row;
use crate::store::rows::col;
use crate::store::rows::{day_text, read_row, stored};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::intents::IntentId;
use linkrunner_domain::money::Money;
use linkrunner_domain::records::{BudgetSnapshot, CampaignCaps, LedgerEntry};

/// One movement of the commitment, written as a ledger row.
#[derive(Debug, Clone)]
pub(crate) struct Movement<'a> {
    pub(crate) campaign: &'a str,
    pub(crate) intent: Option<IntentId>,
    pub(crate) amount: i64,
    pub(crate) links: i64,
    pub(crate) day: Option<&'a str>,
    pub(crate) reason: &'static str,
}

impl Movement<'_> {
    /// Whether it moves anything: a movement of no money and no link writes no row.
    fn moves(&self) -> bool {
        self.amount != 0 || self.links != 0
    }
}

/// Moves the commitment by `m` (negative to release) and appends its ledger row.
pub(crate) async fn apply(
    conn: &mut AnyConnection,
    m: &Movement<'_>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    if m.moves() {
        move_budget(conn, m).await?;
    }
    append_ledger(conn, m, now).await
}

/// The budget rows' part of [`apply`]: the commitment and the link counts.
async fn move_budget(conn: &mut AnyConnection, m: &Movement<'_>) -> Result<(), StoreError> {
    run!(
        execute, &mut *conn, "budget",
        "UPDATE budgets SET committed = committed + $1, links = links + $2 WHERE campaign = $3";
        m.amount, m.links, m.campaign
    )?;
    if let (Some(day), true) = (m.day, m.links != 0) {
        run!(
            execute, &mut *conn, "budget",
            "UPDATE budget_days SET links = links + $1 WHERE campaign = $2 AND day = $3";
            m.links, m.campaign, day
        )?;
    }
    Ok(())
}

/// The ledger row alone, for a reservation whose budget rows `reserve` already moved.
pub(crate) async fn append_ledger(
    conn: &mut AnyConnection,
    m: &Movement<'_>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    if !m.moves() {
        return Ok(());
    }
    run!(
        execute, &mut *conn, "ledger",
        "INSERT INTO ledger (campaign, intent_id, delta, links, reason, at) VALUES ($1, $2, $3, $4, $5, $6)";
        m.campaign, m.intent.map(|i| i.0), m.amount, m.links, m.reason, to_millis(now)
    )?;
    Ok(())
}

impl Campaigns<'_> {
    /// Creates the campaign and its budget (nothing committed) or updates its caps; the
    /// commitment is never touched. A lowered cap refuses new reservations, nothing more.
    /// An approval threshold recorded earlier no longer applies ([`Self::record_caps`]).
    pub async fn upsert_campaign(
        self,
        c: &CampaignCaps,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        self.record_caps(c, None, now).await
    }

    /// [`Self::upsert_campaign`] with the file's approval threshold (issue 33, see
    /// `approvals.rs`): the monthly cap recorded is the file's, never above the approved
    /// amount plus the threshold.
    pub async fn record_caps(
        self,
        c: &CampaignCaps,
        threshold: Option<Money>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        transaction!(self, "upsert_campaign", |tx| {
            run!(
                execute, &mut *tx, "upsert_campaign",
                "INSERT INTO campaigns (name, created_at, updated_at, account) VALUES ($1, $2, $2, $3) \
                 ON CONFLICT (name) DO UPDATE SET updated_at = excluded.updated_at";
                &c.name, to_millis(now), &c.account
            )?;
            let cap = super::approvals::record_ask(
                &mut tx,
                &super::approvals::CAMPAIGN,
                &c.name,
                c.monthly_cap,
                threshold,
                now,
            )
            .await?;
            run!(
                execute, &mut *tx, "upsert_campaign",
                "INSERT INTO budgets (campaign, cap, committed, links, total_links, daily_links) \
                 VALUES ($1, $2, 0, 0, $3, $4) ON CONFLICT (campaign) DO UPDATE SET \
                 cap = excluded.cap, total_links = excluded.total_links, daily_links = excluded.daily_links";
                &c.name, cap.kopecks(), i64::from(c.total_links), i64::from(c.daily_links)
            )?;
            Ok(())
        })
    }

    /// The account a campaign was recorded in; `None` for a campaign the journal does not hold.
    pub async fn campaign_account(self, campaign: &str) -> Result<Option<String>, StoreError> {
        let row = run!(
            fetch_optional, &self.pool, "campaign_account",
            "SELECT account FROM campaigns WHERE name = $1"; campaign
        );
        self.done(row)?.map(|r| col(&r, "account")).transpose()
    }

    /// Moves a campaign that holds no project to another account (its file now names that
    /// one): nothing of it belongs to the old account yet. The pass refuses the move of a
    /// campaign that holds a project before it gets here.
    pub async fn move_account(self, campaign: &str, account: &str) -> Result<(), StoreError> {
        let done = run!(
            execute, &self.pool, "move_account",
            "UPDATE campaigns SET account = $2 WHERE name = $1"; campaign, account
        );
        self.done(done).map(|_| ())
    }

    /// Every recorded campaign with the account it spends in, by name.
    pub async fn campaign_accounts(self) -> Result<Vec<(String, String)>, StoreError> {
        let query = sqlx::query("SELECT name, account FROM campaigns ORDER BY name");
        self.read_all("campaign_accounts", query, |r| {
            Ok((col(r, "name")?, col(r, "account")?))
        })
        .await
    }

    pub async fn campaign_names(self) -> Result<Vec<String>, StoreError> {
        let query = sqlx::query("SELECT name FROM campaigns ORDER BY name");
        self.read_all("campaign_names", query, |r| col(r, "name"))
            .await
    }

    /// Where the campaign's commitment stands; `day` selects `links_today`.
    pub async fn budget(
        self,
        campaign: &str,
        day: NaiveDate,
    ) -> Result<BudgetSnapshot, StoreError> {
        let row = run!(fetch_optional, &self.pool, "budget", BUDGET_SQL; day_text(day), campaign);
        match self.done(row)? {
            Some(row) => snapshot_from_row(&row, day),
            None => Err(StoreError::NotFound {
                what: format!("campaign `{campaign}`"),
            }),
        }
    }

    /// Every movement of the campaign's commitment, oldest first.
    pub async fn ledger(self, campaign: &str) -> Result<Vec<LedgerEntry>, StoreError> {
        let query = sqlx::query(
            "SELECT id, campaign, intent_id, delta, links, reason, at FROM ledger WHERE campaign = $1 ORDER BY id",
        )
        .bind(campaign);
        self.read_all("ledger", query, ledger_from_row).await
    }
}

/// The budget rows and, computed independently of `committed`, where the money stands; `$1`
/// is the day of `links_today` and `committed_today` (purchases reserved that day and not
/// released: a failed one's reservation went back). Shared with the batch read (`batch.rs`), so both compute it alike.
macro_rules! budget_select {
    () => {
        concat!(
            "SELECT b.campaign, b.cap, b.committed, b.links, b.total_links, b.daily_links, \
    CAST(COALESCE((SELECT SUM(reserved) FROM intents WHERE campaign = b.campaign AND state = 'in_flight'), 0) AS BIGINT) AS in_flight, \
    CAST(COALESCE((SELECT SUM(reserved) FROM intents WHERE campaign = b.campaign AND state = 'uncertain'), 0) AS BIGINT) AS uncertain, \
    CAST(COALESCE((SELECT SUM(price) FROM held_links WHERE campaign = b.campaign AND released_at IS NULL), 0) AS BIGINT) AS held_links, \
    CAST(COALESCE((SELECT SUM(counted) FROM foreign_links WHERE campaign = b.campaign AND released_at IS NULL), 0) AS BIGINT) AS foreign_links, \
    CAST(COALESCE((SELECT SUM(reserved) FROM autobuyers WHERE campaign = b.campaign), 0) AS BIGINT) AS autobuyers, \
    CAST(COALESCE((SELECT links FROM budget_days WHERE campaign = b.campaign AND day = $1), 0) AS BIGINT) AS links_today, \
    CAST(COALESCE((SELECT SUM(reserved) FROM intents WHERE campaign = b.campaign AND kind = 'purchase' \
        AND reserve_day = $1 AND state IN ('in_flight', 'uncertain', 'succeeded')), 0) AS BIGINT) AS committed_today, ",
            super::approvals::approval_columns!(),
            " FROM budgets b"
        )
    };
}
pub(in crate::store) const BUDGET_SELECT: &str = budget_select!();
/// [`BUDGET_SELECT`] of every campaign at once (the list's read of whole tables): the same
/// columns, each table summed by one grouped pass joined to the budgets instead of a
/// subquery run once per campaign, which at 10,000 campaigns took a second on PostgreSQL.
/// Keep the two alike: tests/it `engine::recorded_many` holds the list's rows (read with
/// this) equal to the statuses (read with [`BUDGET_SQL`]) on both backends. `$1` is the day.
pub(in crate::store) const BUDGET_SELECT_ALL: &str = "SELECT b.campaign, b.cap, b.committed, b.links, b.total_links, b.daily_links, \
    CAST(COALESCE(i.in_flight, 0) AS BIGINT) AS in_flight, \
    CAST(COALESCE(i.uncertain, 0) AS BIGINT) AS uncertain, \
    CAST(COALESCE(h.price, 0) AS BIGINT) AS held_links, \
    CAST(COALESCE(f.counted, 0) AS BIGINT) AS foreign_links, \
    CAST(COALESCE(a.reserved, 0) AS BIGINT) AS autobuyers, \
    CAST(COALESCE(d.links, 0) AS BIGINT) AS links_today, \
    CAST(COALESCE(i.committed_today, 0) AS BIGINT) AS committed_today, \
    ap.approved AS ap_approved, ap.above AS ap_above, ap.wanted AS ap_wanted, \
    ap.approved_by AS ap_by, ap.approved_at AS ap_at, ap.reason AS ap_reason \
    FROM budgets b \
    LEFT JOIN (SELECT campaign, \
        SUM(CASE WHEN state = 'in_flight' THEN reserved ELSE 0 END) AS in_flight, \
        SUM(CASE WHEN state = 'uncertain' THEN reserved ELSE 0 END) AS uncertain, \
        SUM(CASE WHEN kind = 'purchase' AND reserve_day = $1 THEN reserved ELSE 0 END) AS committed_today \
        FROM intents WHERE state IN ('in_flight', 'uncertain') \
        OR (kind = 'purchase' AND reserve_day = $1 AND state = 'succeeded') \
        GROUP BY campaign) i ON i.campaign = b.campaign \
    LEFT JOIN (SELECT campaign, SUM(price) AS price FROM held_links WHERE released_at IS NULL \
        GROUP BY campaign) h ON h.campaign = b.campaign \
    LEFT JOIN (SELECT campaign, SUM(counted) AS counted FROM foreign_links WHERE released_at IS NULL \
        GROUP BY campaign) f ON f.campaign = b.campaign \
    LEFT JOIN (SELECT campaign, SUM(reserved) AS reserved FROM autobuyers \
        GROUP BY campaign) a ON a.campaign = b.campaign \
    LEFT JOIN budget_days d ON d.campaign = b.campaign AND d.day = $1 \
    LEFT JOIN approvals ap ON ap.campaign = b.campaign";

pub(in crate::store) const BUDGET_SQL: &str = concat!(budget_select!(), " WHERE b.campaign = $2");

/// A row of [`BUDGET_SELECT`] read for `day`.
pub(in crate::store) fn snapshot_from_row(
    row: &AnyRow,
    day: NaiveDate,
) -> Result<BudgetSnapshot, StoreError> {
    Ok(read_row!(
        row,
        BudgetSnapshot {
            cap,
            committed,
            held: Money::from_kopecks(
                col::<i64>(row, "held_links")?
                    + col::<i64>(row, "foreign_links")?
                    + col::<i64>(row, "autobuyers")?,
            ),
            reserved_in_flight: stored(row, "in_flight")?,
            uncertain,
            links_total: stored(row, "links")?,
            links_today,
            daily_cap: stored(row, "daily_links")?,
            total_cap: stored(row, "total_links")?,
            day: Some(day),
            committed_today,
            approval: super::approvals::approval_of_budget_row(row)?,
        }
    ))
}

//! The ledger summed over a period: for `linkrunner report --month`, one query that groups
//! the append-only ledger's movements by campaign, the kind of the intent that made them and
//! the ledger's reason (what each group means for finance is decided in `views::month`), or by
//! kind and reason only for the month's total ([`Reports::ledger_totals`], the summary's); for
//! the status page's picture of the month, one query that groups them by campaign and UTC
//! day ([`Reports::ledger_days`], drawn by `views::days`).

use chrono::{DateTime, Utc};
use futures_util::TryStreamExt as _;
use sqlx::AssertSqlSafe;
use sqlx::any::AnyRow;

use crate::store::StoreError;
use crate::store::handles::Reports;
use crate::store::rows::{db, read_row};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::intents::IntentKind;
use linkrunner_domain::money::Money;

/// The movements of one campaign, of one intent kind (none: movements no intent made, such as
/// a settled autobuyer stop) and one ledger reason, summed over a period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerSum {
    pub(crate) campaign: String,
    pub(crate) kind: Option<IntentKind>,
    pub(crate) reason: String,
    pub(crate) delta: Money,
    pub(crate) links: i64,
    pub(crate) movements: i64,
}

/// [`Reports::ledger_sums`]'s query: the groups by campaign, intent kind and reason.
const SUMS_BY_CAMPAIGN: &str = "SELECT l.campaign, i.kind, l.reason, CAST(SUM(l.delta) AS BIGINT) AS delta, \
     CAST(SUM(l.links) AS BIGINT) AS links, CAST(COUNT(*) AS BIGINT) AS movements \
     FROM ledger l LEFT JOIN intents i ON i.id = l.intent_id \
     WHERE l.at >= $1 AND l.at < $2 \
     GROUP BY l.campaign, i.kind, l.reason ORDER BY l.campaign, i.kind, l.reason";

/// [`Reports::ledger_totals`]'s query: the groups by intent kind and reason, `campaign` empty.
const SUMS_OF_ALL: &str = "SELECT '' AS campaign, i.kind, l.reason, CAST(SUM(l.delta) AS BIGINT) AS delta, \
     CAST(SUM(l.links) AS BIGINT) AS links, CAST(COUNT(*) AS BIGINT) AS movements \
     FROM ledger l LEFT JOIN intents i ON i.id = l.intent_id \
     WHERE l.at >= $1 AND l.at < $2 \
     GROUP BY i.kind, l.reason ORDER BY i.kind, l.reason";

impl Reports<'_> {
    /// The ledger's movements with `from <= at < to`, summed by campaign, intent kind and
    /// reason. Their deltas sum to the change of the commitment over the period, as the
    /// ledger's rows do (tested in `tests/it` `engine::month`).
    pub(crate) async fn ledger_sums(
        self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Vec<LedgerSum>, StoreError> {
        self.summed("ledger_sums", SUMS_BY_CAMPAIGN, from, to).await
    }

    /// [`Reports::ledger_sums`] of every campaign together: the movements with
    /// `from <= at < to` summed by intent kind and reason only, each group with an empty
    /// `campaign`. A handful of groups however many campaigns there are: what the summary
    /// totals on every view of the status page, without a line per campaign.
    pub(crate) async fn ledger_totals(
        self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Vec<LedgerSum>, StoreError> {
        self.summed("ledger_totals", SUMS_OF_ALL, from, to).await
    }

    /// The groups `sql` (one of this file's constants, `$1` and `$2` the period) reads.
    async fn summed(
        self,
        op: &'static str,
        sql: &'static str,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Vec<LedgerSum>, StoreError> {
        let query = sqlx::query(sql).bind(to_millis(from)).bind(to_millis(to));
        self.read_all(op, query, sum_from_row).await
    }
}

/// The movements of one campaign on one UTC day, summed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DaySum {
    pub campaign: String,
    /// Whole days since the period's start: 0 for its first day.
    pub day: i64,
    pub delta: Money,
}

const MILLIS_PER_DAY: i64 = 86_400_000;

impl Reports<'_> {
    /// The ledger's movements with `from <= at < to`, summed by campaign (only `campaign`'s
    /// when given) and day counted from `from` (midnight UTC for days in UTC), handed to `each`
    /// as they are read: one aggregate query whose rows are never all held at once, so a month
    /// of 10,000 campaigns costs the caller only what it keeps.
    pub async fn ledger_days(
        self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        campaign: Option<&str>,
        each: impl FnMut(DaySum) + Send,
    ) -> Result<(), StoreError> {
        let (sql, names) = match campaign {
            None => {
                let sql = "SELECT campaign, CAST((at - $1) / $2 AS BIGINT) AS day, \
                           CAST(SUM(delta) AS BIGINT) AS delta FROM ledger \
                           WHERE at >= $3 AND at < $4 GROUP BY campaign, day";
                (sql, Vec::new())
            }
            Some(c) => {
                let sql = "SELECT campaign, CAST((at - $1) / $2 AS BIGINT) AS day, \
                           CAST(SUM(delta) AS BIGINT) AS delta FROM ledger \
                           WHERE at >= $3 AND at < $4 AND campaign = $5 GROUP BY campaign, day";
                (sql, vec![c])
            }
        };
        self.days_of(sql.to_string(), from, to, &names, each).await
    }

    /// The ledger's movements with `from <= at < to` summed by day only, every campaign's
    /// together (`campaign` empty): at most 31 rows however many campaigns there are, the
    /// status page's picture of the month (grouped by campaign too, they were a row per
    /// campaign and day: 100,000 at 10,000 campaigns).
    pub async fn ledger_days_total(
        self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        each: impl FnMut(DaySum) + Send,
    ) -> Result<(), StoreError> {
        let sql = "SELECT '' AS campaign, CAST((at - $1) / $2 AS BIGINT) AS day, \
                   CAST(SUM(delta) AS BIGINT) AS delta FROM ledger \
                   WHERE at >= $3 AND at < $4 GROUP BY day";
        self.days_of(sql.to_string(), from, to, &[], each).await
    }

    /// [`Reports::ledger_days`] of `campaigns` only (the rows one page shows; none: nothing
    /// read), by the ledger's campaign index.
    pub async fn ledger_days_of(
        self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        campaigns: &[&str],
        each: impl FnMut(DaySum) + Send,
    ) -> Result<(), StoreError> {
        if campaigns.is_empty() {
            return Ok(());
        }
        let names: Vec<String> = (5..5 + campaigns.len()).map(|i| format!("${i}")).collect();
        let sql = format!(
            "SELECT campaign, CAST((at - $1) / $2 AS BIGINT) AS day, \
             CAST(SUM(delta) AS BIGINT) AS delta FROM ledger \
             WHERE at >= $3 AND at < $4 AND campaign IN ({}) GROUP BY campaign, day",
            names.join(", ")
        );
        self.days_of(sql, from, to, campaigns, each).await
    }

    /// `sql`'s rows handed to `each` as read: `$1` and `$3` the period's start, `$2` a day in
    /// milliseconds, `$4` its end, then `names`. The text is this file's constants and
    /// numbered placeholders only (names are bound): safe.
    async fn days_of(
        self,
        sql: String,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        names: &[&str],
        mut each: impl FnMut(DaySum) + Send,
    ) -> Result<(), StoreError> {
        let mut query = sqlx::query(AssertSqlSafe(sql))
            .bind(to_millis(from))
            .bind(MILLIS_PER_DAY)
            .bind(to_millis(from))
            .bind(to_millis(to));
        for n in names {
            query = query.bind(*n);
        }
        let result = async {
            let mut rows = query.fetch(&self.pool);
            while let Some(r) = rows.try_next().await.map_err(db("ledger_days"))? {
                each(read_row!(
                    &r,
                    DaySum {
                        campaign,
                        day,
                        delta,
                    }
                ));
            }
            Ok(())
        }
        .await;
        self.done(result)
    }
}

fn sum_from_row(r: &AnyRow) -> Result<LedgerSum, StoreError> {
    Ok(read_row!(
        r,
        LedgerSum {
            campaign,
            kind,
            reason,
            delta,
            links,
            movements,
        }
    ))
}

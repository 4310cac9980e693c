//! What the journal shows committed and appearing per campaign since a moment, for the
//! anomaly brake (`decide::anomaly`, `daemon/brake.rs`): one query over the ledger, the held
//! links and the foreign links, on the indexes of their times.
//!
//! Committed: the ledger's positive movements that are new spending — our reservations and
//! adopted purchases, foreign links counted at their rent and an autobuyer's links above its
//! budget. Appearing: our held links bought and foreign links first seen. In an adopted
//! project the team buys by hand: its foreign links are in neither.

use chrono::{DateTime, Utc};

use crate::store::StoreError;
use crate::store::handles::Reports;
use crate::store::rows::col;
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::money::Money;

/// One campaign's figures since a moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observed {
    pub committed: Money,
    pub links: u64,
}

impl Reports<'_> {
    /// Per campaign that committed or saw links appear with `since <= at <= until` (a frozen test clock writes at `until` itself).
    pub async fn observed_since(
        self,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Vec<(String, Observed)>, StoreError> {
        let rows = run!(
            fetch_all, &self.pool, "observed_since",
            "SELECT campaign, 'c' AS what, CAST(SUM(delta) AS BIGINT) AS n FROM ledger \
             WHERE at >= $1 AND at <= $2 AND delta > 0 AND (reason IN ('reserve', 'adopted_from_list') \
             OR (reason IN ('foreign_link', 'autobuyer_links') \
             AND campaign NOT IN (SELECT campaign FROM adoptions))) \
             GROUP BY campaign \
             UNION ALL SELECT campaign, 'l' AS what, CAST(COUNT(*) AS BIGINT) AS n FROM held_links \
             WHERE bought_at >= $1 AND bought_at <= $2 GROUP BY campaign \
             UNION ALL SELECT campaign, 'l' AS what, CAST(COUNT(*) AS BIGINT) AS n FROM foreign_links \
             WHERE first_seen_at >= $1 AND first_seen_at <= $2 \
             AND campaign NOT IN (SELECT campaign FROM adoptions) GROUP BY campaign";
            to_millis(since), to_millis(until)
        );
        self.done(rows.and_then(|rows| {
            let mut by: std::collections::BTreeMap<String, Observed> = Default::default();
            for r in &rows {
                let o = by.entry(col(r, "campaign")?).or_default();
                let n: i64 = col(r, "n")?;
                match col::<String>(r, "what")?.as_str() {
                    "c" => o.committed = Money::from_kopecks(n),
                    _ => o.links += u64::try_from(n).unwrap_or_default(),
                }
            }
            Ok(by.into_iter().collect())
        }))
    }
}

//! What a reconciliation that only looks reads and writes (issue 34, item 3;
//! `decide/quiet.rs` decides, `effects/quiet.rs` acts): one stamp of everything in the
//! journal that can change what a pass of the campaign does, and, when the link list answers
//! what it answered last, the links' "last seen" moved to this read with the lease released
//! in the same write. Tested by `tests/it`
//! `store::quiet::*` on PostgreSQL and SQLite.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::StoreError;
use super::handles::Campaigns;
use super::rows::db;
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::records::LeaseToken;

/// One statement, so the stamp is of one moment. Each column moves when a writer changes
/// what it covers: any halt or resume (the halt tables, the operator's event log), any
/// intent begun or changed (purchases, switches, creations, an operator's `resolve`), the
/// money (the budget row, the ledger), an approval (the campaign's and the account's) and
/// the account cap, links released, leaving or re-counted, foreign links first seen, an
/// operator's word that the list is complete (and its lapse), an adoption, a round claimed
/// or finished. A writer this does not cover cannot change a converged campaign's plan; a
/// new table that can must be added here (`docs/sizing.md#a-converged-campaign`).
const STAMP_SQL: &str = "SELECT \
    (SELECT COUNT(*) FROM halts), \
    (SELECT COALESCE(MAX(since), 0) FROM halts), \
    (SELECT COUNT(*) FROM operator_halts), \
    (SELECT COALESCE(MAX(id), 0) FROM operator_halt_events), \
    (SELECT COUNT(*) FROM intents WHERE campaign = $1), \
    (SELECT COALESCE(MAX(updated_at), 0) FROM intents WHERE campaign = $1), \
    (SELECT COALESCE(MAX(resolved_at), 0) FROM intents WHERE campaign = $1), \
    (SELECT COALESCE(MAX(cap), -1) FROM budgets WHERE campaign = $1), \
    (SELECT COALESCE(MAX(committed), -1) FROM budgets WHERE campaign = $1), \
    (SELECT COALESCE(MAX(links), -1) FROM budgets WHERE campaign = $1), \
    (SELECT COALESCE(MAX(id), 0) FROM ledger WHERE campaign = $1), \
    (SELECT COALESCE(MAX(updated_at), 0) FROM approvals WHERE campaign = $1), \
    (SELECT COALESCE(MAX(updated_at), 0) FROM account_approval), \
    (SELECT COALESCE(MAX(updated_at), 0) FROM account_cap), \
    (SELECT COUNT(*) FROM held_links WHERE campaign = $1), \
    (SELECT COUNT(released_at) + 2 * COUNT(leaving_since) FROM held_links WHERE campaign = $1), \
    (SELECT COUNT(*) FROM foreign_links WHERE campaign = $1), \
    (SELECT COUNT(released_at) + 2 * COUNT(leaving_since) FROM foreign_links WHERE campaign = $1), \
    (SELECT COUNT(*) + 2 * COUNT(lapsed_at) FROM list_vouches WHERE campaign = $1), \
    (SELECT COUNT(*) FROM adoptions WHERE campaign = $1), \
    (SELECT COUNT(*) + 2 * COUNT(finished_at) FROM rounds WHERE campaign = $1)";

/// Columns of [`STAMP_SQL`].
const STAMP_COLUMNS: usize = 21;

impl Campaigns<'_> {
    /// The journal's stamp of `campaign` (see [`STAMP_SQL`]): equal stamps, nothing a pass
    /// plans from was written in between.
    pub async fn quiet_stamp(self, campaign: &str) -> Result<Vec<i64>, StoreError> {
        let row = run!(fetch_one, &self.pool, "quiet_stamp", STAMP_SQL; campaign);
        self.done(row.and_then(|r| {
            (0..STAMP_COLUMNS)
                .map(|i| r.try_get::<i64, _>(i).map_err(db("quiet_stamp")))
                .collect()
        }))
    }

    /// A read of the link list answered what the read at `listed_at` answered: the links it
    /// showed (their "last seen" is `listed_at`) are seen again `now`, and the look's lease
    /// is released. One transaction, the look's only write besides taking the lease: its
    /// own commit cost a converged campaign's reconciliation a third of its journal time
    /// (issue 34, item 3). How many links moved.
    pub async fn record_look(
        self,
        lease: &LeaseToken,
        listed_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let campaign = lease.campaign.as_str();
        transaction!(self, "record_look", |tx| {
            // `$1` the campaign, `$2` the earlier read's time, `$3` now.
            let mut seen = 0;
            for sql in [
                "UPDATE held_links SET seen_in_list_at = $3 \
                 WHERE campaign = $1 AND seen_in_list_at = $2",
                "UPDATE foreign_links SET last_seen_at = $3 \
                 WHERE campaign = $1 AND last_seen_at = $2",
            ] {
                let changed = run!(
                    execute, &mut *tx, "record_look",
                    sql;
                    campaign, to_millis(listed_at), to_millis(now)
                )?;
                seen += changed.rows_affected();
            }
            // As `Leases::release_lease`: the row stays, expired, to keep the fence.
            run!(
                execute, &mut *tx, "record_look",
                "UPDATE leases SET expires_at = 0 WHERE campaign = $1 AND holder = $2 AND fence = $3";
                campaign, lease.holder.as_str(), lease.fence
            )?;
            Ok(seen)
        })
    }
}

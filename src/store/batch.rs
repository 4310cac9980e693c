//! Reading what the journal holds of many campaigns at once (start-up, `plan`, the state a
//! daemon serves, the gauges): each table in one query for all of them, instead of a dozen
//! queries per campaign one after another. The rows and their order are those of the
//! per-campaign reads (`remote_ids`, `budget`, `intents`, `blocked_purchases`, `held_links`,
//! `foreign_links`, `last_round`, `last_successful_round`, `stall`), which
//! `views::recorded_many` assembles exactly as `Recorded::load` does (tested on both
//! backends by tests/it `engine::recorded_many`).
//!
//! The gauges read less ([`Store::gauges_of`]): counts of intents by one aggregate query; the
//! status page's list reads counts of intents, links and autobuyers ([`Store::list_of`]),
//! each row decoded as it is read, so no query's rows are held at once.
//!
//! Which rows are read: when the campaigns asked for are most of those the journal knows,
//! every row of each table (one query each, no parameters) and rows of other campaigns are
//! dropped here; otherwise `campaign IN (...)` in chunks of [`CHUNK`] names, so `plan one` or
//! the gauges of a few campaigns do not read a large journal whole.

use std::collections::{BTreeMap, HashSet};

use chrono::NaiveDate;
use futures_util::TryStreamExt as _;
use sqlx::AssertSqlSafe;
use sqlx::any::AnyRow;

use super::campaigns::adoption::{adoption_from_row, vouch_from_row};
use super::campaigns::remote::{autobuyer_from_row, project_from_row};
use super::campaigns::stalls::{STALL_COLUMNS, stall_from_row};
use super::handles::Reports;
use super::intents::rows::{intent_columns, intent_from_row};
use super::links::foreign::{foreign_columns, foreign_from_row};
use super::links::held::{HELD_COLUMNS, held_from_row};
use super::money::budget::{BUDGET_SELECT, BUDGET_SELECT_ALL, snapshot_from_row};
use super::rounds::slots::{ROUND_COLUMNS, round_from_row};
use super::rows::{col, count, day_text, db};
use super::{AnyQuery, StoreError};
use linkrunner_domain::intents::IntentRow;
use linkrunner_domain::records::{
    BudgetSnapshot, ForeignLink, HeldLink, RemoteIds, RoundRow, StallRow,
};

/// Most campaign names bound in one `IN (...)`: far below SQLite's and PostgreSQL's limits on
/// parameters, and few queries for the sizes where reading rows by name pays.
pub const CHUNK: usize = 500;

/// What the journal holds of one campaign, as the per-campaign reads return it.
#[derive(Debug, Clone)]
pub struct CampaignJournal {
    pub(crate) budget: BudgetSnapshot,
    pub(crate) ids: RemoteIds,
    /// Oldest first: every intent `in_flight`, `succeeded` or `uncertain`, autobuyer starts
    /// and stops in every state, and failed purchases blocked from being bought again.
    pub(crate) intents: Vec<IntentRow>,
    pub(crate) held: Vec<HeldLink>,
    pub(crate) foreign: Vec<ForeignLink>,
    pub(crate) last_round: Option<RoundRow>,
    pub(crate) last_success: Option<RoundRow>,
    pub(crate) stall: Option<StallRow>,
}

/// How a batch read finds its rows. The product lets [`Reports::journal_read`] choose; tests
/// force each way (and small chunks, so their seams fall between campaigns) on one journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchRead {
    /// Whole tables when the names are at least half the campaigns the journal knows, else
    /// by name in chunks of [`CHUNK`].
    Auto,
    WholeTables,
    ByName {
        chunk: usize,
    },
}

/// What the per-campaign gauges show of a campaign, without its rows: counts, not intents.
#[derive(Debug, Clone)]
pub struct CampaignGauges {
    pub(crate) budget: BudgetSnapshot,
    /// Intents `uncertain`, of any kind.
    pub(crate) uncertain: u32,
    /// Autobuyer creations `uncertain` (they wait for an operator).
    pub(crate) uncertain_creations: u32,
    /// Purchases `succeeded`.
    pub(crate) bought: u32,
    pub(crate) last_success: Option<RoundRow>,
    pub(crate) stall: Option<StallRow>,
}

/// What the campaign list (the status page's table and summary, `/api/v1/summary`) shows of
/// a campaign, without its rows: the budget, counts, the latest round and the stall. Each
/// value is what [`Recorded::load`](crate::decide::recorded::Recorded) holds counted (tested
/// against `status` on both backends by tests/it `engine::recorded_many`).
#[derive(Debug, Clone)]
pub struct CampaignListFacts {
    pub(crate) budget: BudgetSnapshot,
    /// Intents `uncertain`, of any kind, and those that are autobuyer creations.
    pub(crate) uncertain: u32,
    pub(crate) uncertain_creations: u32,
    /// Held and foreign links not released.
    pub(crate) links_held: u32,
    pub(crate) other_links: u32,
    /// Autobuyers recorded, and those that count as running.
    pub(crate) autobuyers: u32,
    pub(crate) autobuyers_running: u32,
    pub(crate) last_round: Option<RoundRow>,
    pub(crate) stall: Option<StallRow>,
}

/// Which campaigns a batch read covers. Either way each campaign's rows come from one query,
/// in the order its per-campaign read gives them (`ORDER BY`); rows of the campaigns a query
/// holds are just told apart by their `campaign` column.
enum Scope<'a> {
    /// Whole tables are read, other campaigns' rows dropped.
    Every(HashSet<&'a str>),
    /// Read by name, `chunk` names a query; each name once (one chunk per campaign).
    Named(Vec<&'a str>, usize),
}

impl Scope<'_> {
    fn wants(&self, campaign: &str) -> bool {
        match self {
            Scope::Every(names) => names.contains(campaign),
            Scope::Named(..) => true,
        }
    }
}

/// The intents a plan reads (see [`CampaignJournal::intents`]); the same predicates as
/// `Recorded::load`'s `intents` filters and `blocked_purchases`.
const PLAN_INTENTS: &str = "(state IN ('in_flight', 'succeeded', 'uncertain') \
     OR kind IN ('start_autobuyer', 'stop_autobuyer') \
     OR (kind = 'purchase' AND state = 'failed' AND rebuy_blocked = 1))";

impl Reports<'_> {
    /// [`Reports::journal_read`], its rows found `how`.
    pub(crate) async fn journal_read(
        self,
        names: &[String],
        day: NaiveDate,
        how: BatchRead,
    ) -> Result<BTreeMap<String, CampaignJournal>, StoreError> {
        let result = async {
            let scope = match how {
                BatchRead::Auto => self.scope(names).await?,
                BatchRead::WholeTables => Scope::Every(names.iter().map(String::as_str).collect()),
                BatchRead::ByName { chunk } => Scope::Named(distinct(names), chunk.max(1)),
            };
            let mut out = self.budgets_of(&scope, day).await?;
            if out.is_empty() {
                return Ok(out);
            }
            self.remote_ids_of(&scope, &mut out).await?;
            self.intents_of(&scope, &mut out).await?;
            self.links_of(&scope, &mut out).await?;
            self.rounds_of(&scope, &mut out).await?;
            Ok(out)
        }
        .await;
        self.done(result)
    }

    /// What the gauges of each of `names` the journal knows show: the budget, counts of
    /// intents by one aggregate query (no intent decoded), the last succeeded round, the
    /// stall. A few queries for all of them, however long their history.
    pub(crate) async fn gauges_of(
        self,
        names: &[String],
        day: NaiveDate,
    ) -> Result<BTreeMap<String, CampaignGauges>, StoreError> {
        let result = async {
            let scope = self.scope(names).await?;
            let journals = self.budgets_of(&scope, day).await?;
            let mut out: BTreeMap<String, CampaignGauges> = journals
                .into_iter()
                .map(|(name, j)| (name, new_gauges(j.budget)))
                .collect();
            let counts = |w: &str| {
                format!(
                    "SELECT campaign, \
                     CAST(SUM(CASE WHEN state = 'uncertain' THEN 1 ELSE 0 END) AS BIGINT) AS uncertain, \
                     CAST(SUM(CASE WHEN state = 'uncertain' AND kind = 'create_autobuyer' THEN 1 ELSE 0 END) AS BIGINT) AS creations, \
                     CAST(SUM(CASE WHEN state = 'succeeded' AND kind = 'purchase' THEN 1 ELSE 0 END) AS BIGINT) AS bought \
                     FROM intents WHERE state IN ('succeeded', 'uncertain') AND {w} GROUP BY campaign"
                )
            };
            self.into_entries(&scope, &mut out, counts, |g, r| {
                g.uncertain = count(r, "uncertain")?;
                g.uncertain_creations = count(r, "creations")?;
                g.bought = count(r, "bought")?;
                Ok(())
            })
            .await?;
            self.fill(&scope, &mut out, latest_round(SUCCEEDED), round_from_row, |g, x| {
                g.last_success = Some(x)
            })
            .await?;
            self.fill(&scope, &mut out, stalls, stall_from_row, |g, x| g.stall = Some(x))
                .await?;
            Ok(out)
        }
        .await;
        self.done(result)
    }

    /// What the list shows of each of `names` the journal knows: the budget, counts by
    /// aggregate queries (no intent or link decoded), the latest round, the stall. Eight
    /// queries for all of them (whole tables when they are most of the journal's campaigns),
    /// each row decoded into its campaign's entry as it is read ([`Reports::each_row_of`]):
    /// at 10,000 campaigns the rows of one query held at once were tens of MiB.
    ///
    /// The budgets, and the counts then the latest rounds, are two reads run at once, each
    /// into maps of their own, joined at the end: on SQLite each reader is a connection (and a thread)
    /// of its own, so the status page's first screen and `/api/v1/summary` wait for the
    /// slowest of them, not for their sum (at 10,000 campaigns, 563 ms one after another on
    /// SQLite, against the 300 ms of issue 34, item 5).
    pub(crate) async fn list_of(
        self,
        names: &[String],
        day: NaiveDate,
    ) -> Result<BTreeMap<String, CampaignListFacts>, StoreError> {
        let result = async {
            let scope = self.scope(names).await?;
            // Two at once, not three: on two cores three reads at once mostly contended for
            // the CPU (the status page's first screen at 10,000 campaigns on SQLite: 289 ms
            // with three, 218 ms with two, 233 ms one after another).
            let rest = async {
                let counts = self.list_counts(&scope).await?;
                Ok((counts, self.list_latest(&scope).await?))
            };
            let (budgets, (mut counts, mut latest)) =
                futures_util::try_join!(self.list_budgets(&scope, day), rest)?;
            Ok(budgets
                .into_iter()
                .map(|(name, budget)| {
                    let c = counts.remove(&name).unwrap_or_default();
                    let (last_round, stall) = latest.remove(&name).unwrap_or_default();
                    let facts = list_facts(budget, c, last_round, stall);
                    (name, facts)
                })
                .collect())
        }
        .await;
        self.done(result)
    }

    /// The budget of each campaign of the scope that has one: the list's campaigns.
    async fn list_budgets(
        self,
        scope: &Scope<'_>,
        day: NaiveDate,
    ) -> Result<BTreeMap<String, BudgetSnapshot>, StoreError> {
        let mut out = BTreeMap::new();
        let day_param = day_text(day);
        // Whole tables: one grouped pass of each (the subqueries per campaign cost a
        // second at 10,000 campaigns on PostgreSQL); by name: the per-campaign select.
        let budgets = |w: &str| match scope {
            Scope::Every(_) => format!("{BUDGET_SELECT_ALL} WHERE {w}"),
            Scope::Named(..) => format!("{BUDGET_SELECT} WHERE {w}"),
        };
        self.each_row_of(scope, Some(&day_param), budgets, |r| {
            let name: String = col(r, "campaign")?;
            if scope.wants(&name) {
                out.insert(name, snapshot_from_row(r, day)?);
            }
            Ok(())
        })
        .await?;
        Ok(out)
    }

    /// Each campaign's latest round and its stall, where it has them.
    async fn list_latest(self, scope: &Scope<'_>) -> Result<BTreeMap<String, Latest>, StoreError> {
        let mut out: BTreeMap<String, Latest> = BTreeMap::new();
        self.entries_of(
            scope,
            &mut out,
            latest_round(""),
            Some(Latest::default),
            |l, r| {
                l.0 = Some(round_from_row(r)?);
                Ok(())
            },
        )
        .await?;
        self.entries_of(scope, &mut out, stalls, Some(Latest::default), |l, r| {
            l.1 = Some(stall_from_row(r)?);
            Ok(())
        })
        .await?;
        Ok(out)
    }

    /// The counts of [`CampaignListFacts`], one aggregate query a table.
    async fn list_counts(
        self,
        scope: &Scope<'_>,
    ) -> Result<BTreeMap<String, ListCounts>, StoreError> {
        let mut out: BTreeMap<String, ListCounts> = BTreeMap::new();
        let intents = |w: &str| {
            format!(
                "SELECT campaign, CAST(COUNT(*) AS BIGINT) AS a, \
                 CAST(SUM(CASE WHEN kind = 'create_autobuyer' THEN 1 ELSE 0 END) AS BIGINT) AS b \
                 FROM intents WHERE state = 'uncertain' AND {w} GROUP BY campaign"
            )
        };
        let live = |table: &'static str| {
            move |w: &str| {
                format!(
                    "SELECT campaign, CAST(COUNT(*) AS BIGINT) AS a, CAST(0 AS BIGINT) AS b \
                     FROM {table} WHERE released_at IS NULL AND {w} GROUP BY campaign"
                )
            }
        };
        let autobuyers = |w: &str| {
            format!(
                "SELECT campaign, CAST(COUNT(*) AS BIGINT) AS a, \
                 CAST(SUM(CASE WHEN running <> 0 THEN 1 ELSE 0 END) AS BIGINT) AS b \
                 FROM autobuyers WHERE {w} GROUP BY campaign"
            )
        };
        type Sql = Box<dyn Fn(&str) -> String + Send + Sync>;
        type Set = fn(&mut ListCounts, u32, u32);
        let reads: [(Sql, Set); 4] = [
            (Box::new(intents), |f, a, b| {
                (f.uncertain, f.uncertain_creations) = (a, b)
            }),
            (Box::new(live("held_links")), |f, a, _| f.links_held = a),
            (Box::new(live("foreign_links")), |f, a, _| f.other_links = a),
            (Box::new(autobuyers), |f, a, b| {
                (f.autobuyers, f.autobuyers_running) = (a, b)
            }),
        ];
        for (sql, set) in reads {
            self.entries_of(scope, &mut out, sql, Some(ListCounts::default), |f, r| {
                set(f, count(r, "a")?, count(r, "b")?);
                Ok(())
            })
            .await?;
        }
        Ok(out)
    }

    /// Whole tables when `names` are at least half the campaigns the journal knows.
    async fn scope<'a>(self, names: &'a [String]) -> Result<Scope<'a>, StoreError> {
        let row = run!(
            fetch_one,
            &self.pool,
            "journal_of",
            "SELECT CAST(COUNT(*) AS BIGINT) AS n FROM budgets"
        )?;
        let known = usize::try_from(col::<i64>(&row, "n")?).unwrap_or(usize::MAX);
        Ok(if names.len().saturating_mul(2) >= known {
            Scope::Every(names.iter().map(String::as_str).collect())
        } else {
            Scope::Named(distinct(names), CHUNK)
        })
    }

    /// The rows of `sql(clause)`, where `clause` limits `campaign` to the scope (`day`, if
    /// any, bound as `$1` and the names after it), handed to `each` as they are read, never
    /// all held at once: every batch read decodes straight into its entries (a query's rows
    /// of 10,000 campaigns held at once were tens of MiB). Every text is built from this
    /// file's constants and numbered placeholders only (names are bound, never written into
    /// it): safe.
    async fn each_row_of(
        self,
        scope: &Scope<'_>,
        day: Option<&str>,
        sql: impl Fn(&str) -> String,
        mut each: impl FnMut(&AnyRow) -> Result<(), StoreError> + Send,
    ) -> Result<(), StoreError> {
        for q in scoped_queries(scope, day, sql) {
            let mut rows = q.fetch(&self.pool);
            while let Some(r) = rows.try_next().await.map_err(db("journal_of"))? {
                each(&r)?;
            }
        }
        Ok(())
    }

    /// Each row of `sql(clause)` (see [`Reports::each_row_of`]) handed to `put` with the entry
    /// of its campaign in `out` as it is read, if it is one asked for and known; rows of other
    /// campaigns are skipped. Every batch read but the budgets' and the intents' fills its
    /// entries this way; the reads `list_of` runs at once make theirs ([`Reports::entries_of`]).
    async fn into_entries<T: Send>(
        self,
        scope: &Scope<'_>,
        out: &mut BTreeMap<String, T>,
        sql: impl Fn(&str) -> String,
        put: impl FnMut(&mut T, &AnyRow) -> Result<(), StoreError> + Send,
    ) -> Result<(), StoreError> {
        self.entries_of(scope, out, sql, None, put).await
    }

    /// The rows of `sql(clause)` into `out`'s entries: made by `make` where there is none yet
    /// (for the campaigns of the scope only), else only into those that exist.
    async fn entries_of<T: Send>(
        self,
        scope: &Scope<'_>,
        out: &mut BTreeMap<String, T>,
        sql: impl Fn(&str) -> String,
        make: Option<fn() -> T>,
        mut put: impl FnMut(&mut T, &AnyRow) -> Result<(), StoreError> + Send,
    ) -> Result<(), StoreError> {
        self.each_row_of(scope, None, sql, |r| {
            let name: String = col(r, "campaign")?;
            let entry = match make {
                Some(new) if scope.wants(&name) => Some(out.entry(name).or_insert_with(new)),
                Some(_) => None,
                None => out.get_mut(&name),
            };
            if let Some(entry) = entry {
                put(entry, r)?;
            }
            Ok(())
        })
        .await
    }

    /// One entry per campaign of the scope that has a budget row.
    async fn budgets_of(
        self,
        scope: &Scope<'_>,
        day: NaiveDate,
    ) -> Result<BTreeMap<String, CampaignJournal>, StoreError> {
        let day_param = day_text(day);
        let mut out = BTreeMap::new();
        let budgets = |w: &str| format!("{BUDGET_SELECT} WHERE {w}");
        self.each_row_of(scope, Some(&day_param), budgets, |r| {
            let name: String = col(r, "campaign")?;
            if scope.wants(&name) {
                out.insert(name, new_journal(snapshot_from_row(r, day)?));
            }
            Ok(())
        })
        .await?;
        Ok(out)
    }

    async fn remote_ids_of(
        self,
        scope: &Scope<'_>,
        out: &mut BTreeMap<String, CampaignJournal>,
    ) -> Result<(), StoreError> {
        let sql = |cols: &str, table: &str| {
            let (cols, table) = (cols.to_string(), table.to_string());
            move |w: &str| format!("SELECT campaign, {cols} FROM {table} WHERE {w}")
        };
        let projects = sql(
            "project_id, url_id, text_id, list_cut_at, last_read_complete, last_read_links",
            "projects",
        );
        self.into_entries(scope, out, projects, |j, r| {
            (j.ids.project, j.ids.list_cut_at) = project_from_row(r)?;
            super::campaigns::adoption::read_project(&mut j.ids.account, r)?;
            Ok(())
        })
        .await?;
        self.adoptions_of(scope, out).await?;
        self.into_entries(scope, out, sql("url, url_id", "urls"), |j, r| {
            j.ids.urls.insert(col(r, "url")?, col(r, "url_id")?);
            Ok(())
        })
        .await?;
        self.into_entries(scope, out, sql("url, text, text_id", "texts"), |j, r| {
            let key = (col(r, "url")?, col(r, "text")?);
            j.ids.texts.insert(key, col(r, "text_id")?);
            Ok(())
        })
        .await?;
        self.into_entries(scope, out, sql("name, filter_id", "filters"), |j, r| {
            j.ids.filters.insert(col(r, "name")?, col(r, "filter_id")?);
            Ok(())
        })
        .await?;
        let autobuyers = sql(
            "name, autobuyer_id, running, spec_fingerprint, monthly_budget, reserved, \
             switch_state, stopped_at, adopted_at, covers, adopted_id",
            "autobuyers",
        );
        self.into_entries(scope, out, autobuyers, |j, r| {
            j.ids
                .autobuyers
                .insert(col(r, "name")?, autobuyer_from_row(r)?);
            Ok(())
        })
        .await?;
        Ok(())
    }

    /// Adoptions and the operators' words on link lists (issue 24).
    async fn adoptions_of(
        self,
        scope: &Scope<'_>,
        out: &mut BTreeMap<String, CampaignJournal>,
    ) -> Result<(), StoreError> {
        let adoptions = |w: &str| {
            format!(
                "SELECT campaign, project_id, recorded_at, first_read_at, confirmed_by, confirmed_at, \
                 confirmed_reason FROM adoptions WHERE {w}"
            )
        };
        self.fill(scope, out, adoptions, adoption_from_row, |j, a| {
            j.ids.account.adoption = Some(a)
        })
        .await?;
        let vouches = |w: &str| {
            format!(
                "SELECT campaign, links, by_whom, reason, at FROM list_vouches \
                 WHERE lapsed_at IS NULL AND {w}"
            )
        };
        self.fill(scope, out, vouches, vouch_from_row, |j, v| {
            j.ids.account.vouch = Some(v)
        })
        .await
    }

    async fn intents_of(
        self,
        scope: &Scope<'_>,
        out: &mut BTreeMap<String, CampaignJournal>,
    ) -> Result<(), StoreError> {
        let sql = |w: &str| {
            format!(
                "SELECT {} FROM intents WHERE {PLAN_INTENTS} AND {w} ORDER BY id",
                intent_columns!()
            )
        };
        self.each_row_of(scope, None, sql, |r| {
            let i = intent_from_row(r)?;
            if let Some(j) = out.get_mut(&i.campaign) {
                j.intents.push(i);
            }
            Ok(())
        })
        .await
    }

    async fn links_of(
        self,
        scope: &Scope<'_>,
        out: &mut BTreeMap<String, CampaignJournal>,
    ) -> Result<(), StoreError> {
        let held = |w: &str| {
            format!("SELECT campaign, {HELD_COLUMNS} FROM held_links WHERE {w} ORDER BY id")
        };
        self.fill(scope, out, held, held_from_row, |j, l| j.held.push(l))
            .await?;
        let foreign = |w: &str| {
            format!(
                "SELECT campaign, {} FROM foreign_links WHERE {w} \
                 ORDER BY first_seen_at, link_key",
                foreign_columns!()
            )
        };
        self.fill(scope, out, foreign, foreign_from_row, |j, l| {
            j.foreign.push(l)
        })
        .await
    }

    /// Each campaign's latest round, its latest succeeded round and its stall judgment.
    async fn rounds_of(
        self,
        scope: &Scope<'_>,
        out: &mut BTreeMap<String, CampaignJournal>,
    ) -> Result<(), StoreError> {
        self.fill(scope, out, latest_round(""), round_from_row, |j, x| {
            j.last_round = Some(x)
        })
        .await?;
        self.fill(
            scope,
            out,
            latest_round(SUCCEEDED),
            round_from_row,
            |j, x| j.last_success = Some(x),
        )
        .await?;
        self.fill(scope, out, stalls, stall_from_row, |j, x| j.stall = Some(x))
            .await
    }

    /// [`Reports::into_entries`] of rows that each decode (`read`) into one value `put` keeps
    /// in its campaign's entry: most batch reads are one row, one value.
    async fn fill<T: Send, V>(
        self,
        scope: &Scope<'_>,
        out: &mut BTreeMap<String, T>,
        sql: impl Fn(&str) -> String,
        read: fn(&AnyRow) -> Result<V, StoreError>,
        put: fn(&mut T, V),
    ) -> Result<(), StoreError> {
        self.into_entries(scope, out, sql, |e, r| {
            put(e, read(r)?);
            Ok(())
        })
        .await
    }
}

/// The rounds [`latest_round`] admits for the latest succeeded one.
const SUCCEEDED: &str = "state = 'succeeded' AND";

/// Each campaign's stall judgment.
fn stalls(w: &str) -> String {
    format!("SELECT campaign, {STALL_COLUMNS} FROM campaign_stalls WHERE {w}")
}

/// Each campaign's round at its latest slot among those `only` admits. (campaign, slot) is
/// the key of `rounds`: the row at the latest slot is the one `ORDER BY slot DESC LIMIT 1` reads.
fn latest_round(only: &'static str) -> impl Fn(&str) -> String {
    move |w: &str| {
        format!(
            "SELECT {ROUND_COLUMNS} FROM rounds r JOIN (SELECT campaign AS c, \
             MAX(slot) AS s FROM rounds WHERE {only} {w} GROUP BY campaign) m \
             ON r.campaign = m.c AND r.slot = m.s"
        )
    }
}

/// The list's counts of one campaign ([`Reports::list_counts`]).
#[derive(Debug, Default)]
struct ListCounts {
    uncertain: u32,
    uncertain_creations: u32,
    links_held: u32,
    other_links: u32,
    autobuyers: u32,
    autobuyers_running: u32,
}

/// A campaign's latest round and its stall ([`Reports::list_latest`]).
type Latest = (Option<RoundRow>, Option<StallRow>);

fn list_facts(
    budget: BudgetSnapshot,
    c: ListCounts,
    last_round: Option<RoundRow>,
    stall: Option<StallRow>,
) -> CampaignListFacts {
    CampaignListFacts {
        budget,
        uncertain: c.uncertain,
        uncertain_creations: c.uncertain_creations,
        links_held: c.links_held,
        other_links: c.other_links,
        autobuyers: c.autobuyers,
        autobuyers_running: c.autobuyers_running,
        last_round,
        stall,
    }
}

fn new_gauges(budget: BudgetSnapshot) -> CampaignGauges {
    CampaignGauges {
        budget,
        uncertain: 0,
        uncertain_creations: 0,
        bought: 0,
        last_success: None,
        stall: None,
    }
}

/// `names` without repeats, in their order.
fn distinct(names: &[String]) -> Vec<&str> {
    let mut seen = HashSet::new();
    names
        .iter()
        .map(String::as_str)
        .filter(|n| seen.insert(*n))
        .collect()
}

fn new_journal(budget: BudgetSnapshot) -> CampaignJournal {
    CampaignJournal {
        budget,
        ids: RemoteIds::default(),
        intents: Vec::new(),
        held: Vec::new(),
        foreign: Vec::new(),
        last_round: None,
        last_success: None,
        stall: None,
    }
}

/// The queries of `sql(clause)` over `scope` (see [`Reports::each_row_of`]): one for whole
/// tables, else one a chunk of names; each with `day`, if any, bound as `$1` and its names
/// after it.
fn scoped_queries<'q>(
    scope: &'q Scope<'_>,
    day: Option<&'q str>,
    sql: impl Fn(&str) -> String,
) -> Vec<AnyQuery<'q>> {
    let texts: Vec<(String, &[&str])> = match scope {
        Scope::Every(_) => vec![(sql("1 = 1"), &[])],
        Scope::Named(names, chunk) => {
            let first = if day.is_some() { 2 } else { 1 };
            names
                .chunks(*chunk)
                .map(|c| (sql(&in_clause(first, c.len())), c))
                .collect()
        }
    };
    texts
        .into_iter()
        .map(|(text, names)| {
            let mut q = sqlx::query(AssertSqlSafe(text));
            if let Some(d) = day {
                q = q.bind(d);
            }
            for name in names {
                q = q.bind(*name);
            }
            q
        })
        .collect()
}

/// `campaign IN ($first, ..., $(first + n - 1))`.
fn in_clause(first: usize, n: usize) -> String {
    let params: Vec<String> = (first..first + n).map(|i| format!("${i}")).collect();
    format!("campaign IN ({})", params.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_clause_numbers_its_parameters_after_the_ones_before_it() {
        assert_eq!(in_clause(2, 3), "campaign IN ($2, $3, $4)");
    }
}

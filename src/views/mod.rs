//! `views/`: the read models. What `status`, `plan`, `history`, `explain`, `report`, the HTTP
//! API and the status page show, read from the journal and decided by `crate::decide`; they
//! change nothing.
//!
//! It reads the journal (`crate::store`), never `crate::effects` or the marketplace client
//! (docs/architecture.md; `scripts/check-architecture` holds the line below).
//!
//! May import: crate::campaign, crate::decide, crate::metrics, crate::store.
//!
//! | module | shows |
//! |---|---|
//! | [`recorded`], [`recorded_many`] | the journal read into the decisions' input, for one campaign or many |
//! | [`accounts`] | campaigns by the marketplace account they spend in: `status`, `plan`, the page and the summary group by it |
//! | [`overview`] | the campaign states and the summary every surface shows (one truth) |
//! | [`report`] | `status` and `plan` output |
//! | [`list`] | the campaign list's rows: the page's table, what the summary adds up |
//! | [`summary`] | the summary over every campaign (the page's top, `/api/v1/summary`) |
//! | [`review`] | `plan --format markdown`: the plan as a pull-request comment |
//! | [`story`] | `history` and `explain`: what moved money, why, one link's story |
//! | [`month`] | `report --month`: the month's money for finance |
//! | [`days`] | the month's commitment per UTC day against the cap: the status page's picture |
//! | [`import`] | `import`: the campaign file that adopts a project, from its link list |
//! | [`state`] | the recorded state `plan --state-from` reads from a daemon |

pub(crate) mod accounts;
pub(crate) mod days;
pub(crate) mod import;
pub mod list;
pub mod month;
pub mod overview;
pub(crate) mod recorded;
pub(crate) mod recorded_many;
pub mod report;
pub mod review;
pub mod state;
pub mod story;
pub(crate) mod summary;

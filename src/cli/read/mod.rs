//! `cli/read/`: the commands that only read. They open the journal to read (never migrating
//! it), load the campaign files and print; none of them may reach the engine, so this room's
//! import line leaves out `crate::effects` and `scripts/check-architecture` holds it.
//!
//! - [`validate`]: `validate`, `schema`;
//! - [`plan`]: `plan`, its pull-request review and `--base`;
//! - [`state_from`]: `plan --state-from`: the recorded state a daemon serves;
//! - [`status`]: `status`, each campaign as the journal has it;
//! - [`history`]: `history` and `explain`: what moved money and why;
//! - [`report`]: `report --month`: the month's money for finance.
//!
//! May import: crate::campaign, crate::decide, crate::http, crate::metrics, crate::store, crate::telemetry, crate::views.

pub(crate) mod history;
pub(crate) mod plan;
pub(crate) mod report;
pub(crate) mod state_from;
pub(crate) mod status;
pub(crate) mod validate;

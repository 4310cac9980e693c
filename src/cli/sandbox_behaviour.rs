//! `linkrunner sandbox` flags for the run-time behaviours and the executed-error fault
//! (kept apart from `sandbox.rs` so that file stays small; both can be changed later through
//! `POST {prefix}/__sandbox/behaviour` and `POST {prefix}/__sandbox/faults`).

use clap::Args;

use linkrunner_sandbox::SandboxConfig;
use linkrunner_sandbox::behaviour::{Behaviour, ListPaging};

#[derive(Debug, Clone, Args)]
pub(crate) struct BehaviourArgs {
    /// Operation 6 answers at most this many links per request.
    #[arg(long, value_parser = super::ranges::usize_in(1..=100_000))]
    list_page_size: Option<usize>,
    /// How a paged link list says so: none (no sign of more), page_total, offset_has_more.
    #[arg(long, default_value = "none")]
    list_paging: ListPaging,
    /// A bought link appears in operation 6 only this many milliseconds after its purchase.
    #[arg(long, default_value_t = 0, value_parser = super::ranges::u64_in(0..=super::ranges::HOUR_MS))]
    list_lag_ms: u64,
    /// Every this many milliseconds each running autobuyer buys up to one link by itself.
    #[arg(long, value_parser = super::ranges::u64_in(1..=super::ranges::HOUR_MS))]
    autobuy_every_ms: Option<u64>,
    /// Autobuyers also buy pages the project already holds for the same URL.
    #[arg(long)]
    autobuy_buys_held: bool,
    /// Autobuyers buy past their budgets and links limits (a faulty marketplace).
    #[arg(long)]
    autobuy_ignores_limits: bool,
    /// A project of another account: every path naming it answers 403 (repeatable).
    #[arg(long = "foreign-project", value_name = "PROJECT_ID", value_parser = super::ranges::id())]
    foreign_projects: Vec<i64>,
    /// Chance (0..1) that an executed change is answered as an error that carries its ids.
    #[arg(long, default_value_t = 0.0, value_parser = super::ranges::probability)]
    executed_error_rate: f64,
}

impl BehaviourArgs {
    pub(crate) fn apply(&self, cfg: &mut SandboxConfig) {
        cfg.behaviour = Behaviour {
            list_page_size: self.list_page_size,
            list_paging: self.list_paging,
            list_lag_ms: self.list_lag_ms,
            autobuy_every_ms: self.autobuy_every_ms,
            autobuy_buys_held: self.autobuy_buys_held,
            autobuy_ignores_limits: self.autobuy_ignores_limits,
            foreign_projects: self.foreign_projects.iter().copied().collect(),
            // A test's scenario, switched on through `POST __sandbox/behaviour` only.
            team_buys_during_search: None,
        };
        cfg.faults.executed_error_rate = self.executed_error_rate;
    }
}

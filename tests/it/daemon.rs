//! The daemon (`linkrunner run`) against the sandbox marketplace: schedules across restarts
//! and downtime, reloads, the HTTP endpoint, readiness while PostgreSQL stops and returns,
//! SIGTERM mid-round and two replicas on one PostgreSQL. In-process where a manual clock
//! helps; the real binary where signals or separate processes are the point.
//! Logs only with `TEST_LOG=1`.

#[path = "daemon/account_approval.rs"]
mod account_approval;
#[path = "daemon/accounts.rs"]
mod accounts;
#[path = "daemon/api_paging.rs"]
mod api_paging;
#[path = "daemon/brake.rs"]
mod brake;
#[path = "daemon/capacity.rs"]
mod capacity;
#[path = "daemon/credentials.rs"]
mod credentials;
#[path = "daemon/halt.rs"]
mod halt;
#[path = "daemon/http.rs"]
mod http;
#[path = "daemon/notify.rs"]
mod notify;
#[path = "daemon/operator.rs"]
mod operator;
#[path = "daemon/readiness.rs"]
mod readiness;
#[path = "daemon/reload.rs"]
mod reload;
#[path = "daemon/removals.rs"]
mod removals;
#[path = "daemon/replicas.rs"]
mod replicas;
#[path = "daemon/schedule.rs"]
mod schedule;
#[path = "daemon/signals.rs"]
mod signals;
#[path = "daemon/state.rs"]
mod state;
#[path = "daemon/status_page.rs"]
mod status_page;
#[path = "daemon/support.rs"]
mod support;

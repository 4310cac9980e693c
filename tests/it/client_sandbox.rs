//! The marketplace client (`MarketClient`) against the in-process sandbox over real HTTP on
//! port 0: the ten operations through the whole flow, every outcome class, every injected
//! fault and every answer shape, each checked against the sandbox's ledger.

#[path = "client_sandbox/support.rs"]
mod support;

#[path = "client_sandbox/auth.rs"]
mod auth;
#[path = "client_sandbox/combinations.rs"]
mod combinations;
#[path = "client_sandbox/executed_errors.rs"]
mod executed_errors;
#[path = "client_sandbox/expiry.rs"]
mod expiry;
#[path = "client_sandbox/faults.rs"]
mod faults;
#[path = "client_sandbox/flow.rs"]
mod flow;
#[path = "client_sandbox/forms.rs"]
mod forms;
#[path = "client_sandbox/meta_data.rs"]
mod meta_data;
#[path = "client_sandbox/outcomes.rs"]
mod outcomes;
#[path = "client_sandbox/paging.rs"]
mod paging;
#[path = "client_sandbox/shapes.rs"]
mod shapes;
#[path = "client_sandbox/tech_values.rs"]
mod tech_values;

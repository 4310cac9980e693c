//! The sandbox marketplace over real HTTP on port 0, driven with plain `reqwest`:
//! auth, the whole flow, validation, searches, faults and answer shapes.

#[path = "sandbox/accounts.rs"]
mod accounts;
#[path = "sandbox/auth.rs"]
mod auth;
#[path = "sandbox/autobuyers.rs"]
mod autobuyers;
#[path = "sandbox/cli.rs"]
mod cli;
#[path = "sandbox/cli_behaviour.rs"]
mod cli_behaviour;
#[path = "sandbox/executed_errors.rs"]
mod executed_errors;
#[path = "sandbox/faults.rs"]
mod faults;
#[path = "sandbox/flow.rs"]
mod flow;
#[path = "sandbox/forms.rs"]
mod forms;
#[path = "sandbox/listing.rs"]
mod listing;
#[path = "sandbox/search.rs"]
mod search;
#[path = "sandbox/shapes.rs"]
mod shapes;
#[path = "sandbox/support.rs"]
mod support;
#[path = "sandbox/validation.rs"]
mod validation;

//! `endpoints/`: the sandbox's HTTP side. Requests come in through the pipeline
//! (`crate::server`); these say which path is which operation, read the bodies the spec names and
//! answer in the configured shape. The marketplace's rules stay in the crate's other files.
//!
//! - `routes`: the ten operations at the spec's paths under the prefix;
//! - `control`: the test-only `__sandbox/` control endpoints;
//! - `auth_routes`: the login (`POST /login`, `GET /auth`) and the token control endpoints;
//! - `wire`: request bodies as the spec names them;
//! - `render`: answers as JSON in the configured shape, the only place that knows response field names;
//! - `cut`: an answer cut short after its headers.
//!
//! May import: nothing.

pub(crate) mod auth_routes;
pub(crate) mod control;
pub(crate) mod cut;
pub(crate) mod render;
pub(crate) mod routes;
pub(crate) mod wire;

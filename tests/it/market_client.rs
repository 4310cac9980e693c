//! The marketplace client against wiremock (and a raw TCP server where wiremock cannot
//! misbehave enough): headers, paths, outcome classification, retries of reads only,
//! limits, and that no secret ever leaks.

#[path = "market_client/support.rs"]
mod support;

#[path = "market_client/auth.rs"]
mod auth;
#[path = "market_client/canary.rs"]
mod canary;
#[path = "market_client/classification.rs"]
mod classification;
#[path = "market_client/forms.rs"]
mod forms;
#[path = "market_client/limits.rs"]
mod limits;
#[path = "market_client/operations.rs"]
mod operations;
#[path = "market_client/paging.rs"]
mod paging;
#[path = "market_client/paths.rs"]
mod paths;
#[path = "market_client/retries.rs"]
mod retries;

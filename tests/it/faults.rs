//! The fault and security suite: PostgreSQL outages, split brain, secret canaries, hostile
//! marketplace answers and hostile HTTP clients. Each scenario ends by checking the sandbox's
//! ledger against the journal. Run with `cargo test --test it faults:: -- --skip sandbox`;
//! `scripts/soak` repeats it.

#[path = "faults/support.rs"]
mod support;

#[path = "faults/pg_outage.rs"]
mod pg_outage;

#[path = "faults/disk_full.rs"]
mod disk_full;

#[path = "faults/sqlite_journal.rs"]
mod sqlite_journal;

#[path = "faults/canary.rs"]
mod canary;

#[path = "faults/split_brain.rs"]
mod split_brain;

#[path = "faults/hostile_clients.rs"]
mod hostile_clients;

#[path = "faults/hostile_market.rs"]
mod hostile_market;

#[path = "faults/hostile_network.rs"]
mod hostile_network;

#[path = "faults/hostile_strings.rs"]
mod hostile_strings;

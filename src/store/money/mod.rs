//! `store/money/`: the journal's money. Caps and the append-only ledger, the reservations a
//! batch of intents takes in its own transaction, the account-wide cap, the approved
//! commitment above a threshold, and the ledger summed over a month. Every change of
//! `budgets.committed` is made here, with its `ledger` row.
//!
//! - `budget`: caps, the ledger and its movements ([`budget::Movement`]), the budget read;
//! - `reserve`: reservations against every cap, one conditional `UPDATE` each;
//! - `account`: the account-wide cap over every campaign's commitment;
//! - `approvals`: approval above a threshold (`resolve approve`);
//! - `month`: the ledger summed per campaign and kind, and per day (`report --month`, the page).
//!
//! May import: nothing.

pub(super) mod account;
pub(super) mod approvals;
pub(super) mod budget;
pub(super) mod month;
pub(super) mod reserve;

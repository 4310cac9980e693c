//! `store/intents/`: the money protocol's record. An intent is begun with its reservation in
//! one transaction and settled with everything its outcome implies in another; why each
//! attempt was made is recorded beside it.
//!
//! - `begin`: the fence check, the unique natural key and the reservation; listing; takeover;
//! - `settle`: complete and resolve, applying an outcome's effects;
//! - `evidence`: the effect an operator's resolution implies;
//! - `purchases`: purchases the link list settles after the fact;
//! - `causes`: why each attempt was made, and the history of the ledger with its causes;
//! - `rows`: the columns every intent query selects and their decoding.
//!
//! May import: nothing.

pub(super) mod begin;
pub(super) mod causes;
pub(super) mod evidence;
pub(super) mod purchases;
pub(super) mod rows;
pub(super) mod settle;

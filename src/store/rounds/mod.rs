//! `store/rounds/`: buying in progress, so restarts and replicas neither skip nor repeat it.
//!
//! - `slots`: buy rounds, one per campaign and schedule slot;
//! - `searches`: donor searches in progress, polled again after a restart.
//!
//! May import: nothing.

pub(super) mod searches;
pub(super) mod slots;

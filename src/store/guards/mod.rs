//! `store/guards/`: what stops or holds spending, and who runs a campaign: shared by every
//! replica through the journal, so a restart forgets none of it.
//!
//! - `halts`: spending halts, automatic and an operator's;
//! - `leases`: campaign leases with fencing; `account_leases`: which daemon works an account, and the daemons' heartbeats;
//! - `removals`: campaigns whose file was seen gone, held or let go;
//! - `anomaly`: what was committed and appeared since a moment, for the anomaly brake;
//! - `notices`: notifications claimed once across replicas.
//!
//! May import: nothing.

pub(super) mod account_leases;
pub(super) mod anomaly;
pub(super) mod halts;
pub(super) mod leases;
pub(super) mod notices;
pub(super) mod removals;

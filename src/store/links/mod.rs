//! `store/links/`: the links a project holds, as its link list shows them, each counted
//! against the cap exactly once whoever bought it.
//!
//! - `held`: links our purchases bought, and syncing them with the list;
//! - `foreign`: links no purchase of ours bought (an autobuyer's, one bought by hand);
//! - `twice`: pages the list showed held twice for one URL, each finding recorded once.
//!
//! May import: nothing.

pub(super) mod foreign;
pub(super) mod held;
pub(super) mod twice;

//! `store/links/`: the links a project holds, as its link list shows them, each counted
//! against the cap exactly once whoever bought it.
//!
//! - `held`: links our purchases bought, and syncing them with the list;
//! - `foreign`: links no purchase of ours bought (an autobuyer's, one bought by hand).
//!
//! May import: nothing.

pub(super) mod foreign;
pub(super) mod held;

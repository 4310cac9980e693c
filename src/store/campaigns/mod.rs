//! `store/campaigns/`: what the journal knows of each campaign besides its money: the ids the
//! marketplace gave it, the account it adopted, its file, and its last pass's judgment.
//!
//! - `remote`: the project, URLs, texts, filters and autobuyers by the campaign's names;
//! - `adoption`: an existing project and autobuyers adopted, the operator's words about them;
//! - `files`: each campaign's file as the last pass found it;
//! - `stalls`: converged, or stalled with a reason;
//! - `rename`: a file's `renamed_from`, everything the old name owns handed to the new one in one
//!   transaction; the domains the journal holds;
//! - `respell`: a URL respelt with its recorded `url_id`, its row, texts and purchase keys
//!   re-spelt in one transaction.
//!
//! May import: nothing.

pub(super) mod adoption;
pub(super) mod files;
pub(super) mod remote;
pub(super) mod rename;
pub(super) mod respell;
pub(super) mod stalls;

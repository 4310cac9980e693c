//! `decide/identity/`: what keeps a campaign's identity through edits of its file (issue 32),
//! pure like the rest of `decide/`. `decide/mod.rs` re-exports them, so their paths stay
//! `decide::rename`, `decide::moves` and `decide::respell`.
//!
//! | file | what |
//! |---|---|
//! | `rename` | `renamed_from`: whether a rename is handed over, waits or is ignored; a new name on a held site is blocked naming its owner |
//! | `moves` | `moved_from`: an autobuyer carried by a rename, or refused naming both campaigns |
//! | `respell` | `url_id` on a known URL: a new spelling keeps the URL's row, texts, keys and autobuyer spec |
//! | `spelling` | a respelt URL is named to the marketplace by the spelling it knows, shown by the file's |
//!
//! May import: crate::campaign.

pub mod moves;
pub mod rename;
pub mod respell;
pub mod spelling;

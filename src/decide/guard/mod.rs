//! `decide/guard/`: the guards beside the caps, pure like the rest of `decide/`. Each answers
//! whether spending may go on, or must wait for a person, given what the files, the journal and
//! the marketplace said. `decide/mod.rs` re-exports them, so their paths stay `decide::approval`,
//! `decide::refused` and `decide::removal`.
//!
//! | file | what |
//! |---|---|
//! | `approval` | approval above a threshold: the cap a pass spends under, whether it waits for `resolve approve` |
//! | `refused` | what a 401/403 stops: everything, or (a 403 on one project while another reads) one campaign |
//! | `removal` | whether campaigns whose files are gone are removed or held (many gone at once: a failed checkout) |
//!
//! May import: crate::campaign.

pub(crate) mod approval;
pub(crate) mod refused;
pub(crate) mod removal;

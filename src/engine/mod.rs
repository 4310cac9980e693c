//! `engine/`: see the crate map in lib.rs.

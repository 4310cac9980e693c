//! Rebuilds the crate when a migration changes: `sqlx::migrate!` embeds `migrations/` at
//! compile time, and cargo does not otherwise know it reads them (a changed migration would
//! leave a stale copy in the binary).
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}

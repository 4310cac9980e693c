//! `linkrunner migrate`: create or upgrade the journal's schema, then exit.

use std::process::ExitCode;

use super::global::GlobalArgs;
use super::shared::open_store;

pub(crate) async fn migrate(g: &GlobalArgs) -> anyhow::Result<ExitCode> {
    open_store(g).await?;
    println!("journal database is migrated");
    Ok(ExitCode::SUCCESS)
}

//! `linkrunner validate` and `linkrunner schema`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::cli::GlobalArgs;

#[derive(Debug, Clone, Args)]
pub struct ValidateArgs {
    /// Files or directories to check (default: the campaigns directory).
    pub paths: Vec<PathBuf>,
}

pub fn validate(_g: &GlobalArgs, _a: &ValidateArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("validate: not built yet")
}

pub fn schema() -> anyhow::Result<ExitCode> {
    anyhow::bail!("schema: not built yet")
}

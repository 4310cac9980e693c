//! `linkrunner sandbox`.

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct SandboxArgs {}

pub async fn run(_a: SandboxArgs) -> anyhow::Result<()> {
    anyhow::bail!("sandbox: not built yet")
}

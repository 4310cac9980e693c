//! The `linkrunner` binary: parse the command line, set up logging, run, map to an exit code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = linkrunner::cli::Cli::parse();
    let log = &cli.global.log;
    if let Err(e) = linkrunner::telemetry::init(log.log_format.into(), &log.log_level) {
        eprintln!("error: {e:#}");
        return ExitCode::from(1);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(linkrunner::cli::dispatch(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

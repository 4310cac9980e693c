//! The `linkrunner` binary: parse the command line, set up logging, run, map to an exit code.

use std::process::ExitCode;

use clap::Parser;

/// jemalloc instead of glibc's malloc. With a thread per SQLite connection and tokio's
/// workers, glibc keeps freed memory in per-thread arenas: at 10,000 campaigns the daemon
/// held 132 MiB resident for a 47 MiB live heap. jemalloc returns unused pages (on a 10 s
/// decay) and packs small objects by size: 92 MiB peak on SQLite, 72 MiB on PostgreSQL
/// (`linkrunner-bench --only 3`; docs/contributing.md#benchmark). mimalloc measured 128 and 110 MiB.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

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

//! The `linkrunner-bench` binary. `linkrunner-bench [FLAGS]` runs the benchmark;
//! `linkrunner-bench linkrunner ARGS…` is linkrunner itself (the library's command line and
//! allocator), which the benchmark starts as a process of its own to measure `run` and a
//! restart after SIGKILL: one build (`cargo run --release -p linkrunner-bench`) measures the
//! product's code without a second binary to find.

use std::process::ExitCode;

use clap::Parser;

/// The product's allocator (see the `linkrunner` binary): the memory figures measure it.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Debug, Parser)]
#[command(
    name = "linkrunner-bench",
    version,
    about = "Benchmark linkrunner against its sandbox marketplace: rate limit, calls, memory, start-up, journal; prints figures."
)]
struct BenchCli {
    #[command(flatten)]
    log: linkrunner::cli::LogArgs,
    #[command(flatten)]
    bench: linkrunner_bench::args::BenchArgs,
}

fn main() -> ExitCode {
    let mut args = std::env::args_os();
    let as_linkrunner = std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == "linkrunner");
    if as_linkrunner {
        args.next();
        let cli = linkrunner::cli::Cli::parse_from(args);
        let log = cli.global.log.clone();
        return block_on(&log, linkrunner::cli::dispatch(cli));
    }
    let cli = BenchCli::parse();
    block_on(&cli.log, linkrunner_bench::args::bench(&cli.bench))
}

fn block_on(
    log: &linkrunner::cli::LogArgs,
    work: impl Future<Output = anyhow::Result<ExitCode>>,
) -> ExitCode {
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
    match runtime.block_on(work) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

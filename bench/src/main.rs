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
    log: linkrunner::LogArgs,
    #[command(flatten)]
    bench: linkrunner_bench::args::BenchArgs,
}

fn main() -> ExitCode {
    let as_linkrunner = std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == "linkrunner");
    if as_linkrunner {
        // `linkrunner-bench linkrunner ARGS…`: the program name is the word `linkrunner`.
        return linkrunner::main_with_args(std::env::args_os().skip(1));
    }
    let cli = BenchCli::parse();
    linkrunner::run_logged(&cli.log, linkrunner_bench::args::bench(&cli.bench))
}

//! The `linkrunner` binary: the library's front door with the product's allocator.

use std::process::ExitCode;

/// jemalloc instead of glibc's malloc. With a thread per SQLite connection and tokio's
/// workers, glibc keeps freed memory in per-thread arenas: at 10,000 campaigns the daemon
/// held 132 MiB resident for a 47 MiB live heap. jemalloc returns unused pages (on a 10 s
/// decay) and packs small objects by size: 92 MiB peak on SQLite, 72 MiB on PostgreSQL
/// (`linkrunner-bench --only 3`; docs/contributing.md#benchmark). mimalloc measured 128 and 110 MiB.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    linkrunner::main_with_args(std::env::args_os())
}

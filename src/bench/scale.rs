//! Target 3 (placeholder, filled below).
use super::BenchArgs;
use super::report::Verdict;
pub async fn run(_a: &BenchArgs) -> anyhow::Result<Vec<Verdict>> { Ok(vec![]) }

//! Replays every committed fuzz corpus file through the same entry points the `cargo fuzz`
//! targets call (`fuzz/fuzz_targets/*.rs`), so CI proves "no panic" on them without
//! cargo-fuzz. A crash found by fuzzing is fixed in `src/` and its input added to the corpus.

use std::path::{Path, PathBuf};

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).expect("corpus file readable");
            (p, bytes)
        })
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{} holds too few seeds", dir.display());
    files
}

/// Runs `f` on each input; names every input that panicked.
fn replay(target: &str, f: impl Fn(&[u8]) + std::panic::RefUnwindSafe) {
    let panicked: Vec<_> = corpus(target)
        .into_iter()
        .filter(|(_, bytes)| std::panic::catch_unwind(|| f(bytes)).is_err())
        .map(|(p, _)| p.display().to_string())
        .collect();
    assert!(panicked.is_empty(), "panicked on: {panicked:?}");
}

#[test]
fn campaign_parse_corpus_never_panics() {
    replay("campaign_parse", |b| {
        linkrunner::campaign::fuzz_parse(b);
    });
}

#[test]
fn market_decode_corpus_never_panics() {
    replay("market_decode", |b| {
        if let Some((op, body)) = b.split_first() {
            linkrunner::market::fuzz_decode(*op, body);
        }
    });
}

/// Every seed through every decoder, not only the one its first byte names.
#[test]
fn market_decode_corpus_never_panics_in_any_decoder() {
    replay("market_decode", |b| {
        for op in 0..8 {
            linkrunner::market::fuzz_decode(op, b.get(1..).unwrap_or_default());
        }
    });
}

#[test]
fn the_valid_example_campaigns_parse_without_problems() {
    let ok = corpus("campaign_parse")
        .into_iter()
        .filter(|(p, _)| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            ["acme-shoes.yaml", "bolt-bikes.yaml", "calm-tea.yaml"].contains(&name.as_ref())
        })
        .map(|(p, b)| (p, linkrunner::campaign::fuzz_parse(&b)))
        .collect::<Vec<_>>();
    assert_eq!(ok.len(), 3, "the three example campaigns are seeds");
    assert!(ok.iter().all(|(_, problems)| *problems == 0), "{ok:?}");
}

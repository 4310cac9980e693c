//! Any bytes as a campaign file: parsing and validation report problems, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = linkrunner::campaign::fuzz_parse(data);
});

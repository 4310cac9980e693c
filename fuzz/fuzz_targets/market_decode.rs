//! Any bytes as a marketplace answer: the first byte picks the operation's decoder, the rest
//! is the body. Decoding fails with an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((op, body)) = data.split_first() {
        linkrunner::market::fuzz_decode(*op, body);
    }
});

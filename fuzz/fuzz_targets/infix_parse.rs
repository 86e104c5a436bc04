//! Fuzzes the infix parser: any UTF-8 text either fails to parse with an error, or
//! parses to JSONLogic that prints back as infix and parses again to the same logic.
//! Never a panic. `cargo +nightly fuzz run infix_parse` (see the README).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rulebench_core::infix::fuzz_roundtrip(data);
});

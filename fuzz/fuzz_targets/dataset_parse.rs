//! Fuzzes data files: CSV, JSON and JSON Lines, through both readers (rows as trees and
//! rows as stored texts). Either an error that names where, or rows. Never a panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rulebench_core::dataset::{DataFormat, KeyCase, ParseOptions, parse, parse_compact};

fuzz_target!(|data: &[u8]| {
    let key = ["id".to_owned()];
    for format in [DataFormat::Csv, DataFormat::Json, DataFormat::JsonLines] {
        for skip_bad in [false, true] {
            let opts = ParseOptions {
                key: &key,
                key_case: KeyCase::Sensitive,
                skip_bad,
            };
            let a = parse(data, "fuzz", format, &opts, &mut |_| {});
            let b = parse_compact(data, "fuzz", format, &opts, &mut |_| {});
            // Both readers agree on whether the file is good.
            assert_eq!(a.is_ok(), b.is_ok(), "{format}");
        }
    }
});

//! Fuzzes data files: CSV, TSV, JSON (arrays and objects of rows) and JSON Lines, through
//! both readers (rows as trees and rows as stored texts), as the file says and with a
//! stated type. Either an error that names where, or rows. Never a panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rulebench_core::dataset::{
    ColumnType, DataFormat, KeyCase, ParseOptions, READ_AS_IS, ReadOptions, parse, parse_compact,
};

fuzz_target!(|data: &[u8]| {
    let key = ["id".to_owned()];
    let typed = ReadOptions {
        types: [("n".to_owned(), ColumnType::Json)].into_iter().collect(),
        ..ReadOptions::default()
    };
    for format in [
        DataFormat::Csv,
        DataFormat::Tsv,
        DataFormat::Json,
        DataFormat::JsonLines,
        DataFormat::sniff(data),
    ] {
        if format.is_binary() {
            continue;
        }
        for (skip_bad, read) in [(false, READ_AS_IS), (true, READ_AS_IS), (false, &typed)] {
            let opts = ParseOptions {
                key: &key,
                key_case: KeyCase::Sensitive,
                skip_bad,
                read,
            };
            let a = parse(data, "fuzz", format, &opts, &mut |_| {});
            let b = parse_compact(data, "fuzz", format, &opts, &mut |_| {});
            // Both readers agree on whether the file is good.
            assert_eq!(a.is_ok(), b.is_ok(), "{format}");
        }
    }
});

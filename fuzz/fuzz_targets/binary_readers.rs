//! Fuzzes the binary readers (Parquet, Arrow IPC, Excel) on arbitrary bytes, and on bytes
//! that start with each format's magic: an error that names the file, or rows. Never a
//! panic (a crash would end `dataset import` without its exit 2 and message).

#![no_main]

use libfuzzer_sys::fuzz_target;
use rulebench_app::readers::decode;
use rulebench_app::types::{DataFormat, ReadOptions};

fuzz_target!(|data: &[u8]| {
    let read = ReadOptions::default();
    for (format, magic) in [
        (DataFormat::Parquet, &b"PAR1"[..]),
        (DataFormat::Arrow, &b"ARROW1\0\0"[..]),
        (DataFormat::Excel, &b"PK\x03\x04"[..]),
    ] {
        let _ = decode(data, "fuzz", format, &read);
        let mut with_magic = magic.to_vec();
        with_magic.extend_from_slice(data);
        with_magic.extend_from_slice(magic);
        let _ = decode(&with_magic, "fuzz", format, &read);
    }
});

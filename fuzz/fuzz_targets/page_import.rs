//! Fuzzes reading a page file: any bytes either fail with diagnostics or give a page
//! whose validation runs to the end. Never a panic, never a stack overflow.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = rulebench_app::App::check_text(text);
        let _ = rulebench_app::App::parse_page(text, "fuzz.json");
    }
});

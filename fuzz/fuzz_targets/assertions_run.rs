//! Fuzzes verdict assertions: any JSON list of assertions on the sample page either
//! fails to compile with located diagnostics or runs. Never a panic.

#![no_main]

use libfuzzer_sys::fuzz_target;

const PAGE: &str = include_str!("../../sample-pages/llm-chat-clients.json");

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(list) = rulebench_core::diag::parse_json::<serde_json::Value>(text) else {
        return;
    };
    let mut page: serde_json::Value = serde_json::from_str(PAGE).expect("the sample page");
    page["assertions"] = list;
    let _ = rulebench_app::App::test_text(&page.to_string(), "fuzz.json");
});

//! Fuzzes JSONLogic evaluation: any JSON logic applied to any JSON data either gives a
//! value or an error. Never a panic.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // `logic` and `data` are separated by the first newline.
    let (logic, rest) = text.split_once('\n').unwrap_or((text, "null"));
    let parse = |t: &str| rulebench_core::diag::parse_json::<serde_json::Value>(t).ok();
    if let (Some(logic), Some(data)) = (parse(logic), parse(rest)) {
        let _ = rulebench_core::engine::apply(&logic, &data);
    }
});

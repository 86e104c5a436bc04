//! Hostile strings stored in a page (ids, keys, names) or typed as arguments never reach
//! the terminal raw: escape sequences (ESC, BEL, C1), bidirectional controls and
//! zero-width characters are shown escaped in errors, hints and messages.

mod common;
use common::rb;

use serde_json::json;

/// OSC 52 (set the clipboard), OSC 0 (set the window title), a C1 CSI, a right-to-left
/// override and a zero-width space.
const OSC52: &str = "\u{1b}]52;c;SGVsbG8=\u{7}";
const OSC0: &str = "\u{1b}]0;pwned\u{7}";
const HOSTILE_TAIL: &str = "\u{9b}31m\u{202e}\u{200b}";

fn assert_clean(what: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200b}'..='\u{200f}')
        })
        .collect();
    assert!(bad.is_empty(), "{what} carries raw {bad:?}: {text:?}");
}

#[test]
fn hostile_ids_in_hints_and_arguments_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let page = json!({
        "format": "rulebench.page/v1", "id": "evil", "name": "Evil",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": format!("s{OSC0}{HOSTILE_TAIL}")}]},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": "t", "ok": true}]},
        "rules": [{"id": format!("r{OSC52}"), "name": "Rule", "required": false, "weight": 1,
                   "category": "c", "logic": {"==": [{"var": "target.ok"}, true]}}]
    });
    let file = dir.path().join("evil.json");
    std::fs::write(&file, page.to_string()).unwrap();
    let (code, _, err) = rb(&db, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // The two reproductions: a hint listing rule ids, a hint showing a source key.
    let (code, out, err) = rb(&db, &["rule", "rm", "evil", "nope"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("\\u{1b}]52"),
        "the id is shown, escaped: {err}"
    );
    assert_clean("rule rm stderr", &err);
    assert_clean("rule rm stdout", &out);
    let (code, out, err) = rb(&db, &["evaluate", "evil", "--select", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("\\u{1b}]0;pwned"), "{err}");
    assert_clean("evaluate stderr", &err);
    assert_clean("evaluate stdout", &out);
    // An argument echoed back.
    let (code, _, err) = rb(
        &db,
        &[
            "evaluate",
            &format!("no{OSC0}{HOSTILE_TAIL}"),
            "--select",
            "x",
        ],
    );
    assert_eq!(code, 2);
    assert_clean("an echoed argument", &err);
    // Text output of a stored hostile source.
    let (code, out, err) = rb(&db, &["evaluate", "evil", "--all", "--format", "table"]);
    assert_eq!(code, 0, "{err}");
    assert_clean("a table", &out);
}

/// JSON outputs hold hostile strings as `\\u` escapes: the same JSON, nothing raw.
#[test]
fn json_outputs_escape_terminal_controls_and_keep_the_strings() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let hostile = format!("s{OSC0}{HOSTILE_TAIL}\u{7f}");
    let page = json!({
        "format": "rulebench.page/v1", "id": "evil", "name": format!("Evil{HOSTILE_TAIL}"),
        "source": {"name": "S", "key": ["id"], "rows": [{"id": hostile}]},
        "target": {"name": "T", "key": ["id"], "label": "label",
                   "rows": [{"id": "t", "ok": true, "label": format!("L{HOSTILE_TAIL}")}]},
        "rules": [{"id": "r", "name": "Rule", "required": false, "weight": 1,
                   "category": "c", "logic": {"==": [{"var": "target.ok"}, true]}}]
    });
    let file = dir.path().join("evil.json");
    std::fs::write(&file, page.to_string()).unwrap();
    let (code, _, err) = rb(&db, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = rb(&db, &["export", "evil"]);
    assert_eq!(code, 0);
    assert_clean("export", &out);
    let back: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        back["source"]["rows"][0]["id"],
        json!(hostile),
        "the same strings"
    );
    for format in ["json", "jsonl", "summary"] {
        let (code, out, err) = rb(&db, &["evaluate", "evil", "--all", "--format", format]);
        assert_eq!(code, 0, "{err}");
        assert_clean(format, &out);
    }
}

//! One nesting limit (64 levels) for rules and data, enforced where data comes in: a
//! row nested deeper is refused with its line or pointer, nothing is stored, and no
//! input can overflow the parser's stack.

mod common;
use common::rb;
use std::path::Path;

use serde_json::{Value, json};

fn nested(levels: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..levels {
        v = json!([v]);
    }
    v
}

/// The issue's reproduction: a row nested 130 deep used to import, then make every
/// command fail reading it back. It is refused at the door, naming its line.
#[test]
fn a_row_nested_too_deep_is_refused_and_the_page_stays_usable() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("l.db");
    let file = dir.path().join("rows.jsonl");
    let mut text = String::new();
    for (i, row) in ["gpt-4.1", "deep"].iter().enumerate() {
        let mut r = json!({"id": row, "provider": "openai"});
        if i == 1 {
            r["meta"] = nested(130);
        }
        text.push_str(&r.to_string());
        text.push('\n');
    }
    std::fs::write(&file, text).unwrap();
    let (code, _, err) = rb(
        &db,
        &[
            "dataset",
            "import",
            "llm-chat-clients",
            "target",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(":2:") && err.contains("64 levels"), "{err}");
    for args in [
        &["export", "llm-chat-clients"][..],
        &["evaluate", "llm-chat-clients", "--select", "t3-chat"],
        &["check", "llm-chat-clients"],
        &["test", "llm-chat-clients"],
    ] {
        let (code, _, err) = rb(&db, args);
        assert!(code == 0 || code == 1, "{args:?}: {err}");
    }
}

/// The same row in a page file is refused with its pointer; `test FILE` does not panic.
#[test]
fn a_page_file_with_a_row_too_deep_is_refused_with_its_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let page = json!({
        "format": "rulebench.page/v1", "id": "deep", "name": "Deep",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": "t", "meta": nested(130)}]},
        "rules": [{"id": "r", "name": "R", "required": false, "weight": 1, "category": "c",
                   "logic": {"==": [{"var": "target.id"}, "t"]}}],
        "assertions": [{"id": "a", "select": "*", "path": "$.selectionVerdict",
                        "matcher": "toBeOneOf", "expected": [0, 1, 2]}]
    });
    let file = dir.path().join("deep.json");
    std::fs::write(&file, page.to_string()).unwrap();
    for args in [&["import"][..], &["test"], &["check"]] {
        let mut all = args.to_vec();
        all.push(file.to_str().unwrap());
        let (code, out, err) = rb(&db, &all);
        assert!(
            code == 1 || code == 2,
            "{args:?} exits with a finding, not a panic: {err}"
        );
        assert!(
            (out.clone() + &err).contains("/target/rows/0"),
            "{args:?}: {out} {err}"
        );
    }
}

/// An assertion's `expected` value is held to the same nesting limit as rows: a page
/// file with one nested 100 deep is refused with its pointer by every command that
/// reads it, and nothing is stored.
#[test]
fn an_assertion_expected_too_deep_is_refused_with_its_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let page = json!({
        "format": "rulebench.page/v1", "id": "deep-expected", "name": "Deep expected",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": "t"}]},
        "rules": [{"id": "r", "name": "R", "required": false, "weight": 1, "category": "c",
                   "logic": {"==": [{"var": "target.id"}, "t"]}}],
        "assertions": [{"id": "ok", "select": "*", "path": "$.selectionVerdict",
                        "matcher": "toBeOneOf", "expected": [0, 1, 2]},
                       {"id": "deep", "select": "s", "path": "$.targets",
                        "matcher": "toEqual", "expected": nested(100)}]
    });
    let file = dir.path().join("deep.json");
    std::fs::write(&file, page.to_string()).unwrap();
    for args in [&["import"][..], &["test"], &["check"]] {
        let mut all = args.to_vec();
        all.push(file.to_str().unwrap());
        let (code, out, err) = rb(&db, &all);
        assert!(code == 1 || code == 2, "{args:?}: {code} {out} {err}");
        assert!(
            (out.clone() + &err).contains("/assertions/1/expected"),
            "{args:?}: {out} {err}"
        );
    }
    let (code, out, _) = rb(&db, &["pages"]);
    assert_eq!(code, 0);
    assert!(!out.contains("deep-expected"), "nothing stored: {out}");
}

/// A dataset file nested 100,000 deep used to overflow the stack: now a located error.
#[test]
fn a_file_nested_absurdly_deep_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    for (name, text) in [
        (
            "deep.json",
            format!(
                "[{{\"id\": \"a\", \"x\": {}1{}}}]",
                "[".repeat(100_000),
                "]".repeat(100_000)
            ),
        ),
        (
            "deep.jsonl",
            format!(
                "{{\"id\": \"a\", \"x\": {}1{}}}\n",
                "[".repeat(100_000),
                "]".repeat(100_000)
            ),
        ),
    ] {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let (code, _, err) = rb(
            &db,
            &[
                "dataset",
                "import",
                "llm-chat-clients",
                "target",
                file.to_str().unwrap(),
            ],
        );
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains("levels"), "{name}: {err}");
        assert!(err.contains(":1:"), "{name} names where: {err}");
    }
}

/// Input hygiene: a byte-order mark is skipped, text that is not UTF-8 is refused with
/// where, and an endless input is cut at the limit (`rule add PAGE /dev/zero`).
#[test]
fn inputs_with_a_bom_bad_utf8_or_no_end_get_clear_answers() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("i.db");
    let page = include_str!("../sample-pages/loan-eligibility.json")
        .replace("\"id\": \"loan-eligibility\"", "\"id\": \"loans-bom\"");
    let bom = dir.path().join("bom.json");
    std::fs::write(&bom, format!("\u{feff}{page}")).unwrap();
    let (code, out, err) = rb(&db, &["check", bom.to_str().unwrap()]);
    assert_eq!(code, 0, "a BOM is skipped: {out}{err}");
    let (code, _, err) = rb(&db, &["import", bom.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");

    let bad = dir.path().join("bad.json");
    let mut bytes = b"{\n  \"id\": \"x".to_vec();
    bytes.extend([0xff, 0xfe]);
    bytes.extend(b"\"\n}");
    std::fs::write(&bad, bytes).unwrap();
    let (code, _, err) = rb(&db, &["check", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.json:2:11: not UTF-8"), "{err}");

    if Path::new("/dev/zero").exists() {
        let started = std::time::Instant::now();
        let (code, _, err) = rb(&db, &["rule", "add", "loans-bom", "/dev/zero"]);
        assert_eq!(code, 2);
        assert!(err.contains("larger than the limit"), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
    }
}

/// Numbers and names: weights stay within a bound (two of 1e308 made every score NaN),
/// a rule name holds a letter or digit, and two overrides of one pair are an error
/// naming both (they used to be merged silently).
#[test]
fn weights_names_and_duplicate_overrides_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("n.db");
    let base = json!({
        "format": "rulebench.page/v1", "id": "n", "name": "N",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": "t"}]},
        "rules": [
            {"id": "a", "name": "A", "required": false, "weight": 1e308, "category": "c",
             "logic": {"==": [{"var": "target.id"}, "t"]}},
            {"id": "b", "name": "B", "required": false, "weight": 1e308, "category": "c",
             "logic": {"==": [{"var": "target.id"}, "t"]}}
        ]
    });
    let check = |page: &Value| -> String {
        let file = dir.path().join("n.json");
        std::fs::write(&file, page.to_string()).unwrap();
        let (code, out, err) = rb(&db, &["check", file.to_str().unwrap()]);
        assert_eq!(code, 1, "{out}{err}");
        out
    };
    let out = check(&base);
    assert!(
        out.contains("/rules/0/weight") && out.contains("from 0 to"),
        "{out}"
    );
    let mut dup = base.clone();
    dup["rules"][0]["weight"] = json!(1);
    dup["rules"][1]["weight"] = json!(1);
    dup["overrides"] = json!([
        {"sourceKey": "id=s", "targetKey": "id=t", "value": true},
        {"sourceKey": "id=s", "targetKey": "id=t", "value": false}
    ]);
    let out = check(&dup);
    assert!(out.contains("overrides 0 and 1"), "{out}");
    let (code, _, err) = rb(&db, &["pages"]);
    assert_eq!(code, 0, "{err}");
    let rule = dir.path().join("r.json");
    std::fs::write(&rule, json!({"name": "!!!", "logic": true}).to_string()).unwrap();
    let (code, _, err) = rb(
        &db,
        &["rule", "add", "llm-chat-clients", rule.to_str().unwrap()],
    );
    assert_eq!(code, 2);
    assert!(err.contains("no letter or digit"), "{err}");
}

/// Strict keys: a misspelled key is an error with its pointer, line:col and a
/// did-you-mean, where it used to be dropped silently; `$schema` is welcome.
#[test]
fn misspelled_keys_are_errors_with_a_did_you_mean() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let page: Value =
        serde_json::from_str(include_str!("../sample-pages/loan-eligibility.json")).unwrap();
    type Spoil = fn(&mut Value);
    let cases: [(&str, Spoil); 4] = [
        ("/rules/0/requried", |p| {
            p["rules"][0]["requried"] = json!(true);
        }),
        ("/devicePolicy/fullTreshold", |p| {
            p["devicePolicy"]["fullTreshold"] = json!(0.9);
        }),
        ("/overides", |p| {
            p["overides"] = json!([]);
        }),
        ("/target/lable", |p| {
            p["target"]["lable"] = json!("name");
        }),
    ];
    for (pointer, spoil) in cases {
        let mut p = page.clone();
        spoil(&mut p);
        let file = dir.path().join("k.json");
        std::fs::write(&file, serde_json::to_string_pretty(&p).unwrap()).unwrap();
        let (code, out, _) = rb(&db, &["check", file.to_str().unwrap()]);
        assert_eq!(code, 1, "{pointer}: {out}");
        assert!(out.contains(&format!("at {pointer}")), "{pointer}: {out}");
        assert!(out.contains("did you mean"), "{pointer}: {out}");
        let (code, _, err) = rb(&db, &["import", "--replace", file.to_str().unwrap()]);
        assert_eq!(code, 2, "{pointer} is not imported: {err}");
    }
    let rule = dir.path().join("r.json");
    std::fs::write(
        &rule,
        json!({"name": "Heavy", "wieght": 3, "logic": true}).to_string(),
    )
    .unwrap();
    let (code, _, err) = rb(
        &db,
        &["rule", "add", "loan-eligibility", rule.to_str().unwrap()],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("did you mean `weight`?") && err.contains("1:"),
        "{err}"
    );
    // `$schema` at the top is welcome.
    let mut p = page.clone();
    p["$schema"] = json!("https://example.invalid/page.schema.json");
    let file = dir.path().join("s.json");
    std::fs::write(&file, p.to_string()).unwrap();
    let (code, out, err) = rb(&db, &["check", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
}

/// A data file row with the same key twice is refused, naming the line (it used to keep
/// the last value silently); page files already refused it.
#[test]
fn duplicate_keys_in_a_data_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    for (name, text, line) in [
        (
            "dup.json",
            "[\n  {\"id\": \"a\", \"x\": 1},\n  {\"id\": \"b\", \"x\": 1, \"x\": 2}\n]\n",
            ":3:",
        ),
        (
            "dup.jsonl",
            "{\"id\": \"a\"}\n{\"id\": \"b\", \"id\": \"c\"}\n",
            ":2",
        ),
        // Indented: the column is the line's as written (it was the trimmed line's).
        (
            "indented.jsonl",
            "{\"id\": \"a\"}\n   {\"id\": \"b\", \"id\": \"c\"}\n",
            "column 16",
        ),
    ] {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let (code, _, err) = rb(
            &db,
            &[
                "dataset",
                "import",
                "llm-chat-clients",
                "target",
                file.to_str().unwrap(),
            ],
        );
        assert_eq!(code, 2, "{name}: {err}");
        assert!(
            err.contains("duplicate key") && err.contains(line),
            "{name}: {err}"
        );
    }
}

/// Integers beyond ±(2^53 − 1) used to lose digits silently: `n == 9007199254740992`
/// passed for a row holding 9007199254740993. JSON inputs refuse them with line:col and
/// a hint; a CSV cell keeps them exactly, as text.
#[test]
fn integers_that_would_lose_digits_are_refused_or_kept_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("n.db");
    let page = |row_n: &str, literal: &str| {
        format!(
            r#"{{"format": "rulebench.page/v1", "id": "big", "name": "big",
  "source": {{"name": "S", "key": ["id"], "rows": [{{"id": "s"}}]}},
  "target": {{"name": "T", "key": ["id"], "rows": [{{"id": "t", "n": {row_n}}}]}},
  "rules": [{{"name": "r", "logic": {{"==": [{{"var": "target.n"}}, {literal}]}}}}]}}"#
        )
    };
    let file = dir.path().join("big.json");
    for (row_n, literal, big) in [
        ("9007199254740993", "1", "9007199254740993"),
        ("1", "9007199254740992", "9007199254740992"),
        ("-123456789012345678901234567890", "1", "-1234567890"),
    ] {
        let text = page(row_n, literal);
        // Where the big literal stands, as line:col.
        let at = text.find(big).unwrap();
        let line = text[..at].matches('\n').count() + 1;
        let col = at - text[..at].rfind('\n').map_or(0, |n| n + 1) + 1;
        std::fs::write(&file, &text).unwrap();
        for cmd in ["check", "import"] {
            let (code, out, err) = rb(&db, &[cmd, file.to_str().unwrap()]);
            let all = format!("{out}{err}");
            assert_ne!(code, 0, "{cmd}: {all}");
            assert!(
                all.contains("big-integer") && all.contains(&format!("{line}:{col}")),
                "{cmd} {row_n} {literal}: {all}"
            );
            assert!(all.contains("2^53"), "{all}");
        }
    }
    // Within the limit, and decimals, import and compare exactly.
    std::fs::write(&file, page("9007199254740991", "9007199254740991")).unwrap();
    assert_eq!(rb(&db, &["import", file.to_str().unwrap()]).0, 0);
    let (code, out, err) = rb(
        &db,
        &["evaluate", "big", "--select", "s", "--format", "csv"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(",full,") || out.contains("full"), "{out}");

    // Dataset files: JSON and JSON Lines refuse (line:col); CSV keeps the digits as text.
    let json = dir.path().join("t.json");
    std::fs::write(&json, "[\n {\"id\": \"t\", \"n\": 18446744073709551617}\n]").unwrap();
    let (code, _, err) = rb(
        &db,
        &["dataset", "import", "big", "target", json.to_str().unwrap()],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("t.json:2:") && err.contains("2^53"), "{err}");
    let jsonl = dir.path().join("t.jsonl");
    std::fs::write(
        &jsonl,
        "{\"id\": \"t\", \"n\": 1}\n{\"id\": \"u\", \"n\": -9007199254740993}\n",
    )
    .unwrap();
    let (code, _, err) = rb(
        &db,
        &[
            "dataset",
            "import",
            "big",
            "target",
            jsonl.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(":2") && err.contains("2^53"), "{err}");
    let csv = dir.path().join("t.csv");
    std::fs::write(&csv, "id,n\nt,9007199254740993\n").unwrap();
    let (code, _, err) = rb(
        &db,
        &["dataset", "import", "big", "target", csv.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = rb(&db, &["export", "big"]);
    assert!(out.contains("\"n\": \"9007199254740993\""), "{out}");
}

/// Two rules whose ids come from the same name: the error names both rules and carries
/// line:col (the second rule's, since its id is not written in the file).
#[test]
fn a_duplicate_rule_id_names_both_rules_with_line_col() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/duplicate-rule-ids.json"
    );
    let (code, out, _) = rb(&db, &["check", file]);
    assert_eq!(code, 1);
    let line = out
        .lines()
        .find(|l| l.contains("error[duplicate-rule]"))
        .expect(&out);
    assert!(line.contains("] 6:3 at /rules/1/id"), "{line}");
    assert!(
        line.contains("rule 0 (`Same Name`) and rule 1 (`Same name`)"),
        "{line}"
    );
}

/// A target whose id is `name` takes the rule name's place in the result's `features[]`:
/// a located warning says so (the page still imports; the result JSON is as documented).
#[test]
fn a_target_id_name_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("n.db");
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/target-id-name.json"
    );
    let (code, out, _) = rb(&db, &["check", file]);
    assert_eq!(code, 0, "a warning: {out}");
    let line = out
        .lines()
        .find(|l| l.contains("warning[reserved-id]"))
        .expect(&out);
    assert!(line.contains("3:44 at /target/rows/0"), "{line}");
}

/// A small page file must not abort or stall `import`, `check` or `test`: an assertion
/// path of nested parentheses overflowed the JSONPath parser's stack, and 24 nested
/// filters in 97 bytes ran for minutes. One guard refuses both before the library sees
/// them, with the assertion's pointer and the position in the path.
#[test]
fn assertion_paths_too_nested_or_with_too_many_filters_are_located_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let parens = format!("$.targets[?{}@.id{}]", "(".repeat(5000), ")".repeat(5000));
    let filters = format!("${}{}", "[?@".repeat(24), "]".repeat(24));
    let many = format!("$.targets{}", "[?@.score>0]".repeat(17));
    for (path, says) in [
        (parens.as_str(), "deeper than 32 levels"),
        (filters.as_str(), "nests filters deeper than 4"),
        (many.as_str(), "more than 16 filters"),
    ] {
        let page = json!({
            "format": "rulebench.page/v1", "id": "paths", "name": "Paths",
            "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
            "target": {"name": "T", "key": ["id"], "rows": [{"id": "t"}]},
            "rules": [{"id": "r", "name": "R", "logic": {"==": [{"var": "target.id"}, "t"]}}],
            "assertions": [{"id": "ok", "select": "*", "path": "$.selectionVerdict",
                            "matcher": "toBeOneOf", "expected": [0, 1, 2]},
                           {"id": "bad", "select": "*", "path": path,
                            "matcher": "toBe", "expected": 1}]
        });
        let file = dir.path().join("paths.json");
        std::fs::write(&file, page.to_string()).unwrap();
        for command in ["import", "check", "test"] {
            let started = std::time::Instant::now();
            let (code, out, err) = rb(&db, &[command, file.to_str().unwrap()]);
            let all = out + &err;
            assert!(code == 1 || code == 2, "{command}: {code} {all}");
            assert!(all.contains("/assertions/1/path"), "{command}: {all}");
            assert!(all.contains(says), "{command}: {all}");
            assert!(started.elapsed() < std::time::Duration::from_secs(20));
        }
    }
    // Paths within the limits still work: two nested filters, sixteen in a row.
    let ok = [
        "$.targets[?@.rules[?@ == true]].id".to_owned(),
        format!("$.targets{}", "[?@.score>=0]".repeat(16)),
    ];
    for path in ok {
        assert!(
            rulebench_core::assertions::guard_path(&path).is_ok(),
            "{path}"
        );
    }
}

/// A key written twice was last-wins inside rule logic and rows (`{">=": [a, b],
/// ">=": [b, a]}`: 0 errors, the second stored): a reviewer read one rule and another
/// ran. Every JSON the project reads refuses it, with the place of both.
#[test]
fn duplicate_keys_are_refused_in_rule_logic_rows_predicates_and_expected() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let page = |rules: &str, rows: &str, assertions: &str| {
        format!(
            r#"{{"format": "rulebench.page/v1", "id": "dups", "name": "Dups",
  "source": {{"name": "S", "key": ["id"], "rows": [{{"id": "s", "n": 1}}]}},
  "target": {{"name": "T", "key": ["id"], "rows": [{rows}]}},
  "rules": [{rules}],
  "assertions": [{assertions}]
}}"#
        )
    };
    let ok_rule = r#"{"id": "r", "name": "R", "logic": {">=": [{"var": "target.n"}, 1]}}"#;
    let ok_rows = r#"{"id": "t", "n": 1}"#;
    let ok_assert =
        r#"{"id": "a", "select": "s", "path": "$.targets", "matcher": "toEqual", "expected": []}"#;
    for (what, text, pointer) in [
        (
            "rule logic",
            page(
                r#"{"id": "r", "name": "R", "logic": {">=": [{"var": "target.n"}, 1], ">=": [1, {"var": "target.n"}]}}"#,
                ok_rows,
                ok_assert,
            ),
            "/rules/0/logic/>=",
        ),
        (
            "a row",
            page(ok_rule, r#"{"id": "t", "n": 1, "n": 100}"#, ok_assert),
            "/target/rows/0/n",
        ),
        (
            "predicates",
            page(
                r#"{"id": "r", "name": "R", "predicates": [{"field": "target.n", "operator": ">=", "value": 1, "value": 2}]}"#,
                ok_rows,
                ok_assert,
            ),
            "/rules/0/predicates/0/value",
        ),
        (
            "expected",
            page(
                ok_rule,
                ok_rows,
                r#"{"id": "a", "select": "s", "path": "$.targets", "matcher": "toEqual", "expected": {"v": 1, "v": 2}}"#,
            ),
            "/assertions/0/expected/v",
        ),
    ] {
        let file = dir.path().join("dups.json");
        std::fs::write(&file, &text).unwrap();
        for command in ["import", "check"] {
            let (code, out, err) = rb(&db, &[command, file.to_str().unwrap()]);
            let all = out + &err;
            // `check` finds a problem (1); `import` refuses bad input (2).
            assert_eq!(
                code,
                if command == "check" { 1 } else { 2 },
                "{what} {command}: {all}"
            );
            assert!(all.contains("duplicate key"), "{what} {command}: {all}");
            assert!(all.contains(pointer), "{what} {command} names where: {all}");
            assert!(all.contains("(the first at "), "{what}: both places: {all}");
        }
    }
    // `rule add` and `eval --logic` too.
    let rule = dir.path().join("rule.json");
    std::fs::write(
        &rule,
        r#"{"id": "r2", "name": "R2", "logic": {">=": [{"var": "target.n"}, 1], ">=": [1, 2]}}"#,
    )
    .unwrap();
    let (code, _, err) = rb(
        &db,
        &["rule", "add", "llm-chat-clients", rule.to_str().unwrap()],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("duplicate key `>=`") && err.contains("1:"),
        "{err}"
    );
    let (code, _, err) = rb(
        &db,
        &[
            "eval",
            "--logic",
            r#"{"==": [1, 1], "==": [1, 2]}"#,
            "--data",
            "{}",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("duplicate key `==`"), "{err}");
}

/// One depth limit, counted one way: logic of 64 levels is a valid rule and evaluates
/// (it was refused as "deeper than 64"); 65 are refused with the pointer, by `check` and
/// by `eval` (whose error named no place: the engine's "maximum compile depth of 256").
#[test]
fn logic_of_64_levels_passes_and_65_is_refused_with_its_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let nest = |levels: usize| {
        let mut v = json!({"==": [{"var": "target.id"}, "t"]});
        for _ in 1..levels {
            v = json!({"!": [{"!": v}]});
        }
        v
    };
    // `{"!": [{"!": x}]}` is two levels above x.
    let (at_limit, over) = (nest(32), json!({"!": [nest(32)]}));
    let page = |logic: &Value| {
        json!({"format": "rulebench.page/v1", "id": "deep-logic", "name": "Deep",
            "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
            "target": {"name": "T", "key": ["id"], "rows": [{"id": "t"}]},
            "rules": [{"id": "r", "name": "R", "logic": logic}]})
    };
    let file = dir.path().join("deep.json");
    std::fs::write(&file, page(&at_limit).to_string()).unwrap();
    let (code, out, err) = rb(&db, &["check", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = rb(
        &db,
        &[
            "eval",
            "--logic",
            &at_limit.to_string(),
            "--data",
            r#"{"target": {"id": "t"}}"#,
        ],
    );
    assert_eq!((code, out.trim()), (0, "true"), "{err}");
    std::fs::write(&file, page(&over).to_string()).unwrap();
    let (code, out, err) = rb(&db, &["check", file.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("deeper than the limit of 64"), "{out}");
    let (code, _, err) = rb(&db, &["eval", "--logic", &over.to_string(), "--data", "{}"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("deeper than the limit of 64 levels (at `/!/0/!/0/!/!/0"),
        "{err}"
    );
    assert!(
        err.contains("/!/==/0`)"),
        "the first level past the limit: {err}"
    );
}

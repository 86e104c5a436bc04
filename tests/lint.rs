//! Type-aware lint: each JSONLogic coercion trap on a fixture page is reported as a
//! warning with its pointer (and a rewrite where there is one); the sample pages, which
//! avoid the traps, stay quiet.

mod common;
use common::rb;
use rulebench_core::diag::Code;

use serde_json::Value;

#[test]
fn each_trap_is_a_located_warning() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("l.db");
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/lint-traps.json");
    let (code, out, err) = rb(&db, &["check", file, "--format", "json"]);
    assert_eq!(code, 0, "warnings do not fail check: {err}");
    let diags: Vec<Value> = serde_json::from_str(&out).unwrap();
    let find = |code: &str, pointer: &str| {
        diags
            .iter()
            .find(|d| d["code"] == code && d["pointer"] == pointer)
            .unwrap_or_else(|| panic!("no {code} at {pointer}: {diags:#?}"))
            .clone()
    };
    let d = find("null-as-zero", "/rules/0/logic/</0");
    assert_eq!(d["severity"], "warning");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("2 of 3 target rows"),
        "{d}"
    );
    let rewrite = d["hint"].as_str().unwrap();
    assert!(
        rewrite.contains(r#"{"!=":[{"var":"target.maxTokens"},null]}"#),
        "{rewrite}"
    );
    assert!(d["line"].as_u64().is_some());
    find("string-vs-number", "/rules/1/logic/<=/0");
    let d = find("bool-vs-string", "/rules/2/logic/==/0");
    assert!(
        d["hint"].as_str().unwrap().contains("compare with true"),
        "{d}"
    );
    find("in-mixed", "/rules/3/logic/in/1");
    let d = find("one-sided", "/rules/4/logic");
    assert!(
        d["message"].as_str().unwrap().contains("no target field"),
        "{d}"
    );
    // The suggested rewrite is quiet about the trap it fixes.
    let page: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let mut fixed = page.clone();
    fixed["rules"][0]["logic"] =
        serde_json::from_str(&rewrite["to fail them, write ".len()..]).unwrap();
    let fixed_file = dir.path().join("fixed.json");
    std::fs::write(&fixed_file, fixed.to_string()).unwrap();
    let (_, out, _) = rb(
        &db,
        &["check", fixed_file.to_str().unwrap(), "--format", "json"],
    );
    let diags: Vec<Value> = serde_json::from_str(&out).unwrap();
    assert!(
        !diags.iter().any(|d| d["code"] == "null-as-zero"
            && d["pointer"].as_str().unwrap().starts_with("/rules/0/")),
        "{diags:#?}"
    );
}

#[test]
fn the_sample_pages_raise_no_lint_warning() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    for page in [
        "llm-chat-clients",
        "loan-eligibility",
        "provider-capabilities",
    ] {
        let (_, out, _) = rb(&db, &["check", page, "--format", "json"]);
        let diags: Vec<Value> = serde_json::from_str(&out).unwrap();
        let lint: Vec<&Value> = diags
            .iter()
            .filter(|d| {
                [
                    "null-as-zero",
                    "string-vs-number",
                    "bool-vs-string",
                    "in-mixed",
                    "bool-or-null-order",
                    "text-order",
                ]
                .contains(&d["code"].as_str().unwrap())
            })
            .collect();
        assert!(lint.is_empty(), "{page}: {lint:#?}");
    }
}

/// Review regressions: an earlier comparison that null fails guards a later one; a rule
/// reading the target through `val` is not one-sided; nested paths are not judged by
/// their first segment.
#[test]
fn guards_val_reads_and_nested_paths() {
    use rulebench_core::check::logic as validate_logic;
    use rulebench_core::model::Page;
    use rulebench_core::validate::Schema;
    use serde_json::json;
    let page: Page = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/lint-traps.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let schema = Schema::of(&page);
    let codes = |logic: Value| -> Vec<Code> {
        validate_logic(&logic, &schema)
            .into_iter()
            .map(|d| d.code)
            .collect()
    };
    let guarded = json!({"and": [{">": [{"var": "target.maxTokens"}, 0]}, {"<": [{"var": "target.maxTokens"}, 5000]}]});
    assert!(!codes(guarded).contains(&Code::NullAsZero));
    // Nothing before it tests the field: the `< 5000` is reported.
    let unguarded = json!({"and": [{"!!": [true]}, {"<": [{"var": "target.maxTokens"}, 5000]}]});
    assert!(codes(unguarded).contains(&Code::NullAsZero));
    let via_val =
        json!({"and": [{"==": [{"var": "source.region"}, "eu"]}, {"val": ["target", "vision"]}]});
    assert!(!codes(via_val).contains(&Code::OneSided));
    let nested = json!({"<": [{"var": "target.maxTokens.limit"}, 5]});
    assert!(!codes(nested).contains(&Code::NullAsZero));
}

/// A rule that reads fields yet has one outcome for every pair of the current rows is
/// flagged, for a page file (with line:col) and a stored page; a rule that decides
/// something is not.
#[test]
fn a_rule_constant_over_the_current_data_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("l.db");
    let page = serde_json::json!({
        "format": "rulebench.page/v1", "id": "const", "name": "Constant",
        "source": {"name": "S", "key": ["id"], "rows": [
            {"id": "s1", "provider": "openai"}, {"id": "s2", "provider": "meta"}]},
        "target": {"name": "T", "key": ["id"], "rows": [
            {"id": "a", "provider": "openai", "size": 3},
            {"id": "b", "provider": "meta", "size": 8},
            {"id": "c", "provider": "google", "size": 1}]},
        "rules": [
            {"id": "always", "name": "Always", "required": false, "weight": 1, "category": "c",
             "logic": {">=": [{"var": "target.size"}, 1]}},
            {"id": "never", "name": "Never", "required": false, "weight": 1, "category": "c",
             "logic": {"==": [{"var": "target.provider"}, "OpenAI"]}},
            {"id": "real", "name": "Real", "required": false, "weight": 1, "category": "c",
             "logic": {"==": [{"var": "target.provider"}, {"var": "source.provider"}]}}
        ]
    });
    let file = dir.path().join("const.json");
    std::fs::write(&file, serde_json::to_string_pretty(&page).unwrap()).unwrap();
    let (code, out, err) = rb(&db, &["check", file.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 0, "a warning: {err}");
    let diags: Vec<Value> = serde_json::from_str(&out).unwrap();
    let constant: Vec<&Value> = diags
        .iter()
        .filter(|d| d["code"] == "constant-over-data")
        .collect();
    assert_eq!(constant.len(), 2, "{diags:#?}");
    assert_eq!(constant[0]["pointer"], "/rules/0/logic");
    assert!(
        constant[0]["message"]
            .as_str()
            .unwrap()
            .contains("passes for every pair (2 sources × 3 targets)")
    );
    assert!(
        constant[0]["line"].as_u64().is_some(),
        "located in the file"
    );
    assert_eq!(constant[1]["pointer"], "/rules/1/logic");
    assert!(
        constant[1]["message"]
            .as_str()
            .unwrap()
            .contains("fails for every pair")
    );
    // The stored page says the same.
    let (code, _, err) = rb(&db, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = rb(&db, &["check", "const"]);
    assert_eq!(out.matches("constant-over-data").count(), 2, "{out}");
}

/// The lint shows where a cell is explained: `explain` (text and JSON) and the
/// workbench's Explanation pane.
#[test]
fn explain_shows_the_rules_lint() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("l.db");
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/lint-traps.json");
    let (code, _, err) = rb(&db, &["import", file]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = rb(
        &db,
        &[
            "explain", "lint", "--select", "s", "--target", "c", "--rule", "small",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("⚠ null-as-zero:"), "{out}");
    let (_, out, _) = rb(
        &db,
        &[
            "explain", "lint", "--select", "s", "--target", "c", "--rule", "small", "--format",
            "json",
        ],
    );
    let e: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(e["rules"][0]["lint"][0]["code"], "null-as-zero", "{e:#}");
    // The workbench: the cursor on that rule, the pane says it too.
    let app = rulebench::app::App::open(&db).unwrap();
    let ui = rulebench::tui::ui::Ui::new(app, Some("lint"), rulebench::tui::theme::Theme::mono())
        .unwrap();
    let p = ui.page().unwrap();
    assert_eq!(p.ws.page.rules[p.explain.rule].id, "small");
    let text: String = p
        .explain
        .lines
        .iter()
        .flat_map(|l| l.iter().map(|(_, s)| s.as_str()))
        .collect();
    assert!(text.contains("⚠ null-as-zero:"), "{text}");
}

/// Every problem of a page file at once: a predicate list that does not read no longer
/// hides an unknown field in another rule, and one bad `pathMatch` no longer hides a bad
/// matcher in another assertion. `check` lists all four, each at its pointer, and an
/// import refuses with all four.
#[test]
fn every_problem_of_a_page_is_reported_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("l.db");
    let (_, out, _) = rb(&db, &["export", "loan-eligibility"]);
    let mut page: Value = serde_json::from_str(&out).unwrap();
    page["id"] = serde_json::json!("all-at-once");
    let rules = page["rules"].as_array_mut().unwrap();
    rules.push(serde_json::json!({
        "id": "bad-list", "name": "Bad list",
        "predicates": [{"field": "source.age", "operator": "≥≥", "value": 18}]
    }));
    rules.push(serde_json::json!({
        "id": "typo", "name": "Typo",
        "logic": {"==": [{"var": "source.countryy"}, "FR"]}
    }));
    page["assertions"] = serde_json::json!([
        {"id": "bad-match", "select": "*", "path": "$.selectionVerdict",
         "pathMatch": "SOMETIMES", "matcher": "toEqual", "expected": 2},
        {"id": "bad-matcher", "select": "*", "path": "$.selectionVerdict",
         "matcher": "toEquals", "expected": 2}
    ]);
    let file = dir.path().join("all.json");
    std::fs::write(&file, serde_json::to_string_pretty(&page).unwrap()).unwrap();
    let (code, out, _) = rb(&db, &["check", file.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 1);
    let diags: Vec<Value> = serde_json::from_str(&out).unwrap();
    let n = page["rules"].as_array().unwrap().len();
    let at = |prefix: String| {
        diags
            .iter()
            .find(|d| {
                d["severity"] == "error" && d["pointer"].as_str().unwrap().starts_with(&prefix)
            })
            .unwrap_or_else(|| panic!("an error at {prefix}: {diags:#?}"))
            .clone()
    };
    at(format!("/rules/{}/predicates", n - 2));
    let typo = at(format!("/rules/{}/logic", n - 1));
    assert_eq!(typo["code"], "unknown-field", "{typo}");
    assert!(typo["line"].as_u64().is_some(), "located: {typo}");
    at("/assertions/0".into());
    let matcher = at("/assertions/1/matcher".into());
    assert!(
        matcher["message"].as_str().unwrap().contains("toEquals"),
        "{matcher}"
    );
    // An import says the same, all at once, and changes nothing.
    let (code, _, err) = rb(&db, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 2);
    for needle in ["predicates", "countryy", "SOMETIMES", "toEquals"] {
        assert!(err.contains(needle), "{needle} in {err}");
    }
}

/// In the workbench, a rule edited into one outcome for every pair of the current rows
/// says so under the editor and in the Explanation (the background work sees every
/// source).
#[test]
fn the_editor_says_when_a_rule_is_constant_over_the_data() {
    let mut b = common::tui::Bench::open("llm-chat-clients");
    b.chars("2");
    b.press(ratatui::crossterm::event::KeyCode::Home);
    b.chars("e");
    let p = b.ui.page_mut().unwrap();
    p.editor.textarea.select_all();
    p.editor.textarea.cut();
    b.chars(r#"{"==": [{"var": "target.provider"}, "OpenAI"]}"#);
    let s = b.screen(160, 45);
    assert!(s.contains("constant-over-data"), "{s}");
    assert!(s.contains("fails for every pair"), "{s}");
    let text: String =
        b.ui.page()
            .unwrap()
            .explain
            .lines
            .iter()
            .flat_map(|l| l.iter().map(|(_, s)| s.as_str()))
            .collect();
    assert!(text.contains("constant-over-data"), "{text}");
    // A rule that decides something: quiet.
    let p = b.ui.page_mut().unwrap();
    p.editor.textarea.select_all();
    p.editor.textarea.cut();
    b.chars(r#"{"==": [{"var": "target.provider"}, "openai"]}"#);
    assert!(!b.screen(160, 45).contains("constant-over-data"));
}

/// A key written twice is an error (reading every problem at once went through a tree
/// of values, which kept the last and dropped the first in silence).
#[test]
fn a_key_written_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("l.db");
    let text = r#"{"format": "rulebench.page/v1", "id": "twice", "name": "Twice",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": "t"}]},
        "rules": [{"name": "A", "logic": true}],
        "rules": []}"#;
    let file = dir.path().join("twice.json");
    std::fs::write(&file, text).unwrap();
    let (code, out, _) = rb(&db, &["check", file.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    // Both places: the second (5:9, at `/rules`) and the first (4:9).
    assert!(
        out.contains("duplicate key `rules`") && out.contains("5:9") && out.contains("4:9"),
        "{out}"
    );
    let (code, _, err) = rb(&db, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
}

/// The live `constant-over-data` word follows the rules when one is deleted (it stayed
/// on the index, so the next rule showed the deleted one's until the background work
/// answered).
#[test]
fn the_live_constant_word_follows_a_deleted_rule() {
    let dir = tempfile::tempdir().unwrap();
    let app = rulebench::app::App::open(&dir.path().join("l.db")).unwrap();
    let mut ws = rulebench::app::Session::open(&app, "llm-chat-clients").unwrap();
    let n = ws.page.rules.len();
    ws.constant = vec![None; n];
    ws.constant[0] = Some(false);
    ws.delete_rule(0).unwrap();
    assert_eq!(ws.constant.len(), n - 1);
    assert!(ws.constant.iter().all(Option::is_none), "{:?}", ws.constant);
    assert!(
        ws.rule_lint(0)
            .iter()
            .all(|d| d.code != Code::ConstantOverData)
    );
}

/// A page whose own shape is wrong (no name) and that has a bad rule: both problems are
/// said (the page's used to be hidden behind the rule's).
#[test]
fn the_pages_own_shape_error_is_said_beside_an_elements() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("l.db");
    let text = r#"{"format": "rulebench.page/v1", "id": "shape",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": "t"}]},
        "rules": [{"name": "A", "logic": true, "weight": "heavy"}]}"#;
    let file = dir.path().join("shape.json");
    std::fs::write(&file, text).unwrap();
    let (code, out, _) = rb(&db, &["check", file.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("/rules/0"), "the rule's problem: {out}");
    assert!(out.contains("missing field `name`"), "the page's: {out}");
}

/// The traps found on real data: a string field ordered against a numeric field, a
/// number ordered against `false` or `null` (read as 0: `95 >= false` holds), and a
/// version-like string ordered as text (`"16.10" < "16.9"`). Each is located; the
/// comparisons that mean what they say stay quiet.
#[test]
fn ordering_traps_and_field_against_field() {
    use rulebench_core::check::logic as check_logic;
    use rulebench_core::model::Page;
    use rulebench_core::validate::Schema;
    use serde_json::json;
    let page: Page = serde_json::from_value(json!({
        "format": "rulebench.page/v1", "id": "o", "name": "O",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s", "maxPrice": 10}]},
        "target": {"name": "T", "key": ["id"], "rows": [
            {"id": "a", "price": "12", "release": "16.10", "n": 1},
            {"id": "b", "price": "5", "release": "9", "n": 2}]},
        "rules": []
    }))
    .unwrap();
    let schema = Schema::of(&page);
    let found = |logic: Value| -> Vec<(Code, String)> {
        check_logic(&logic, &schema)
            .into_iter()
            .map(|d| (d.code, d.pointer))
            .collect()
    };
    let has = |logic: Value, code: Code, pointer: &str| {
        let got = found(logic.clone());
        assert!(
            got.iter().any(|(c, p)| *c == code && p == pointer),
            "{logic}: no {code} at {pointer} in {got:?}"
        );
    };
    has(
        json!({"<=": [{"var": "target.price"}, {"var": "source.maxPrice"}]}),
        Code::StringVsNumber,
        "/<=/0",
    );
    has(
        json!({">=": [{"var": "target.n"}, false]}),
        Code::BoolOrNullOrder,
        "/>=/1",
    );
    has(
        json!({"<": [{"var": "target.n"}, null]}),
        Code::BoolOrNullOrder,
        "/</1",
    );
    has(
        json!({">=": [{"var": "target.release"}, "16.4"]}),
        Code::TextOrder,
        "/>=/1",
    );
    let quiet = [
        json!({">=": [{"var": "target.n"}, 1]}),
        json!({"==": [{"var": "target.release"}, "16.4"]}),
        json!({"==": [{"var": "target.n"}, false]}),
        json!({"<=": [{"var": "target.n"}, {"var": "source.maxPrice"}]}),
    ];
    for logic in quiet {
        let got = found(logic.clone());
        assert!(
            !got.iter().any(|(c, _)| matches!(
                c,
                Code::StringVsNumber | Code::BoolOrNullOrder | Code::TextOrder
            )),
            "{logic}: {got:?}"
        );
    }
}

/// Regression (issue: a nested path typo passed `check`): a path under a field that
/// holds objects is checked against the keys the rows have there, with a did-you-mean;
/// and two string fields ordered, one holding version-like strings, are `text-order`.
#[test]
fn nested_paths_and_version_like_fields() {
    use rulebench_core::check::logic as check_logic;
    use rulebench_core::model::Page;
    use rulebench_core::validate::Schema;
    use serde_json::json;
    let page: Page = serde_json::from_value(json!({
        "format": "rulebench.page/v1", "id": "n", "name": "N",
        "source": {"name": "S", "key": ["id"], "rows": [
            {"id": "s", "minimum": "16.4", "name": "x"}]},
        "target": {"name": "T", "key": ["id"], "rows": [
            {"id": "a", "release": "16.10", "added": {"fetch": "10", "webgpu": {"since": "17"}}, "list": [1]},
            {"id": "b", "release": "9", "added": {"dialog": "15"}, "list": [2]}]},
        "rules": []
    }))
    .unwrap();
    let schema = Schema::of(&page);
    let diags = |logic: Value| check_logic(&logic, &schema);
    // A typo under `added`: an error, with the key it is close to.
    let got = diags(json!({"==": [{"var": "target.added.fetchh"}, "10"]}));
    let d = got
        .iter()
        .find(|d| d.code == Code::UnknownField)
        .unwrap_or_else(|| panic!("{got:?}"));
    assert!(d.is_error(), "{d}");
    assert!(
        d.message
            .contains("no target row has `fetchh` under `target.added`"),
        "{d}"
    );
    assert_eq!(
        d.hint.as_deref(),
        Some("did you mean `target.added.fetch`?"),
        "{d}"
    );
    // Deeper: the first missing segment is named, among its siblings.
    let got = diags(json!({"!!": {"var": "target.added.webgpu.sinse"}}));
    assert!(
        got.iter().any(|d| d.code == Code::UnknownField
            && d.message.contains("`sinse` under `target.added.webgpu`")
            && d.hint.as_deref() == Some("did you mean `target.added.webgpu.since`?")),
        "{got:?}"
    );
    // Paths some row has, and paths through an array index, are fine.
    for ok in [
        json!({"!!": {"var": "target.added.fetch"}}),
        json!({"!!": {"var": "target.added.dialog"}}),
        json!({"!!": {"var": "target.added.webgpu.since"}}),
        json!({"!!": {"var": "target.list.0"}}),
    ] {
        let got = diags(ok.clone());
        assert!(
            !got.iter().any(|d| d.code == Code::UnknownField),
            "{ok}: {got:?}"
        );
    }
    // Two string fields ordered, one holding version-like strings.
    let got = diags(json!({">=": [{"var": "target.release"}, {"var": "source.minimum"}]}));
    assert!(
        got.iter()
            .any(|d| d.code == Code::TextOrder && d.message.contains("version-like")),
        "{got:?}"
    );
    // Not between a string field of words and another.
    let got = diags(json!({">=": [{"var": "source.name"}, {"var": "target.id"}]}));
    assert!(!got.iter().any(|d| d.code == Code::TextOrder), "{got:?}");
}

/// Regression: a nested path that only a dataset default holds was an unknown field (the
/// rows that lack the field read the default's keys).
#[test]
fn a_nested_path_of_a_default_is_known() {
    use rulebench_core::check::logic as check_logic;
    use rulebench_core::model::Page;
    use rulebench_core::validate::Schema;
    use serde_json::json;
    let page: Page = serde_json::from_value(json!({
        "format": "rulebench.page/v1", "id": "n", "name": "N",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
        "target": {"name": "T", "key": ["id"], "defaults": {"caps": {"tools": false}},
            "rows": [{"id": "a", "caps": {"vision": true}}, {"id": "b"}]},
        "rules": []
    }))
    .unwrap();
    let schema = Schema::of(&page);
    let got = check_logic(&json!({"!!": {"var": "target.caps.tools"}}), &schema);
    assert!(!got.iter().any(|d| d.code == Code::UnknownField), "{got:?}");
    let got = check_logic(&json!({"!!": {"var": "target.caps.tool"}}), &schema);
    assert!(got.iter().any(|d| d.code == Code::UnknownField), "{got:?}");
}

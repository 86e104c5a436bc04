//! Infix rules: parse(print(x)) == x for every JSONLogic the grammar covers (proptest),
//! and what the infix form compiles to evaluates like the JSONLogic written by hand.

mod common;

use proptest::prelude::*;
use rulebench_core::infix::{Fields, parse, print};
use serde_json::{Value, json};

fn field() -> impl Strategy<Value = Value> {
    prop::sample::select(vec![
        "source.age",
        "source.country",
        "target.country",
        "target.tier",
        "target.tags",
        "source.limits.max_latency",
        "target.supportsStreaming",
    ])
    .prop_map(|f| json!({"var": f}))
}

fn literal() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i32>().prop_map(|n| json!(n)),
        (-1000i32..1000, 1u8..4).prop_map(|(n, d)| json!(n as f64 / f64::from(d) / 8.0)),
        "[a-zA-Z0-9 '\"\\\\\n\t_.-]{0,12}".prop_map(Value::String),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Null),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![3 => field(), 3 => literal(), 1 => prop::collection::vec(literal(), 0..4).prop_map(Value::Array)]
}

fn comparison() -> impl Strategy<Value = Value> {
    let ops = prop::sample::select(vec!["==", "!=", "===", "!==", "<", "<=", ">", ">="]);
    prop_oneof![
        (ops, value(), value()).prop_map(|(op, a, b)| json!({op: [a, b]})),
        (
            prop::sample::select(vec!["<", "<="]),
            value(),
            field(),
            value()
        )
            .prop_map(|(op, a, b, c)| json!({op: [a, b, c]})),
        (
            value(),
            prop_oneof![
                field(),
                prop::collection::vec(literal(), 0..4).prop_map(Value::Array)
            ]
        )
            .prop_map(|(a, b)| json!({"in": [a, b]})),
        (value(), field()).prop_map(|(a, b)| json!({"!": [{"in": [a, b]}]})),
        field(),
    ]
}

fn expression() -> impl Strategy<Value = Value> {
    comparison().prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|x| json!({"!": [x]})),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|xs| json!({"and": xs})),
            prop::collection::vec(inner, 2..4).prop_map(|xs| json!({"or": xs})),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn parse_of_print_is_identity(logic in expression()) {
        let text = print(&logic).expect("in the grammar");
        let back = parse(&text, &Fields::default()).map_err(|e| TestCaseError::fail(e.render(&text)))?;
        prop_assert_eq!(back, logic, "printed as {}", text);
    }

    #[test]
    fn print_of_parse_is_stable(logic in expression()) {
        let text = print(&logic).unwrap();
        let again = print(&parse(&text, &Fields::default()).unwrap()).unwrap();
        prop_assert_eq!(again, text);
    }
}

#[test]
fn seed_004_worked_example_compiles_to_the_same_logic() {
    let infix =
        "(source.age >= 18 AND source.credit_score > 700) OR source.country == target.country";
    let logic = parse(infix, &Fields::default()).unwrap();
    assert_eq!(
        logic,
        json!({"or": [{"and": [{">=": [{"var": "source.age"}, 18]}, {">": [{"var": "source.credit_score"}, 700]}]},
                      {"==": [{"var": "source.country"}, {"var": "target.country"}]}]})
    );
    let data = json!({"source": {"age": 25, "credit_score": 650, "country": "CA"}, "target": {"country": "US"}});
    assert_eq!(
        rulebench_core::engine::apply(&logic, &data).unwrap(),
        json!(false)
    );
}

fn rulebench(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rulebench"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn expr_command_converts_both_ways_and_explains_errors() {
    let (code, out, _) = rulebench(&["expr", "source.age >= 18 AND target.tier in ['pro', 'max']"]);
    assert_eq!(code, 0);
    let logic: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        logic,
        json!({"and": [{">=": [{"var": "source.age"}, 18]}, {"in": [{"var": "target.tier"}, ["pro", "max"]]}]})
    );
    let (code, out, _) = rulebench(&["expr", "--to-infix", &logic.to_string()]);
    assert_eq!(
        (code, out.as_str()),
        (0, "source.age >= 18 AND target.tier in ['pro', 'max']\n")
    );
    let (code, _, err) = rulebench(&["expr", "source.age = 18"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("at 1:12") && err.contains("^") && err.contains("did you mean `==`?"),
        "{err}"
    );
    // Logic outside the infix grammar is bad input: exit 2 (it was 1, as if a check
    // had found problems).
    let (code, _, err) = rulebench(&["expr", "--to-infix", r#"{"map": [[1], {"var": ""}]}"#]);
    assert_eq!(code, 2);
    assert!(err.contains("no infix form"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    common::ensure_db(&db, &[]);
    let (code, _, err) = rulebench(&[
        "--db",
        db.to_str().unwrap(),
        "expr",
        "--page",
        "llm-chat-clients",
        "target.supportStreaming == true",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("did you mean `target.supportsStreaming`?"),
        "{err}"
    );
}

/// Token soup: whatever parses prints back and parses to the same logic, and nothing
/// panics (the body of the cargo-fuzz target, run here on stable).
fn soup() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "source.a",
        "target.b",
        "source.tags.0",
        "x",
        "a.",
        "..",
        ".",
        "AND",
        "or",
        "NOT",
        "not",
        "in",
        "contains",
        "true",
        "FALSE",
        "null",
        "==",
        "!=",
        "===",
        "!==",
        "<",
        "<=",
        ">",
        ">=",
        "=",
        "!",
        "(",
        ")",
        "[",
        "]",
        ",",
        "'s'",
        "\"d\"",
        "'",
        "\\",
        "1",
        "-2.5",
        "1e3",
        "-0",
        "0x1",
        "é",
        "$v",
        "_u",
        "-",
        "\n",
        " ",
        "&",
        "|",
    ]);
    prop::collection::vec(token, 0..24).prop_map(|t| t.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn token_soup_round_trips_or_fails_cleanly(text in soup()) {
        rulebench_core::infix::fuzz_roundtrip(text.as_bytes());
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,40}") {
        rulebench_core::infix::fuzz_roundtrip(text.as_bytes());
    }
}

/// An integer literal that would lose digits is refused where it stands, as in JSON.
#[test]
fn infix_refuses_integers_beyond_two_to_the_53() {
    let e = parse("target.n == 9007199254740993", &Fields::default()).unwrap_err();
    assert_eq!((e.line, e.column), (1, 13), "{e:?}");
    assert!(e.message.contains("2^53"), "{e:?}");
    assert!(parse("target.n == 9007199254740991", &Fields::default()).is_ok());
    assert!(parse("target.n == 9007199254740993.5", &Fields::default()).is_ok());
}

/// `not_in` and `not_contains` are `not in` and `not contains` (other rule languages
/// spell them so), in any case; they print back as `not in` / `not contains`.
#[test]
fn not_in_and_not_contains_with_underscores() {
    let f = Fields::default();
    assert_eq!(
        parse("source.age not_in [1, 2]", &f).unwrap(),
        parse("source.age not in [1, 2]", &f).unwrap()
    );
    assert_eq!(
        parse("target.tags NOT_CONTAINS 'gpu'", &f).unwrap(),
        parse("target.tags not contains 'gpu'", &f).unwrap()
    );
    let logic = parse("target.tags not_contains 'gpu'", &f).unwrap();
    assert_eq!(print(&logic).unwrap(), "target.tags not contains 'gpu'");
}

mod authored {
    //! A rule written as an infix `expression` is stored as authored: exported with it
    //! (and its `logic`), shown so in the editor, its parse errors located.

    use std::path::Path;
    use std::process::{Command, Stdio};

    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use serde_json::{Value, json};

    fn rb(db: &Path, args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
        super::common::ensure_db(db, args);
        let mut child = Command::new(env!("CARGO_BIN_EXE_rulebench"))
            .env_remove("RULEBENCH_DB")
            .arg("--db")
            .arg(db)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if let Some(text) = stdin {
            use std::io::Write;
            let _ = child.stdin.take().unwrap().write_all(text.as_bytes());
        }
        drop(child.stdin.take());
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }

    const AUTHORED: &str =
        "target.inputPricePerMTok<=source.maxInputPricePerMTok  or  target.openWeights";

    #[test]
    fn an_expression_is_stored_exported_and_shown_as_authored() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("e.db");
        let rule = json!({"name": "Cheap or open", "weight": 2, "expression": AUTHORED});
        let (code, _, err) = rb(
            &db,
            &["rule", "add", "llm-chat-clients", "-"],
            Some(&rule.to_string()),
        );
        assert_eq!(code, 0, "{err}");
        let (_, out, _) = rb(&db, &["export", "llm-chat-clients"], None);
        let page: Value = serde_json::from_str(&out).unwrap();
        let r = page["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == "cheap-or-open")
            .unwrap()
            .clone();
        assert_eq!(r["expression"], AUTHORED, "kept as written");
        assert_eq!(
            r["logic"],
            json!({"or": [{"<=": [{"var": "target.inputPricePerMTok"},
                                   {"var": "source.maxInputPricePerMTok"}]},
                          {"var": "target.openWeights"}]})
        );
        // The export imports again (both given, and alike).
        let file = dir.path().join("p.json");
        std::fs::write(&file, &out).unwrap();
        let (code, _, err) = rb(&db, &["import", "--replace", file.to_str().unwrap()], None);
        assert_eq!(code, 0, "{err}");
        // The workbench's editor opens it in infix, as written.
        let app = rulebench::app::App::open(&db).unwrap();
        let mut ui = rulebench::tui::ui::Ui::new(
            app,
            Some("llm-chat-clients"),
            rulebench::tui::theme::Theme::mono(),
        )
        .unwrap();
        let i = ui.page().unwrap().ws.page.rule("cheap-or-open").unwrap().0;
        ui.dispatch(rulebench::tui::action::Action::RuleSelected(i));
        let p = ui.page().unwrap();
        assert!(p.editor.infix);
        assert_eq!(p.editor.text(), AUTHORED);
        // Edited as JSONLogic (F2, then a change), the expression goes.
        ui.handle_key(KeyEvent::new(KeyCode::Char('4'), KeyModifiers::NONE));
        ui.handle_key(KeyEvent::new(KeyCode::Char('e'), KeyModifiers::NONE));
        ui.handle_key(KeyEvent::new(KeyCode::F(2), KeyModifiers::NONE));
        assert!(!ui.page().unwrap().editor.infix);
        let p = ui.page_mut().unwrap();
        p.editor.textarea.select_all();
        p.editor.textarea.cut();
        for c in r#"{"var": "target.openWeights"}"#.chars() {
            ui.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        ui.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
        let (_, out, _) = rb(&db, &["export", "llm-chat-clients"], None);
        let page: Value = serde_json::from_str(&out).unwrap();
        let r = page["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == "cheap-or-open")
            .unwrap()
            .clone();
        assert!(r.get("expression").is_none(), "{r}");
        assert_eq!(r["logic"], json!({"var": "target.openWeights"}));
    }

    #[test]
    fn a_bad_expression_is_located_and_disagreeing_logic_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("e.db");
        let rule = json!({"name": "Bad", "expression": "target.openWeights and and"});
        let (code, _, err) = rb(
            &db,
            &["rule", "add", "llm-chat-clients", "-"],
            Some(&serde_json::to_string_pretty(&rule).unwrap()),
        );
        assert_eq!(code, 2);
        assert!(
            err.contains("infix-syntax") && err.contains("`expression` 1:"),
            "{err}"
        );
        assert!(err.contains(" 3:"), "located in the file (line 3): {err}");
        let rule = json!({"name": "Two", "expression": "target.openWeights",
                          "logic": {"!": {"var": "target.openWeights"}}});
        let (code, _, err) = rb(
            &db,
            &["rule", "add", "llm-chat-clients", "-"],
            Some(&rule.to_string()),
        );
        assert_eq!(code, 2);
        assert!(err.contains("disagree"), "{err}");
        // A control character in an expression is refused (it would reach the editor).
        let rule = json!({"name": "Bidi", "expression": "target.id == 'abc\u{202e}fdp'"});
        let (code, _, err) = rb(
            &db,
            &["rule", "add", "llm-chat-clients", "-"],
            Some(&rule.to_string()),
        );
        assert_eq!(code, 2);
        assert!(err.contains("U+202E"), "{err}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Every string literal, whatever code points it holds, prints as infix with no
    /// character a terminal could act on or hide, and reads back exactly (`--to-infix`
    /// wrote `\u001b`, which the parser read as `u001b`).
    #[test]
    fn string_literals_round_trip_exactly_and_print_safe(s in any::<String>()) {
        let logic = json!({"==": [{"var": "source.name"}, s]});
        let text = print(&logic).expect("in the grammar");
        prop_assert!(
            !text.chars().any(rulebench_core::text::is_unsafe),
            "printed raw: {:?}", text
        );
        let back = parse(&text, &Fields::default()).map_err(|e| TestCaseError::fail(e.render(&text)))?;
        prop_assert_eq!(back, logic, "printed as {}", text);
    }
}

/// The report's six literals, through the binary (`expr --to-infix`, then back).
#[test]
fn controls_and_invisible_characters_round_trip_through_expr() {
    for s in [
        "a\u{1b}[31mb",
        "nul\u{0}x",
        "del\u{7f}",
        "nel\u{85}",
        "rlo\u{202e}txt",
        "zw\u{200b}sp",
        "cr\r",
        "emoji 😀",
        "\\u001b literally",
    ] {
        let logic = json!({"==": [{"var": "source.name"}, s]});
        let (code, infix, err) = rulebench(&["expr", "--to-infix", &logic.to_string()]);
        assert_eq!(code, 0, "{err}");
        assert!(
            !infix
                .trim_end()
                .chars()
                .any(rulebench_core::text::is_unsafe),
            "{infix:?}"
        );
        let (code, back, err) = rulebench(&["expr", infix.trim_end()]);
        assert_eq!(code, 0, "{s:?}: {err}");
        let back: Value = serde_json::from_str(&back).unwrap();
        assert_eq!(back, logic, "{s:?} printed as {infix}");
    }
    // Both escape forms read, a surrogate pair as one code point; bad ones are located.
    let one = |t: &str| parse(t, &Fields::default());
    assert_eq!(
        one(r"source.a == '\u{1b}\u001b\ud83d\ude00'").unwrap(),
        json!({"==": [{"var": "source.a"}, "\u{1b}\u{1b}😀"]})
    );
    // `\u` before anything but `{` or a hex digit stays a plain `u` (as it read before).
    assert_eq!(
        one(r"source.a == 'C:\users'").unwrap(),
        json!({"==": [{"var": "source.a"}, "C:users"]})
    );
    for bad in [
        r"source.a == '\u{110000}'",
        r"source.a == '\ud83d'",
        r"source.a == '\u12'",
        r"source.a == '\u{}'",
    ] {
        let e = one(bad).unwrap_err();
        assert_eq!(e.column, 14, "{bad}: {e}");
    }
}

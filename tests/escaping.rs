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
    if let Some(problem) = raw_in(what, text) {
        panic!("{problem}");
    }
}

/// What raw terminal control `text` carries, if any.
fn raw_in(what: &str, text: &str) -> Option<String> {
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200b}'..='\u{200f}')
        })
        .collect();
    let at = text
        .chars()
        .position(|c| bad.first() == Some(&c))
        .unwrap_or(0);
    let around: String = text.chars().skip(at.saturating_sub(60)).take(120).collect();
    (!bad.is_empty()).then(|| format!("{what} carries raw {bad:?} (around: {around:?}): {text:?}"))
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

/// Every kind of hostile character at once: OSC 0, a C1 CSI, RLO, a zero-width space,
/// DEL, NEL (C1) and a bidi isolate.
fn hostile() -> String {
    format!("{OSC0}{HOSTILE_TAIL}\u{7f}\u{85}\u{2066}")
}

/// A page with a hostile string in every place a user can put one: names, ids, keys,
/// labels, field names, values, categories, descriptions, notes, assertions.
fn hostile_page() -> serde_json::Value {
    let h = hostile();
    json!({
        "format": "rulebench.page/v1", "id": "evil", "name": format!("Evil{h}"),
        "description": format!("d{h}"), "organization": {"id": "acme", "name": format!("o{h}"), "planTier": "team"},
        "source": {"name": format!("S{h}"), "key": ["id"], "label": "label",
                   "summary": [format!("f{h}")],
                   "rows": [{"id": format!("s{h}"), "label": format!("L{h}"), format!("f{h}"): format!("v{h}")},
                            {"id": "plain", "label": "Plain", format!("f{h}"): 1}]},
        "target": {"name": format!("T{h}"), "key": ["id"], "label": "label",
                   "rows": [{"id": format!("t{h}"), "ok": true, "label": format!("M{h}"), "txt": format!("x{h}")},
                            {"id": "t2", "ok": false, "label": "Two", "txt": "y"}]},
        "rules": [
            {"id": format!("r{OSC52}"), "name": format!("Rule{h}"), "required": false, "weight": 1,
             "category": format!("c{h}"), "description": format!("d{h}"),
             "logic": {"==": [{"var": "target.txt"}, format!("x{h}")]}},
            {"id": "ok", "name": "Ok", "required": true, "weight": 1, "category": "c",
             "logic": {"==": [{"var": "target.ok"}, true]}}
        ],
        "overrides": [{"sourceKey": "id=plain", "targetKey": "id=t2", "value": true, "note": format!("n{h}")}],
        "assertions": [
            {"id": format!("a{h}"), "description": format!("d{h}"), "select": "id=plain",
             "path": "$.targets[0].id", "matcher": "toEqual", "expected": format!("e{h}")},
            {"id": "b", "description": "b", "select": "id=plain",
             "path": "$.selectionVerdict", "matcher": "toEqual", "expected": 5}
        ]
    })
}

/// The issue's test: hostile strings through every command and every text format; no
/// raw ESC, BEL, C1, DEL, bidi or zero-width character reaches stdout or stderr.
#[test]
fn hostile_strings_through_every_command_reach_no_terminal_raw() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("every.db");
    let h = hostile();
    let file = dir.path().join(format!("evil{}.json", "\u{202e}"));
    std::fs::write(
        &file,
        serde_json::to_string_pretty(&hostile_page()).unwrap(),
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let (code, out, err) = rb(&db, &["import", f]);
    assert_eq!(code, 0, "{err}");
    let mut problems: Vec<String> = raw_in("import", &format!("{out}{err}"))
        .into_iter()
        .collect();

    let rule_file = dir.path().join("rule.json");
    std::fs::write(
        &rule_file,
        json!({"name": format!("N{h}"), "category": format!("c{h}"),
               "logic": {"==": [{"var": format!("target.q{h}")}, 1]}, "requried": true})
        .to_string(),
    )
    .unwrap();
    let csv = dir.path().join("t.csv");
    std::fs::write(
        &csv,
        format!("id,label,ok,txt,q{h}\nt{h},M{h},true,x{h},1\n\"t2,two,true\n"),
    )
    .unwrap();
    let bad_json = dir.path().join("bad.json");
    std::fs::write(&bad_json, format!("{{\"name\": \"{}\", {h}", "x")).unwrap();
    let sel = format!("id=s{h}");
    let target = format!("t{h}");
    let mut runs: Vec<Vec<String>> = vec![
        vec!["pages".into()],
        vec!["export".into(), "evil".into()],
        vec!["check".into(), "evil".into()],
        vec!["check".into(), f.into()],
        vec!["check".into(), bad_json.to_str().unwrap().into()],
        vec![
            "check".into(),
            "evil".into(),
            "--format".into(),
            "json".into(),
        ],
        vec![
            "eval".into(),
            "--logic".into(),
            json!({"cat": ["a", h]}).to_string(),
        ],
        vec![
            "eval".into(),
            "--logic".into(),
            json!({format!("op{h}"): [1]}).to_string(),
        ],
        vec![
            "eval".into(),
            "--logic".into(),
            json!({"var": "a"}).to_string(),
            "--data".into(),
            json!({"a": h}).to_string(),
        ],
        vec!["expr".into(), format!("target.a == \"{h}\"")],
        vec!["expr".into(), format!("target.a{h} == 1 AND")],
        vec![
            "expr".into(),
            "--to-infix".into(),
            json!({"==": [{"var": format!("a{h}")}, h]}).to_string(),
        ],
        vec![
            "expr".into(),
            "--page".into(),
            "evil".into(),
            "target.txtt == 1".into(),
        ],
        vec![
            "explain".into(),
            "evil".into(),
            "--select".into(),
            sel.clone(),
            "--target".into(),
            target.clone(),
        ],
        vec![
            "explain".into(),
            "evil".into(),
            "--select".into(),
            sel.clone(),
            "--target".into(),
            target.clone(),
            "--tree".into(),
        ],
        vec![
            "explain".into(),
            "evil".into(),
            "--select".into(),
            sel.clone(),
            "--target".into(),
            "nope".into(),
        ],
        vec![
            "explain".into(),
            "evil".into(),
            "--select".into(),
            sel.clone(),
            "--target".into(),
            target.clone(),
            "--rule".into(),
            format!("x{h}"),
        ],
        vec![
            "rule".into(),
            "add".into(),
            "evil".into(),
            rule_file.to_str().unwrap().into(),
        ],
        vec!["rule".into(), "rm".into(), "evil".into(), format!("r{h}")],
        vec![
            "override".into(),
            "add".into(),
            "evil".into(),
            "--source".into(),
            sel.clone(),
            "--target".into(),
            "id=t2".into(),
            "--value".into(),
            "false".into(),
            "--note".into(),
            format!("n{h}"),
        ],
        vec![
            "override".into(),
            "rm".into(),
            "evil".into(),
            "--source".into(),
            format!("id=z{h}"),
            "--target".into(),
            "id=t2".into(),
        ],
        vec![
            "policy".into(),
            "set".into(),
            "evil".into(),
            format!("fullThreshold={h}"),
        ],
        vec![
            "policy".into(),
            "set".into(),
            "evil".into(),
            format!("full{h}=1"),
        ],
        vec!["test".into(), "evil".into()],
        vec![
            "test".into(),
            "evil".into(),
            "--format".into(),
            "junit".into(),
        ],
        vec!["test".into(), f.into()],
        vec![
            "dataset".into(),
            "import".into(),
            "evil".into(),
            "target".into(),
            csv.to_str().unwrap().into(),
        ],
        vec![
            "dataset".into(),
            "schema".into(),
            "evil".into(),
            "source".into(),
        ],
        vec![
            "dataset".into(),
            "schema".into(),
            "evil".into(),
            "source".into(),
            "--json".into(),
        ],
        vec!["watch".into(), "evil".into()],
        vec![format!("nope{h}")],
        vec![
            "evaluate".into(),
            "evil".into(),
            "--select".into(),
            format!("id=z{h}"),
        ],
    ];
    for format in ["json", "jsonl", "summary", "table", "csv", "md"] {
        for which in [["--select", sel.as_str()], ["--all", "--all"]] {
            let mut args: Vec<String> = vec!["evaluate".into(), "evil".into()];
            args.extend(
                which
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<std::collections::BTreeSet<_>>(),
            );
            args.extend(["--format".into(), format.into()]);
            runs.push(args);
        }
    }
    runs.push(vec![
        "explain".into(),
        "evil".into(),
        "--select".into(),
        sel.clone(),
        "--target".into(),
        target.clone(),
        "--format".into(),
        "json".into(),
    ]);
    runs.push(vec![
        "test".into(),
        "evil".into(),
        "--format".into(),
        "json".into(),
    ]);
    let good_csv = dir.path().join("good.csv");
    std::fs::write(
        &good_csv,
        format!("id,label,ok,txt,q{h}\nt{h},M{h},true,x{h},1\nt2,two,false,y,2\n"),
    )
    .unwrap();
    runs.push(vec![
        "dataset".into(),
        "import".into(),
        "evil".into(),
        "target".into(),
        good_csv.to_str().unwrap().into(),
    ]);
    runs.push(vec![
        "dataset".into(),
        "schema".into(),
        "evil".into(),
        "target".into(),
    ]);
    // What must succeed does, and shows the hostile text escaped.
    let shown = "\\u{1b}]0;pwned\\u{7}\\u{9b}31m\\u{202e}";
    let must_show = |args: &[String], out: &str| {
        let first = args.first().map(String::as_str).unwrap_or("");
        let second = args.get(1).map(String::as_str).unwrap_or("");
        let text = !args
            .iter()
            .any(|a| a == "json" || a == "jsonl" || a == "summary" || a == "--json");
        match (first, second) {
            ("pages" | "explain", _) | ("test", "evil") | ("dataset", "schema") if text => {
                assert!(
                    out.contains(shown),
                    "{args:?} shows the text escaped: {out}"
                )
            }
            _ => {}
        }
    };
    for args in &runs {
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = rb(&db, &argv);
        assert!(code <= 2, "{args:?}: exit {code}");
        if code < 2 {
            must_show(args, &format!("{out}{err}"));
        }
        let args = argv;
        let shown = format!("{args:?}");
        problems.extend(raw_in(&format!("stdout of {shown}"), &out));
        problems.extend(raw_in(&format!("stderr of {shown}"), &err));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The workbench on the hostile page: every pane focused in turn, help, the palette,
/// the rule form and the Explanation; no cell of any screen holds a raw control.
#[test]
fn hostile_strings_reach_no_workbench_screen_raw() {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use rulebench::app::App;
    use rulebench::tui::{theme::Theme, ui::Ui, view};

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let file = dir.path().join("evil.json");
    std::fs::write(&file, hostile_page().to_string()).unwrap();
    assert_eq!(rb(&db, &["import", file.to_str().unwrap()]).0, 0);
    let mut ui = Ui::new(App::open(&db).unwrap(), Some("evil"), Theme::mono()).unwrap();
    ui.settle();
    let mut problems = Vec::new();
    let mut look = |ui: &Ui, what: &str| {
        for (w, h) in [(160, 45), (80, 24)] {
            let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
            t.draw(|f| view::render(f, ui)).unwrap();
            let cells: String = t
                .backend()
                .buffer()
                .content()
                .iter()
                .map(|c| c.symbol())
                .collect();
            problems.extend(raw_in(&format!("{what} at {w}x{h}"), &cells));
        }
    };
    let key = |c: KeyCode| KeyEvent::new(c, KeyModifiers::NONE);
    look(&ui, "the page");
    for pane in '1'..='9' {
        ui.handle_key(key(KeyCode::Char(pane)));
        ui.settle();
        look(&ui, &format!("pane {pane}"));
        ui.handle_key(key(KeyCode::Enter));
        look(&ui, &format!("pane {pane} after Enter"));
        ui.handle_key(key(KeyCode::Esc));
    }
    ui.handle_key(key(KeyCode::Char('2')));
    ui.handle_key(key(KeyCode::Char('m')));
    look(&ui, "the rule form");
    ui.handle_key(key(KeyCode::Esc));
    ui.handle_key(key(KeyCode::Char('?')));
    look(&ui, "help");
    ui.handle_key(key(KeyCode::Esc));
    ui.handle_key(KeyEvent::new(KeyCode::Char('p'), KeyModifiers::CONTROL));
    look(&ui, "the palette");
    ui.handle_key(key(KeyCode::Esc));
    // A hostile text typed into the editor: the diagnostics echo it.
    ui.handle_key(key(KeyCode::Char('4')));
    ui.handle_key(key(KeyCode::Enter));
    for c in format!("{{\"var\": \"x{}\"", hostile()).chars() {
        ui.handle_key(key(KeyCode::Char(c)));
    }
    look(&ui, "the editor with a hostile draft");
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

//! Structured rule warnings: a rule may declare `{"kind", "detail"}`, emitted for each
//! target it fails for — in the result (`targets[].warnings[]`, the detail filled in),
//! through the cache, in assertions' JSONPath, in `explain` and in the workbench.

mod common;

use common::rb;
use serde_json::{Value, json};

fn page() -> Value {
    json!({
        "format": "rulebench.page/v1", "id": "modes", "name": "Modes",
        "source": {"name": "Requests", "key": ["id"], "rows": [{"id": "strict", "mode": "strict"}]},
        "target": {"name": "Providers", "key": ["id"], "label": "name", "summary": ["tier"],
            "rows": [
                {"id": "openai", "name": "OpenAI", "citations": true, "tier": "a"},
                {"id": "hf", "name": "HuggingFace", "citations": false, "tier": "b"}]},
        "rules": [{
            "id": "citations", "name": "Strict citations", "weight": 1, "category": "Modes",
            "logic": {"or": [{"!=": [{"var": "source.mode"}, "strict"]},
                             {"==": [{"var": "target.citations"}, true]}]},
            "warning": {"kind": "mode_fallback",
                        "detail": "{target.label} ({target.tier}) cannot honor strict citations for {source.key}: {rule.name} falls back to lenient; {unknown} stays"}
        }],
        "assertions": [{"id": "hf-falls-back", "select": "strict",
            "path": "$.targets[?@.id=='hf'].warnings[0].kind",
            "matcher": "toEqual", "expected": "mode_fallback"}]
    })
}

#[test]
fn a_failing_rule_emits_its_warning_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let file = dir.path().join("modes.json");
    std::fs::write(&file, serde_json::to_string_pretty(&page()).unwrap()).unwrap();
    let (code, _, err) = rb(&db, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let detail = "HuggingFace (b) cannot honor strict citations for id=strict: Strict citations falls back to lenient; {unknown} stays";
    // The result, computed and then from the cache: the same.
    for cache in ["miss", "hit"] {
        let (code, out, err) = rb(&db, &["evaluate", "modes", "--select", "strict"]);
        assert_eq!(code, 0, "{err}");
        let r: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(r["cache"], cache);
        let targets = r["targets"].as_array().unwrap();
        assert!(targets[0].get("warnings").is_none(), "it passes for OpenAI");
        assert_eq!(
            targets[1]["warnings"],
            json!([{"kind": "mode_fallback", "detail": detail}]),
            "{cache}"
        );
    }
    // Assertions read it by JSONPath.
    let (code, out, err) = rb(&db, &["test", "modes"]);
    assert_eq!(code, 0, "{out}{err}");
    // explain says it, in text and JSON.
    let (_, out, _) = rb(
        &db,
        &["explain", "modes", "--select", "strict", "--target", "hf"],
    );
    assert!(
        out.contains(&format!("⚠ warning mode_fallback: {detail}")),
        "{out}"
    );
    let (_, out, _) = rb(
        &db,
        &[
            "explain", "modes", "--select", "strict", "--target", "hf", "--format", "json",
        ],
    );
    let e: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(e["rules"][0]["warning"]["detail"], detail);
    // It survives export and import.
    let (_, out, _) = rb(&db, &["export", "modes"]);
    let exported: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        exported["rules"][0]["warning"],
        page()["rules"][0]["warning"]
    );
    // The workbench's Explanation pane shows it for the failing cell.
    let app = rulebench::app::App::open(&db).unwrap();
    let mut ui =
        rulebench::tui::ui::Ui::new(app, Some("modes"), rulebench::tui::theme::Theme::mono())
            .unwrap();
    ui.dispatch(rulebench::tui::action::Action::TargetSelected(1));
    let text: String = ui
        .page()
        .unwrap()
        .explain
        .lines
        .iter()
        .flat_map(|l| l.iter().map(|(_, s)| s.as_str()))
        .collect();
    assert!(
        text.contains("⚠ warning mode_fallback: HuggingFace (b)"),
        "{text}"
    );
}

/// Imports the sample chat page's target rows without llama-3.3-70b (the row of its
/// override, opencode × llama-3.3-70b) as a dataset import.
fn drop_llama(db: &std::path::Path, dir: &std::path::Path) {
    let (_, out, _) = rb(db, &["export", "llm-chat-clients"]);
    let page: Value = serde_json::from_str(&out).unwrap();
    let rows: Vec<Value> = page["target"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["id"] != "llama-3.3-70b")
        .cloned()
        .collect();
    let file = dir.join("t.json");
    std::fs::write(&file, Value::Array(rows).to_string()).unwrap();
    let (code, _, err) = rb(
        db,
        &[
            "dataset",
            "import",
            "llm-chat-clients",
            "target",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
}

/// An override whose target row a dataset import dropped is kept, inactive, and the
/// result of its selection says so (`warnings` at the top), computed and from the cache;
/// other selections say nothing.
#[test]
fn an_orphaned_override_is_a_warning_of_its_selection() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    drop_llama(&db, dir.path());
    for cache in ["miss", "hit"] {
        let (_, out, _) = rb(
            &db,
            &["evaluate", "llm-chat-clients", "--select", "opencode"],
        );
        let r: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(r["cache"], cache);
        let w = &r["warnings"][0];
        assert_eq!(w["kind"], "orphaned_override", "{r:#}");
        assert!(
            w["detail"].as_str().unwrap().contains("llama-3.3-70b"),
            "{w}"
        );
    }
    let (_, out, _) = rb(
        &db,
        &["evaluate", "llm-chat-clients", "--select", "t3-chat"],
    );
    let r: Value = serde_json::from_str(&out).unwrap();
    assert!(r.get("warnings").is_none(), "{r:#}");
    // Every selection at once (overrides read by keyHash; an orphaned one by its keys):
    // each result as `--select` gives it, the warning on opencode's alone.
    let (code, out, err) = rb(&db, &["evaluate", "llm-chat-clients", "--all"]);
    assert_eq!(code, 0, "{err}");
    let all: Vec<Value> = serde_json::from_str(&out).unwrap();
    for r in &all {
        let alone = rb(
            &db,
            &[
                "evaluate",
                "llm-chat-clients",
                "--select",
                r["selectionKey"].as_str().unwrap(),
            ],
        )
        .1;
        let mut alone: Value = serde_json::from_str(&alone).unwrap();
        let mut r = r.clone();
        for v in [&mut alone, &mut r] {
            let o = v.as_object_mut().unwrap();
            o.remove("cache");
            o.remove("evaluatedAt");
        }
        assert_eq!(r, alone, "--all equals --select");
    }
    let with: Vec<&Value> = all.iter().filter(|r| r.get("warnings").is_some()).collect();
    assert_eq!(with.len(), 1, "{out}");
    assert_eq!(with[0]["warnings"][0]["kind"], "orphaned_override");
}

/// An orphaned override is removed by naming its gone row as the override names it
/// (its key, or the key's value): `find_row` cannot find a row that is gone.
#[test]
fn an_orphaned_override_can_be_removed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    drop_llama(&db, dir.path());
    let (code, _, err) = rb(
        &db,
        &[
            "override",
            "rm",
            "llm-chat-clients",
            "--source",
            "opencode",
            "--target",
            "llama-3.3-70b",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = rb(&db, &["export", "llm-chat-clients"]);
    let page: Value = serde_json::from_str(&out).unwrap();
    assert!(
        page.get("overrides")
            .is_none_or(|o| o.as_array().unwrap().is_empty()),
        "{page}"
    );
}

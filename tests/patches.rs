//! Row patches: per-page field values layered over the rows they name by key, applied
//! wherever rows are evaluated, kept across dataset imports, shown as patched in the
//! Dataset pane, validated like rows, exported with the page.

mod common;

use common::rb;
use serde_json::{Value, json};

fn page() -> Value {
    json!({
        "format": "rulebench.page/v1", "id": "deploy", "name": "Deployments",
        "source": {"name": "Requests", "key": ["id"], "rows": [{"id": "strict", "mode": "strict"}]},
        "target": {"name": "Providers", "key": ["id"], "label": "name",
            "patches": [{"key": "id=hf", "set": {"citations": true},
                         "note": "our HuggingFace deployment runs a citing model"}],
            "rows": [
                {"id": "openai", "name": "OpenAI", "citations": true},
                {"id": "hf", "name": "HuggingFace", "citations": false},
                {"id": "local", "name": "Local", "citations": false}]},
        "rules": [{
            "id": "citations", "name": "Strict citations", "weight": 1, "category": "Modes",
            "logic": {"or": [{"!=": [{"var": "source.mode"}, "strict"]},
                             {"==": [{"var": "target.citations"}, true]}]}
        }]
    })
}

/// `rulebench dataset import deploy target FILE ARGS…`.
fn import_targets(
    db: &std::path::Path,
    file: &std::path::Path,
    args: &[&str],
) -> (i32, String, String) {
    let mut all = vec![
        "dataset",
        "import",
        "deploy",
        "target",
        file.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    rb(db, &all)
}

fn passes(db: &std::path::Path) -> Vec<(String, bool)> {
    let (code, out, err) = rb(db, &["evaluate", "deploy", "--select", "strict"]);
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    r["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_owned(),
                t["rules"]["citations"] == true,
            )
        })
        .collect()
}

#[test]
fn a_patch_applies_survives_a_reimport_and_is_exported() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let file = dir.path().join("deploy.json");
    std::fs::write(&file, serde_json::to_string_pretty(&page()).unwrap()).unwrap();
    let (code, _, err) = rb(&db, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let expected = vec![
        ("openai".to_owned(), true),
        ("hf".to_owned(), true),
        ("local".to_owned(), false),
    ];
    assert_eq!(passes(&db), expected, "the patch makes hf cite");
    // The explanation reads the patched value.
    let (_, out, _) = rb(
        &db,
        &[
            "explain", "deploy", "--select", "strict", "--target", "hf", "--format", "json",
        ],
    );
    let e: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(e["rules"][0]["fields"]["target.citations"], true, "{e:#}");
    // A dataset import of the upstream rows (no patch in them) keeps the patch.
    let rows = page()["target"]["rows"].clone();
    let data = dir.path().join("providers.json");
    std::fs::write(&data, rows.to_string()).unwrap();
    let (code, _, err) = import_targets(&db, &data, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(passes(&db), expected, "kept across the import");
    // Exported with the page: the rows as stored, the patch beside them.
    let (_, out, _) = rb(&db, &["export", "deploy"]);
    let exported: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(exported["target"]["patches"], page()["target"]["patches"]);
    assert_eq!(exported["target"]["rows"][1]["citations"], false);
    // The Dataset pane marks the patched row and shows its patched value.
    let app = rulebench::app::App::open(&db).unwrap();
    let ui = rulebench::tui::ui::Ui::new(app, Some("deploy"), rulebench::tui::theme::Theme::mono())
        .unwrap();
    let mut b = common::tui::Bench { dir, ui };
    b.chars("9z");
    let s = b.screen(140, 30);
    let hf = s
        .lines()
        .find(|l| l.contains("┃") && l.contains("HuggingFace"))
        .expect("the row");
    assert!(hf.contains('✎') && hf.contains("true"), "{s}");
    let local = s
        .lines()
        .find(|l| l.contains("┃") && l.contains("Local"))
        .unwrap();
    assert!(!local.contains('✎'), "{s}");
}

#[test]
fn patches_are_validated_like_rows() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let check = |patches: Value| -> Vec<Value> {
        let mut p = page();
        p["target"]["patches"] = patches;
        let file = dir.path().join("p.json");
        std::fs::write(&file, serde_json::to_string_pretty(&p).unwrap()).unwrap();
        let (_, out, _) = rb(&db, &["check", file.to_str().unwrap(), "--format", "json"]);
        serde_json::from_str(&out).unwrap()
    };
    let d = check(json!([{"key": "id=gone", "set": {"citations": true}}]));
    assert!(
        d.iter()
            .any(|d| d["code"] == "orphaned-patch" && d["severity"] == "warning"),
        "{d:#?}"
    );
    let d = check(json!([{"key": "id=hf", "set": {"citation": true}}]));
    let e = d
        .iter()
        .find(|d| d["code"] == "unknown-field")
        .expect("an error");
    assert_eq!(e["pointer"], "/target/patches/0/set/citation");
    assert!(e["hint"].as_str().unwrap().contains("citations"), "{e}");
    assert!(e["line"].as_u64().is_some(), "located: {e}");
    let d = check(json!([{"key": "id=hf", "set": {"id": "other"}}]));
    assert!(d.iter().any(|d| d["code"] == "patch-key-field"), "{d:#?}");
    // Two patches for one row: the second would be ignored in silence.
    let d = check(json!([{"key": "id=hf", "set": {"citations": true}},
                         {"key": "id=hf", "set": {"name": "HF"}}]));
    assert!(d.iter().any(|d| d["code"] == "duplicate-patch"), "{d:#?}");
}

/// Defaults fill first, then the patch sets what it sets (a patch to null stays null).
#[test]
fn the_patch_comes_after_the_defaults() {
    let mut d: rulebench_core::model::Dataset = serde_json::from_value(json!({
        "name": "T", "key": ["id"], "defaults": {"maxTokens": 4096},
        "patches": [{"key": "id=a", "set": {"maxTokens": null}}],
        "rows": [{"id": "a"}, {"id": "b"}]}))
    .unwrap();
    let a = d.effective_row(&d.rows[0]).into_owned();
    let b = d.effective_row(&d.rows[1]).into_owned();
    assert_eq!(a["maxTokens"], Value::Null);
    assert_eq!(b["maxTokens"], 4096);
    d.patches.clear();
    assert_eq!(d.effective_row(&d.rows[0])["maxTokens"], 4096);
}

/// A CSV import (rows not loaded to validate) of a page with a patch and no override
/// does not call the patch orphaned (its rows' keys are known).
#[test]
fn a_csv_import_sees_the_patched_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let file = dir.path().join("deploy.json");
    std::fs::write(&file, serde_json::to_string_pretty(&page()).unwrap()).unwrap();
    assert_eq!(rb(&db, &["import", file.to_str().unwrap()]).0, 0);
    let csv = dir.path().join("providers.csv");
    std::fs::write(
        &csv,
        "id,name,citations\nopenai,OpenAI,true\nhf,HuggingFace,false\n",
    )
    .unwrap();
    let (code, _, err) = import_targets(&db, &csv, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("orphaned-patch"), "{err}");
}

/// A linked data file reloaded after it changed: the patch still applies.
#[test]
fn a_patch_survives_a_linked_file_reload() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let file = dir.path().join("deploy.json");
    std::fs::write(&file, serde_json::to_string_pretty(&page()).unwrap()).unwrap();
    let (code, _, err) = rb(&db, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let data = dir.path().join("providers.json");
    std::fs::write(&data, page()["target"]["rows"].to_string()).unwrap();
    let (code, _, err) = import_targets(&db, &data, &["--link"]);
    assert_eq!(code, 0, "{err}");
    // Upstream adds a provider; the file is reloaded.
    let mut rows = page()["target"]["rows"].as_array().unwrap().clone();
    rows.push(json!({"id": "new", "name": "New", "citations": false}));
    std::fs::write(&data, Value::Array(rows).to_string()).unwrap();
    let mut app = rulebench::app::App::open(&db).unwrap();
    app.reload_linked("deploy", rulebench_core::model::Side::Target)
        .unwrap();
    let hf: Vec<(String, bool)> = passes(&db)
        .into_iter()
        .filter(|(id, _)| id == "hf" || id == "new")
        .collect();
    assert_eq!(hf, [("hf".to_owned(), true), ("new".to_owned(), false)]);
}

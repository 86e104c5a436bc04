//! "Does not apply": a rule's `appliesWhen` condition, where falsy, makes its outcome
//! n/a — out of the passed and the total weight, never a required failure, `null` in
//! the result's `rules`, explained, stored and exported as written.

mod common;

use common::rb;
use serde_json::{Value, json};

/// Two apps (one needs vision, one does not) and three models; "Vision" applies only
/// where the app needs it, written three ways across three rules.
fn page() -> Value {
    json!({
        "format": "rulebench.page/v1", "id": "na", "name": "N/A",
        "source": {"name": "Apps", "key": ["id"], "rows": [
            {"id": "photo", "needsVision": true, "needsTools": true},
            {"id": "text", "needsVision": false, "needsTools": false}
        ]},
        "target": {"name": "Models", "key": ["id"], "rows": [
            {"id": "both", "vision": true, "tools": true, "context": 200000},
            {"id": "tools-only", "vision": false, "tools": true, "context": 8000},
            {"id": "neither", "vision": false, "tools": false, "context": 4000}
        ]},
        "rules": [
            {"id": "vision", "name": "Vision", "weight": 2,
             "appliesWhen": "source.needsVision == true",
             "logic": {"==": [{"var": "target.vision"}, true]}},
            {"id": "tools", "name": "Tools", "required": true,
             "appliesWhen": {"predicates": [{"field": "source.needsTools", "operator": "==", "value": true}]},
             "logic": {"==": [{"var": "target.tools"}, true]}},
            {"id": "context", "name": "Context", "weight": 1,
             "appliesWhen": {"!!": [{"var": "source.needsVision"}]},
             "logic": {">=": [{"var": "target.context"}, 100000]}}
        ],
        "devicePolicy": {"requiredMode": "ANY_REQUIRED_FAIL_IS_0", "fullThreshold": 1, "partialThreshold": 0.4}
    })
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rb.db");
    let file = dir.path().join("na.json");
    std::fs::write(&file, page().to_string()).unwrap();
    let (code, _, err) = rb(&db, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    (dir, db)
}

fn evaluate(db: &std::path::Path, source: &str) -> Value {
    let (code, out, err) = rb(
        db,
        &["evaluate", "na", "--select", source, "--format", "json"],
    );
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn target<'a>(result: &'a Value, id: &str) -> &'a Value {
    result["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no target {id} in {result}"))
}

#[test]
fn a_rule_that_does_not_apply_is_null_and_out_of_the_score() {
    let (_dir, db) = setup();
    // Where every rule applies, nothing changes: both pass → 3/3.
    let photo = evaluate(&db, "id=photo");
    let both = target(&photo, "both");
    assert_eq!(
        both["rules"],
        json!({"vision": true, "tools": true, "context": true})
    );
    assert_eq!(
        (both["verdict"].as_i64(), both["score"].as_f64()),
        (Some(2), Some(1.0))
    );
    // tools-only: vision (2) and context (1) fail → 0 of 3, low score.
    let t = target(&photo, "tools-only");
    assert_eq!(
        (t["score"].as_f64(), t["reason"].as_str()),
        (Some(0.0), Some("low-score"))
    );
    // `neither` fails the required Tools rule.
    assert_eq!(target(&photo, "neither")["reason"], "required-fail");

    // For the text app no rule applies: every outcome is null, no required failure,
    // and with no weighted rule that applies the score is 1.
    let text = evaluate(&db, "id=text");
    for id in ["both", "tools-only", "neither"] {
        let t = target(&text, id);
        assert_eq!(
            t["rules"],
            json!({"vision": null, "tools": null, "context": null}),
            "{id}"
        );
        assert_eq!(
            (
                t["verdict"].as_i64(),
                t["score"].as_f64(),
                t["reason"].as_str()
            ),
            (Some(2), Some(1.0), Some("full")),
            "{id}: nothing applies, so nothing fails"
        );
    }
    // The cached result reads back with its n/a outcomes.
    let again = evaluate(&db, "id=text");
    assert_eq!(again["cache"], "hit");
    assert_eq!(again["targets"], text["targets"]);
    let again = evaluate(&db, "id=photo");
    assert_eq!(again["targets"], photo["targets"]);
}

#[test]
fn explain_says_why_a_rule_does_not_apply() {
    let (_dir, db) = setup();
    let (code, out, err) = rb(
        &db,
        &[
            "explain", "na", "--select", "id=text", "--target", "neither", "--format", "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let e: Value = serde_json::from_str(&out).unwrap();
    let vision = e["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "vision")
        .unwrap();
    assert_eq!(vision["applies"], false);
    let sentence = vision["sentence"].as_str().unwrap();
    assert!(sentence.starts_with("does not apply: "), "{sentence}");
    assert!(sentence.contains("source.needsVision"), "{sentence}");
    // Rules that do not apply come last.
    let last = e["rules"].as_array().unwrap().last().unwrap();
    assert_eq!(last["applies"], false);
    // As text: marked `–`, not as a failure, with the condition's tree under --tree.
    let (code, out, err) = rb(
        &db,
        &[
            "explain", "na", "--select", "id=text", "--target", "neither", "--tree",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let vision = out.lines().find(|l| l.contains("Vision")).unwrap();
    assert!(vision.starts_with("– Vision"), "{out}");
    assert!(out.contains("applies when:"), "{out}");
}

#[test]
fn applies_when_is_stored_and_exported_as_written() {
    let (_dir, db) = setup();
    let exported = common::export_page(&db, "na");
    let rules = exported["rules"].as_array().unwrap();
    // The infix text stays text; JSONLogic stays JSONLogic; predicates are read as
    // JSONLogic (as a rule's own predicates are).
    assert_eq!(rules[0]["appliesWhen"], "source.needsVision == true");
    assert_eq!(
        rules[2]["appliesWhen"],
        json!({"!!": [{"var": "source.needsVision"}]})
    );
    assert!(rules[1]["appliesWhen"].is_object(), "{}", rules[1]);
    // The export imports back to the same outcomes.
    let dir = tempfile::tempdir().unwrap();
    let db2 = dir.path().join("rb.db");
    let file = dir.path().join("again.json");
    std::fs::write(&file, exported.to_string()).unwrap();
    let (code, _, err) = rb(&db2, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    for source in ["id=photo", "id=text"] {
        let again = evaluate(&db2, source);
        let mut first = evaluate(&db, source);
        for k in ["evaluatedAt", "revisionId", "cache"] {
            first[k] = again[k].clone();
        }
        assert_eq!(first, again, "{source}");
    }
}

#[test]
fn a_condition_that_does_not_parse_or_names_no_field_is_refused_where_it_stands() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rb.db");
    for (condition, wants) in [
        (json!("source.needsVision =="), "appliesWhen"),
        (
            json!({"==": [{"var": "source.needsVisoin"}, true]}),
            "/rules/0/appliesWhen",
        ),
    ] {
        let mut p = page();
        p["rules"][0]["appliesWhen"] = condition;
        let file = dir.path().join("bad.json");
        std::fs::write(&file, p.to_string()).unwrap();
        let (code, out, err) = rb(&db, &["import", file.to_str().unwrap()]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.contains(wants), "{err}");
    }
}

/// A rule whose logic reads the targets only and whose condition reads the source is
/// not one-sided (the lint judged the logic alone and warned); a rule without a
/// condition that reads one side still is.
#[test]
fn a_condition_on_the_source_makes_a_target_only_rule_two_sided() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rb.db");
    let mut p = page();
    p["rules"].as_array_mut().unwrap().push(
        json!({"id": "big", "name": "Big", "logic": {">=": [{"var": "target.context"}, 100000]}}),
    );
    let file = dir.path().join("na.json");
    std::fs::write(&file, p.to_string()).unwrap();
    // `check` prints its findings on stdout.
    let (code, out, err) = rb(&db, &["check", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let one_sided: Vec<&str> = out.lines().filter(|l| l.contains("one-sided")).collect();
    assert_eq!(one_sided.len(), 1, "{out}");
    assert!(one_sided[0].contains("/rules/3/logic"), "{out}");
    // The explanation (and the workbench, which shows it) judges the rule alike.
    let (code, _, err) = rb(&db, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = rb(
        &db,
        &[
            "explain", "na", "--select", "id=photo", "--target", "both", "--format", "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let e: Value = serde_json::from_str(&out).unwrap();
    let lints = |id: &str| -> Vec<String> {
        e["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap()["lint"]
            .as_array()
            .map(|l| l.iter().map(|d| d["code"].to_string()).collect())
            .unwrap_or_default()
    };
    assert!(
        !lints("vision").iter().any(|c| c.contains("one-sided")),
        "{out}"
    );
    assert!(
        lints("big").iter().any(|c| c.contains("one-sided")),
        "{out}"
    );
}

/// `diff` names a cell that stops applying as `n/a`, and an assertion's JSONPath sees
/// the rule's `null`.
#[test]
fn diff_and_assertions_see_rules_that_do_not_apply() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rb.db");
    let mut old = page();
    old["rules"][0]
        .as_object_mut()
        .unwrap()
        .remove("appliesWhen");
    let (old_file, new_file) = (dir.path().join("old.json"), dir.path().join("new.json"));
    std::fs::write(&old_file, old.to_string()).unwrap();
    let mut new = page();
    new["assertions"] = json!([
        {"id": "vision-na", "select": "id=text", "path": "$.targets[0].rules.vision",
         "matcher": "toBeNull"}
    ]);
    std::fs::write(&new_file, new.to_string()).unwrap();
    let (code, out, err) = rb(
        &db,
        &[
            "diff",
            old_file.to_str().unwrap(),
            new_file.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert!(code == 0 || code == 1, "{err}");
    assert!(out.contains("\"n/a\""), "{out}");
    let (code, out, err) = rb(&db, &["test", new_file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
}

/// Regression: a field only some source rows have, read by a rule whose `appliesWhen`
/// holds it present, got the `partial-field` warning (in the logic and in the
/// condition); the condition is its guard. Unguarded, it is still warned.
#[test]
fn a_condition_that_tests_a_field_is_its_guard() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rb.db");
    let page = |condition: Value| {
        json!({
            "format": "rulebench.page/v1", "id": "latency", "name": "Latency",
            "source": {"name": "Apps", "key": ["id"], "rows": [
                {"id": "fast", "maxLatencyMs": 500}, {"id": "any"}]},
            "target": {"name": "Models", "key": ["id"], "rows": [
                {"id": "m", "latencyMs": 300}]},
            "rules": [{"id": "latency", "name": "Latency", "appliesWhen": condition,
                       "expression": "target.latencyMs <= source.maxLatencyMs"}]
        })
    };
    let check = |condition: Value| -> String {
        let file = dir.path().join("p.json");
        std::fs::write(&file, page(condition).to_string()).unwrap();
        let (code, out, err) = rb(&db, &["check", file.to_str().unwrap()]);
        assert_eq!(code, 0, "{out}{err}");
        out
    };
    for guard in [
        json!("source.maxLatencyMs != null"),
        json!({"!!": {"var": "source.maxLatencyMs"}}),
        json!({"and": [{"var": "source.maxLatencyMs"}, true]}),
    ] {
        let out = check(guard.clone());
        assert!(!out.contains("partial-field"), "{guard}: {out}");
    }
    // A condition that does not test the field guards nothing.
    let out = check(json!("source.id != \"x\""));
    assert!(
        out.contains("partial-field") && out.contains("/rules/0/logic"),
        "{out}"
    );
}

/// The workbench's rule form edits `appliesWhen`: the rule's column is computed again
/// (n/a where the condition is false), stored as written (and exported so); a condition
/// that does not read is refused, and one changed elsewhere meanwhile is not written
/// over.
#[test]
fn the_rule_form_edits_applies_when() {
    use rulebench::app::App;
    use rulebench::app::workspace::Session;
    let (dir, db) = setup();
    let app = App::open(&db).unwrap();
    let mut ws = Session::open(&app, "na").unwrap();
    let i = ws
        .page
        .rules
        .iter()
        .position(|r| r.id == "context")
        .unwrap();
    // Shown as written, here JSONLogic (infix has no `!!`).
    assert_eq!(
        ws.condition_text(i),
        r#"{"!!":[{"var":"source.needsVision"}]}"#
    );
    let r = ws.page.rules[i].clone();
    // Regression: a weight edit rewrote a JSONLogic condition shown in the form (`vision`
    // is written as infix there, `tools` as a predicate list stored as JSONLogic).
    let tools = ws.page.rules.iter().position(|r| r.id == "tools").unwrap();
    let t = ws.page.rules[tools].clone();
    let shown = ws.condition_text(tools);
    ws.update_rule_meta(tools, &t.name, t.required, 3.0, &t.category, &shown)
        .unwrap();
    let stored = common::export_page(&db, "na")["rules"][tools]["appliesWhen"].clone();
    assert_eq!(
        stored,
        json!({"==": [{"var": "source.needsTools"}, true]}),
        "kept as written, not rewritten as the infix the form shows ({shown})"
    );
    let photo = ws
        .page
        .source
        .rows
        .iter()
        .position(|r| r["id"] == "photo")
        .unwrap();
    let text = 1 - photo;
    ws.select(text);
    let na = rulebench::app::types::NOT_APPLICABLE;
    assert!(ws.eval.columns[i].outcome.iter().all(|&o| o == na));
    // The text app needs no vision: with this condition Context applies to it.
    ws.update_rule_meta(
        i,
        &r.name,
        r.required,
        r.weight,
        &r.category,
        "source.needsVision == false",
    )
    .unwrap();
    assert!(
        ws.eval.columns[i].outcome.iter().all(|&o| o != na),
        "{:?}",
        ws.eval.columns[i].outcome
    );
    assert_eq!(ws.condition_text(i), "source.needsVision == false");
    let exported = common::export_page(&db, "na");
    assert_eq!(
        exported["rules"][i]["appliesWhen"],
        json!("source.needsVision == false")
    );
    // A condition naming a field no row has, or not reading, is refused; nothing changes.
    for bad in ["source.needsVison == true", "source.needsVision =="] {
        let e = ws
            .update_rule_meta(i, &r.name, r.required, r.weight, &r.category, bad)
            .unwrap_err();
        assert!(matches!(e, rulebench::app::AppError::Invalid { .. }), "{e}");
    }
    assert_eq!(
        common::export_page(&db, "na")["rules"][i]["appliesWhen"],
        json!("source.needsVision == false")
    );
    // Changed elsewhere meanwhile: a weight edit here keeps theirs (not written over),
    // and a condition edit here is refused.
    let mut theirs = exported["rules"][i].clone();
    theirs["appliesWhen"] = json!("source.needsTools == true");
    let file = dir.path().join("theirs.json");
    std::fs::write(&file, theirs.to_string()).unwrap();
    let (code, _, err) = rb(
        &db,
        &["rule", "add", "na", file.to_str().unwrap(), "--replace"],
    );
    assert_eq!(code, 0, "{err}");
    let e = ws
        .update_rule_meta(i, &r.name, r.required, r.weight, &r.category, "true")
        .unwrap_err();
    assert!(e.to_string().contains("changed elsewhere meanwhile"), "{e}");
    ws.update_rule_meta(
        i,
        &r.name,
        r.required,
        2.0,
        &r.category,
        "source.needsVision == false",
    )
    .unwrap();
    let after = common::export_page(&db, "na");
    assert_eq!(after["rules"][i]["weight"], json!(2));
    assert_eq!(
        after["rules"][i]["appliesWhen"],
        json!("source.needsTools == true")
    );
    // …and the session now judges the rule by theirs.
    assert_eq!(ws.condition_text(i), "source.needsTools == true");
}

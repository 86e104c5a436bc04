//! `rulebench diff OLD NEW`: definition changes and outcome moves between page files
//! and stored pages, checked against `evaluate` of each side.

mod common;
use common::rb;

use serde_json::{Value, json};

const LLM: &str = "llm-chat-clients";

fn export(db: &std::path::Path, page: &str) -> Value {
    let (code, out, err) = rb(db, &["export", page]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// Per selection key and target id: (verdict, score), from `evaluate --all`.
fn outcomes(
    db: &std::path::Path,
    page: &str,
) -> std::collections::BTreeMap<(String, String), (u64, f64)> {
    let (code, out, err) = rb(db, &["evaluate", page, "--all", "--format", "summary"]);
    assert_eq!(code, 0, "{err}");
    let mut map = std::collections::BTreeMap::new();
    for line in out.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        for t in r["targets"].as_array().unwrap() {
            map.insert(
                (
                    r["selectionKey"].as_str().unwrap().to_owned(),
                    format!("id={}", t["id"].as_str().unwrap()),
                ),
                (t["verdict"].as_u64().unwrap(), t["score"].as_f64().unwrap()),
            );
        }
    }
    map
}

#[test]
fn a_page_against_itself_has_no_change_and_exit_code_zero() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let file = dir.path().join("same.json");
    std::fs::write(&file, serde_json::to_string(&export(&db, LLM)).unwrap()).unwrap();
    let (code, out, err) = rb(&db, &["diff", file.to_str().unwrap(), LLM, "--exit-code"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("definition: no change"), "{out}");
    assert!(out.contains("outcomes: 0 of 7 selections moved"), "{out}");
    // `--all` says the default out loud; it and `--select` exclude each other.
    let (code, all, _) = rb(&db, &["diff", file.to_str().unwrap(), LLM, "--all"]);
    assert_eq!((code, all), (0, out));
    let (code, _, err) = rb(&db, &["diff", LLM, LLM, "--all", "--select", "t3-chat"]);
    assert_eq!(code, 2, "{err}");
}

/// A stored page's revisions diff like files: `PAGE@-1` against `PAGE` after a rule
/// change reports that change, and `PAGE@1` against itself nothing.
#[test]
fn revisions_diff_like_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let (code, _, err) = rb(&db, &["rule", "rm", LLM, "price-budget"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = rb(
        &db,
        &[
            "diff",
            &format!("{LLM}@-1"),
            LLM,
            "--format",
            "md",
            "--exit-code",
        ],
    );
    assert_eq!(code, 1, "a verdict moved: {err}");
    assert!(out.contains("price-budget"), "{out}");
    let (code, out, _) = rb(&db, &["diff", &format!("{LLM}@1"), &format!("{LLM}@1")]);
    assert_eq!(code, 0);
    assert!(out.contains("definition: no change"), "{out}");
}

/// A policy change and a rule edit: every target the diff reports moved is one whose
/// verdict or score differs between `evaluate` of the two versions, and none is missed.
#[test]
fn outcome_moves_agree_with_evaluating_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let before = dir.path().join("before.json");
    std::fs::write(&before, serde_json::to_string(&export(&db, LLM)).unwrap()).unwrap();
    let old = outcomes(&db, LLM);
    // Change the stored page: a threshold and a rule's logic.
    assert_eq!(rb(&db, &["policy", "set", LLM, "fullThreshold=0.8"]).0, 0);
    let mut page = export(&db, LLM);
    let rules = page["rules"].as_array_mut().unwrap();
    let i = rules
        .iter()
        .position(|r| r["id"] == "price-budget")
        .expect("a price rule");
    rules[i]["logic"] = json!({"!": rules[i]["logic"].clone()});
    let rule = dir.path().join("rule.json");
    std::fs::write(&rule, rules[i].to_string()).unwrap();
    assert_eq!(
        rb(
            &db,
            &["rule", "add", LLM, rule.to_str().unwrap(), "--replace"]
        )
        .0,
        0
    );
    let new = outcomes(&db, LLM);

    let (code, out, err) = rb(
        &db,
        &[
            "diff",
            before.to_str().unwrap(),
            LLM,
            "--format",
            "json",
            "--exit-code",
        ],
    );
    assert_eq!(code, 1, "verdicts moved: {err}");
    let d: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(d["verdictsMoved"], true);
    let diff = &d["diff"];
    assert_eq!(diff["rules"]["changed"][0][0], "price-budget");
    assert_eq!(diff["rules"]["changed"][0][1], json!(["logic"]));
    assert_eq!(diff["policies"][0][0], "devicePolicy.fullThreshold");
    let mut reported = std::collections::BTreeSet::new();
    for s in diff["selections"].as_array().unwrap() {
        for t in s["targets"].as_array().unwrap() {
            let key = (
                s["selection"].as_str().unwrap().to_owned(),
                t["target"].as_str().unwrap().to_owned(),
            );
            let (a, b) = (old[&key], new[&key]);
            assert_eq!(
                (
                    t["verdict"]["old"].as_u64().unwrap(),
                    t["verdict"]["new"].as_u64().unwrap()
                ),
                (a.0, b.0),
                "{key:?}"
            );
            assert_eq!(t["score"]["new"].as_f64().unwrap(), b.1, "{key:?}");
            // A flip of the edited rule is named whenever its cell changed.
            for f in t["flips"].as_array().unwrap() {
                assert_eq!(f["rule"], "price-budget", "only the edited rule flips: {f}");
                assert_ne!(f["old"], f["new"]);
            }
            reported.insert(key);
        }
    }
    let moved: std::collections::BTreeSet<_> = old
        .iter()
        .filter(|(k, a)| new[*k] != **a)
        .map(|(k, _)| k.clone())
        .collect();
    assert!(
        moved.is_subset(&reported),
        "missed: {:?}",
        moved.difference(&reported).collect::<Vec<_>>()
    );
    assert!(!moved.is_empty());

    // Markdown for a pull request; text; one selection only.
    let (code, md, _) = rb(
        &db,
        &["diff", before.to_str().unwrap(), LLM, "--format", "md"],
    );
    assert_eq!(code, 0, "without --exit-code");
    assert!(md.starts_with("### rulebench diff:"), "{md}");
    assert!(
        md.contains("| target | verdict | score | cells that flip |"),
        "{md}"
    );
    let (code, one, _) = rb(
        &db,
        &["diff", before.to_str().unwrap(), LLM, "--select", "t3-chat"],
    );
    assert_eq!(code, 0);
    assert!(one.contains("of 1 selections"), "{one}");
    let (code, _, err) = rb(
        &db,
        &["diff", before.to_str().unwrap(), LLM, "--select", "nope"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("nope"), "{err}");
}

/// Rules, overrides and rows added or removed are listed; a target only on one side
/// is a row change, not an outcome move.
#[test]
fn added_and_removed_rules_rows_and_overrides_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let old = export(&db, LLM);
    let mut new = old.clone();
    new["rules"].as_array_mut().unwrap().remove(0);
    new["overrides"] = json!([]);
    let rows = new["target"]["rows"].as_array_mut().unwrap();
    let gone = rows.remove(1)["id"].clone();
    let mut extra = rows[0].clone();
    extra["id"] = json!("new-model");
    rows.push(extra);
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, old.to_string()).unwrap();
    std::fs::write(&b, new.to_string()).unwrap();
    let (code, out, err) = rb(&db, &["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("rules removed (1): streaming"), "{out}");
    assert!(out.contains("overrides removed (1)"), "{out}");
    assert!(
        out.contains(&format!(
            "target rows removed (1): id={}",
            gone.as_str().unwrap()
        )),
        "{out}"
    );
    assert!(out.contains("target rows added (1): id=new-model"), "{out}");
    assert!(!out.contains("new-model:"), "not an outcome move: {out}");
    // Removing a rule flips its cells to absent where it was there.
    assert!(
        out.contains("streaming pass → absent") || out.contains("streaming fail → absent"),
        "{out}"
    );
}

/// Markdown for a pull request escapes what a renderer would read as markup (a rule id
/// `<!--` once commented out the rest of the comment), and a selection where only the
/// recommendation moved has no empty table.
#[test]
fn markdown_escapes_markup_in_ids() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let old = export(&db, LLM);
    let mut new = old.clone();
    let rules = new["rules"].as_array_mut().unwrap();
    let mut evil = rules[0].clone();
    evil["id"] = json!("<!--");
    evil["name"] = json!("Evil **bold**");
    evil["logic"] = json!({"!": evil["logic"].clone()});
    rules.push(evil);
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, old.to_string()).unwrap();
    std::fs::write(&b, new.to_string()).unwrap();
    let (code, md, err) = rb(
        &db,
        &[
            "diff",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--format",
            "md",
        ],
    );
    assert_eq!(code, 0, "{err}");
    // Raw only inside code spans (which renderers show as they are).
    assert_eq!(
        md.matches("<!--").count(),
        md.matches("`<!--`").count(),
        "{md}"
    );
    assert!(md.contains("&lt;!--"), "the flips column escapes it: {md}");
    assert!(
        !md.contains("| target | verdict | score | cells that flip |\n\n"),
        "{md}"
    );
}

//! Coverage of rules by tests (`rulebench test PAGE --coverage`): the condition counts
//! equal what the explanation trees say pair by pair; every mutant's fate is checked by
//! the engine (a killed mutant makes its assertion fail, a survivor changes the rule's
//! outcome on the pair it names and fails no assertion, an equivalent one changes no
//! outcome); `--fail-under` sets the exit code.

mod common;

use common::rb;
use rulebench_core::assertions::{self, Limits};
use rulebench_core::matrix::Matrix;
use rulebench_core::model::Page;
use serde_json::{Value, json};

/// Two rules with branches, a required one; one source pinned by assertions, so that
/// some mutants go unnoticed (they change outcomes of the other sources only, or of no
/// verdict).
fn page() -> Value {
    json!({
        "format": "rulebench.page/v1", "id": "cov", "name": "Coverage",
        "source": {"name": "Apps", "key": ["id"], "rows": [
            {"id": "s1", "minSpeed": 10, "relaxed": false, "region": "eu"},
            {"id": "s2", "minSpeed": 50, "relaxed": true, "region": "us"},
            {"id": "s3", "minSpeed": 20, "relaxed": false, "region": "eu"}
        ]},
        "target": {"name": "Models", "key": ["id"], "rows": [
            {"id": "t1", "speed": 10, "price": 5, "region": "eu"},
            {"id": "t2", "speed": 60, "price": 20, "region": "us"},
            {"id": "t3", "speed": 30, "price": 8, "region": "eu"},
            {"id": "t4", "speed": 5, "price": 1, "region": "eu"}
        ]},
        "rules": [
            {"id": "fast", "name": "Fast and cheap", "weight": 2,
             "logic": {"and": [
                 {">=": [{"var": "target.speed"}, {"var": "source.minSpeed"}]},
                 {"or": [{"var": "source.relaxed"}, {"<": [{"var": "target.price"}, 10]}]}
             ]}},
            {"id": "region", "name": "Region", "required": true,
             "logic": {"==": [{"var": "target.region"}, {"var": "source.region"}]}},
            {"id": "cheap", "name": "Cheap", "weight": 1,
             "logic": {"<=": [{"var": "target.price"}, 20]}}
        ]
    })
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let file = dir.path().join("cov.json");
    std::fs::write(&file, page().to_string()).unwrap();
    assert_eq!(rb(&db, &["import", file.to_str().unwrap()]).0, 0);
    let (code, _, err) = rb(&db, &["test", "cov", "--pin", "--select", "s1"]);
    assert_eq!(code, 0, "{err}");
    (dir, db)
}

fn stored(db: &std::path::Path) -> Page {
    let v = common::export_page(db, "cov");
    rulebench_core::read::page_all(&v.to_string()).0.unwrap()
}

fn report(db: &std::path::Path) -> Value {
    let (code, out, err) = rb(db, &["test", "cov", "--coverage", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// The explanation node at a coverage pointer (`/and/1/or/0`).
fn node<'a>(
    root: &'a rulebench_core::explain::Node,
    pointer: &str,
) -> &'a rulebench_core::explain::Node {
    let tokens: Vec<&str> = pointer.split('/').skip(1).collect();
    let mut n = root;
    let mut i = 0;
    while i < tokens.len() {
        // An operation's token, then the argument's index (none for a lone argument).
        match tokens.get(i + 1).and_then(|t| t.parse::<usize>().ok()) {
            Some(k) => {
                n = &n.children[k];
                i += 2;
            }
            None => {
                n = &n.children[0];
                i += 1;
            }
        }
    }
    n
}

#[test]
fn condition_counts_are_what_the_explanations_say() {
    let (_dir, db) = setup();
    let page = stored(&db);
    let r = report(&db);
    assert_eq!(r["selections"], 1);
    assert_eq!(r["pairs"], 4);
    let checked = cross_check(&page, &r);
    // The branching rule's conditions: the rule, both arguments of `and`, both of `or`.
    assert_eq!(checked, 1 + 4 + 1 + 1, "{r}");
    // Short-circuits show: `source.relaxed` is reached only where the speed holds.
    let relaxed = &r["rules"][0]["conditions"][3];
    assert_eq!(relaxed["pointer"], "/and/1/or/0");
    assert!(relaxed["evaluated"].as_u64() < r["rules"][0]["conditions"][1]["evaluated"].as_u64());
}

/// Literal arguments decide short-circuits too (`false and X` never reaches X), and a
/// per-item argument (`some`'s test) is not measured on pairs.
#[test]
fn literal_arguments_and_per_item_tests_are_counted_as_the_engine_runs_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let mut v = page();
    v["rules"] = json!([
        {"id": "never-reached", "name": "A", "weight": 1,
         "logic": {"and": [false, {"==": [{"var": "target.region"}, "eu"]}]}},
        {"id": "short-or", "name": "B", "weight": 1,
         "logic": {"or": [true, {"==": [{"var": "target.region"}, "eu"]}]}},
        {"id": "any-fast", "name": "C", "weight": 1,
         "logic": {"some": [[10, 60], {">=": [{"var": ""}, {"var": "target.speed"}]}]}}
    ]);
    let file = dir.path().join("cov.json");
    std::fs::write(&file, v.to_string()).unwrap();
    assert_eq!(rb(&db, &["import", file.to_str().unwrap()]).0, 0);
    let (code, _, err) = rb(&db, &["test", "cov", "--pin", "--select", "s1"]);
    assert_eq!(code, 0, "{err}");
    let page = stored(&db);
    let r = report(&db);
    cross_check(&page, &r);
    assert_eq!(r["rules"][0]["conditions"][1]["evaluated"], 0, "{r}");
    assert_eq!(r["rules"][1]["conditions"][1]["evaluated"], 0, "{r}");
    // `some`: the rule alone (its test reads the item, not the pair).
    let some: Vec<&str> = r["rules"][2]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["pointer"].as_str().unwrap())
        .collect();
    assert_eq!(some, [""], "{r}");
}

/// Checks every condition's counts against the explanation trees of the first source's
/// pairs (the one the assertions select); returns how many conditions it checked.
fn cross_check(page: &Page, r: &Value) -> usize {
    let s1 = page.source.rows[0].clone();
    let mut checked = 0;
    for (i, rule) in page.rules.iter().enumerate() {
        let rc = &r["rules"][i];
        assert_eq!(rc["rule"], rule.id.as_str());
        for c in rc["conditions"].as_array().unwrap() {
            let (mut evaluated, mut truthy, mut falsy, mut decisive) = (0, 0, 0, 0);
            let pointer = c["pointer"].as_str().unwrap();
            for t in &page.target.rows {
                let e = rulebench_core::explain::explain(
                    rule,
                    &Value::Object(s1.clone()),
                    &Value::Object(t.clone()),
                );
                let n = node(&e.tree, pointer);
                if !n.evaluated {
                    continue;
                }
                evaluated += 1;
                if n.pass == Some(true) {
                    truthy += 1;
                } else {
                    falsy += 1;
                }
                // Decisive: the rule with this node negated has another outcome.
                let mut negated = rule.clone();
                let slot = if pointer.is_empty() {
                    &mut negated.logic
                } else {
                    negated.logic.pointer_mut(pointer).unwrap()
                };
                *slot = json!({"!": [slot.clone()]});
                let m = rulebench_core::explain::explain(
                    &negated,
                    &Value::Object(s1.clone()),
                    &Value::Object(t.clone()),
                );
                decisive += u64::from(m.passed != e.passed);
            }
            assert_eq!(
                (
                    c["evaluated"].as_u64(),
                    c["truthy"].as_u64(),
                    c["falsy"].as_u64(),
                    c["decisive"].as_u64()
                ),
                (Some(evaluated), Some(truthy), Some(falsy), Some(decisive)),
                "{} {pointer}",
                rule.id
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn every_mutant_fate_holds_by_the_engine() {
    let (_dir, db) = setup();
    let page = stored(&db);
    let r = report(&db);
    let limits = Limits::default();
    let run = |p: &Page| {
        assertions::run_in_memory(p, 0, "", &limits)
            .unwrap()
            .results
    };
    let before = run(&page);
    assert!(before.iter().all(|a| a.passed));
    let mut fates = std::collections::BTreeMap::new();
    for m in r["mutants"].as_array().unwrap() {
        let i = page.rules.iter().position(|x| x.id == m["rule"]).unwrap();
        let mut mutated = page.clone();
        mutated.rules[i].logic = m["logic"].clone();
        mutated.rules[i].expression = None;
        let after = run(&mutated);
        let status = m["status"].as_str().unwrap();
        *fates.entry(status.to_owned()).or_insert(0) += 1;
        match status {
            "killed" => {
                let id = m["assertionId"].as_str().unwrap();
                let a = after.iter().find(|a| a.assertion_id == id).unwrap();
                assert!(!a.passed, "{m}");
            }
            "survived" | "equivalent" => {
                assert!(after.iter().all(|a| a.passed), "{m}");
                // The rule's outcomes on every pair, before and with the mutant.
                let outcomes = |p: &Page| {
                    let mut mx = Matrix::new(p).unwrap();
                    (0..p.source.rows.len())
                        .map(|s| {
                            mx.columns(s)[i]
                                .outcome
                                .iter()
                                .map(|o| o.counted())
                                .collect::<Vec<_>>()
                        })
                        .collect::<Vec<_>>()
                };
                let (was, now) = (outcomes(&page), outcomes(&mutated));
                if status == "equivalent" {
                    assert_eq!(was, now, "{m}");
                } else {
                    let s = page
                        .source
                        .rows
                        .iter()
                        .position(|x| page.source.row_key(x) == m["source"].as_str().unwrap())
                        .unwrap();
                    let t = page
                        .target
                        .rows
                        .iter()
                        .position(|x| page.target.row_id(x) == m["target"].as_str().unwrap())
                        .unwrap();
                    assert_ne!(was[s][t], now[s][t], "{m}");
                    let verdict = |p: &Page| {
                        Matrix::new(p).unwrap().evaluate(s).devices[t]
                            .verdict
                            .number()
                    };
                    assert_eq!(m["verdict"], verdict(&page), "{m}");
                    assert_eq!(m["mutantVerdict"], verdict(&mutated), "{m}");
                }
            }
            other => panic!("{other}"),
        }
    }
    // Every kind of mutant is made.
    let kinds: std::collections::BTreeSet<&str> = r["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["boundary", "drop", "flip", "negate", "shift"]
            .into_iter()
            .collect()
    );
    // The page holds each fate (not a vacuous pass).
    assert!(fates.get("killed").is_some_and(|&n| n > 0), "{fates:?}");
    assert!(fates.get("survived").is_some_and(|&n| n > 0), "{fates:?}");
    let killed = r["killed"].as_f64().unwrap();
    let survived = r["survived"].as_f64().unwrap();
    let score = r["mutationScore"].as_f64().unwrap();
    assert!((score - killed * 100.0 / (killed + survived)).abs() < 1e-9);
}

#[test]
fn fail_under_sets_the_exit_code_and_the_formats_print() {
    let (_dir, db) = setup();
    let score = report(&db)["mutationScore"].as_f64().unwrap();
    assert!(score > 0.0 && score < 100.0, "{score}");
    let (code, _, err) = rb(&db, &["test", "cov", "--coverage", "--fail-under", "100"]);
    assert_eq!(code, 1);
    assert!(err.contains("is under 100%"), "{err}");
    let low = format!("{}", (score - 1.0).floor());
    let (code, out, _) = rb(&db, &["test", "cov", "--coverage", "--fail-under", &low]);
    assert_eq!(code, 0);
    assert!(out.contains("mutation score"), "{out}");
    assert!(out.contains("survived "), "{out}");
    let (code, md, _) = rb(&db, &["test", "cov", "--coverage", "--format", "md"]);
    assert_eq!(code, 0);
    assert!(
        md.contains("| rule | condition | evaluated | true | false | decisive | covered |"),
        "{md}"
    );
    let (code, _, err) = rb(&db, &["test", "cov", "--coverage", "--format", "junit"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = rb(&db, &["test", "cov", "--format", "md"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = rb(&db, &["test", "cov", "--coverage", "--fail-under", "120"]);
    assert_eq!(code, 2, "{err}");
}

/// A page whose assertions pin every verdict of a one-rule page: every mutant that
/// changes an outcome changes a verdict, so none survives, and every condition is
/// covered — no false finding.
#[test]
fn pinning_every_verdict_of_a_one_rule_page_leaves_nothing_uncovered() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let mut v = page();
    v["id"] = json!("one");
    v["rules"] = json!([{"id": "speed", "name": "Speed", "weight": 1,
        "logic": {">=": [{"var": "target.speed"}, {"var": "source.minSpeed"}]}}]);
    let file = dir.path().join("one.json");
    std::fs::write(&file, v.to_string()).unwrap();
    assert_eq!(rb(&db, &["import", file.to_str().unwrap()]).0, 0);
    let (code, _, err) = rb(&db, &["test", "one", "--pin"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = rb(
        &db,
        &[
            "test",
            "one",
            "--coverage",
            "--format",
            "json",
            "--fail-under",
            "100",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["survived"], 0, "{r}");
    assert!(r["killed"].as_u64().unwrap() >= 3, "{r}");
    assert_eq!(r["mutationScore"], 100.0);
    assert_eq!(r["conditionsCovered"], r["conditions"]);
}

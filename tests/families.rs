//! Rule families: one rule written with `each` reads as one rule per value, each with
//! its own id, name and outcome; stored and exported as written; added, replaced and
//! removed as one; a member is not changed alone.

mod common;

use common::{export_page, rb};
use serde_json::{Value, json};

/// Two apps and two browsers; one plain rule and a family of three features, each
/// applying only where the app uses the feature.
fn page() -> Value {
    json!({
        "format": "rulebench.page/v1", "id": "web", "name": "Web apps × browsers",
        "source": {"name": "Apps", "key": ["id"], "rows": [
            {"id": "shop", "uses": ["fetch", "webgpu"]},
            {"id": "blog", "uses": ["fetch"]}
        ]},
        "target": {"name": "Browsers", "key": ["id"], "rows": [
            {"id": "safari-16", "features": {"fetch": true, "webgpu": false, "dialog": true}},
            {"id": "chrome-120", "features": {"fetch": true, "webgpu": true, "dialog": true}}
        ]},
        "rules": [
            {"id": "named", "name": "Named", "logic": {"!!": [{"var": "source.id"}]}},
            {"id": "feature-{feature}", "name": "Supports {feature}", "category": "Features",
             "each": {"feature": ["fetch", "webgpu", "dialog"]},
             "appliesWhen": "param.feature in source.uses",
             "expression": "target.features.{feature} == true"}
        ]
    })
}

fn setup_with(page: &Value) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rb.db");
    let file = dir.path().join("page.json");
    std::fs::write(&file, page.to_string()).unwrap();
    let (code, _, err) = rb(&db, &["import", "--no-seed", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    (dir, db)
}

fn evaluate(db: &std::path::Path, page: &str, source: &str) -> Value {
    let (code, out, err) = rb(
        db,
        &["evaluate", page, "--select", source, "--format", "json"],
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
        .unwrap()
}

#[test]
fn a_family_is_one_rule_per_value_with_its_own_id_name_and_outcome() {
    let (_dir, db) = setup_with(&page());
    let shop = evaluate(&db, "web", "id=shop");
    let safari = target(&shop, "safari-16");
    assert_eq!(
        safari["rules"],
        json!({"named": true, "feature-fetch": true, "feature-webgpu": false, "feature-dialog": null}),
        "{safari}"
    );
    // 2 of the 3 rules that apply pass (dialog is n/a: the shop does not use it).
    assert_eq!(safari["score"], json!(2.0 / 3.0));
    let blog = evaluate(&db, "web", "id=blog");
    assert_eq!(
        target(&blog, "safari-16")["rules"],
        json!({"named": true, "feature-fetch": true, "feature-webgpu": null, "feature-dialog": null})
    );
    // Names come from the template.
    let (code, out, err) = rb(&db, &["matrix", "web", "--select", "id=shop"]);
    assert_eq!(code, 0, "{err}");
    for name in ["Supports fetch", "Supports webgpu", "Supports dialog"] {
        assert!(out.contains(name), "{out}");
    }
}

#[test]
fn the_matrix_shows_a_family_as_a_group() {
    let (_dir, db) = setup_with(&page());
    let (code, out, err) = rb(&db, &["matrix", "web", "--select", "id=shop"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.starts_with("Supports {feature} (3 rules)"))
        .unwrap_or_else(|| panic!("no family row:\n{out}"));
    // Its row counts each target's passes of the members that apply; its members
    // follow it, indented.
    let cells: Vec<&str> = lines[head].split_whitespace().collect();
    assert!(cells.ends_with(&["1/2", "2/2"]), "{}", lines[head]);
    assert!(lines[head + 1].starts_with("  Supports fetch"), "{out}");
    assert!(lines[head + 3].starts_with("  Supports dialog"), "{out}");
    // JSON names each member's family; CSV stays one record per rule.
    let (_, json_out, _) = rb(
        &db,
        &["matrix", "web", "--select", "id=shop", "--format", "json"],
    );
    let doc: Value = serde_json::from_str(&json_out).unwrap();
    assert_eq!(doc["rules"][1]["family"], "feature-{feature}");
    assert!(doc["rules"][0].get("family").is_none());
    let (_, csv, _) = rb(
        &db,
        &["matrix", "web", "--select", "id=shop", "--format", "csv"],
    );
    assert!(!csv.contains("{feature}"), "{csv}");
}

#[test]
fn a_family_is_stored_and_exported_as_written() {
    let written = page();
    let (dir, db) = setup_with(&written);
    let exported = export_page(&db, "web");
    let rules = exported["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 2, "{exported}");
    let family = &rules[1];
    for key in [
        "id",
        "name",
        "category",
        "each",
        "appliesWhen",
        "expression",
    ] {
        assert_eq!(family[key], written["rules"][1][key], "{key}: {family}");
    }
    // The export imports back to the same page.
    let again = dir.path().join("again.json");
    std::fs::write(&again, exported.to_string()).unwrap();
    let db2 = dir.path().join("rb2.db");
    let (code, _, err) = rb(&db2, &["import", "--no-seed", again.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(export_page(&db2, "web"), exported);
    assert_eq!(
        evaluate(&db2, "web", "id=shop")["targets"],
        evaluate(&db, "web", "id=shop")["targets"]
    );
}

#[test]
fn each_as_combinations_or_entries_and_ids_without_a_parameter() {
    let mut p = page();
    p["rules"] = json!([
        // Every combination, the first parameter outermost; the id and the name name no
        // parameter, so the values are appended.
        {"id": "pair", "name": "Pair", "each": {"a": ["x", "y"], "n": [1, 2]},
         "logic": {"==": [{"var": "param.n"}, {"var": "param.n"}]},
         "description": "{a} at {n}"},
        // A list of entries: values that go together.
        {"name": "Has {feature}", "each": [{"feature": "fetch", "since": 1}, {"feature": "webgpu", "since": 2}],
         "logic": {"==": [{"var": "target.features.{feature}"}, true]}}
    ]);
    let (_dir, db) = setup_with(&p);
    let shop = evaluate(&db, "web", "id=shop");
    let rules = target(&shop, "chrome-120")["rules"]
        .as_object()
        .unwrap()
        .clone();
    let ids: Vec<&str> = rules.keys().map(String::as_str).collect();
    assert_eq!(
        ids,
        [
            "pair-x-1",
            "pair-x-2",
            "pair-y-1",
            "pair-y-2",
            "has-fetch",
            "has-webgpu"
        ]
    );
    let (_, out, _) = rb(&db, &["matrix", "web", "--select", "id=shop"]);
    assert!(out.contains("Pair (y, 2)"), "{out}");
    assert!(out.contains("Has webgpu"), "{out}");
}

/// What is wrong in a family is said where it is written, naming the member.
#[test]
fn mistakes_in_a_family_are_errors_that_say_what_and_where() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(Value, &str)] = &[
        (
            json!({"id": "f-{feture}", "name": "F", "each": {"feature": ["a"]}, "logic": true}),
            "`{feture}` names no parameter (did you mean `{feature}`?)",
        ),
        (
            json!({"id": "f-{feature}", "name": "F", "each": {"feature": ["a"]},
                   "logic": {"==": [{"var": "param.featur"}, "a"]}}),
            "`param.featur` names no parameter (did you mean `param.feature`?)",
        ),
        (
            json!({"id": "f-{feature}", "name": "F", "each": {"feature": []}, "logic": true}),
            "`each`'s `feature` lists no value",
        ),
        (
            json!({"id": "f-{feature}", "name": "F", "each": {"feature": [["a"]]}, "logic": true}),
            "a parameter's value is a string, a number or a boolean",
        ),
        (
            json!({"id": "f-{feature}", "name": "F", "each": {"feature": ["a", "a"]}, "logic": true}),
            "two members have the id `f-a`",
        ),
        (
            json!({"id": "f", "name": "F", "each": [{"a": 1}, {"b": 2}], "logic": true}),
            "every entry names the same parameters",
        ),
        (
            json!({"id": "f", "name": "F", "each": {"a": (0..200).collect::<Vec<_>>(), "b": (0..200).collect::<Vec<_>>()}, "logic": true}),
            "`each` makes more than 2000 members",
        ),
        (
            json!({"id": "f", "name": "F", "each": {"a": (0..1500).collect::<Vec<_>>()},
                   "description": "x".repeat(20_000), "logic": true}),
            "expand past 16 MB",
        ),
    ];
    for (i, (rule, said)) in cases.iter().enumerate() {
        let mut p = page();
        p["rules"] = json!([{"id": "ok", "name": "OK", "logic": true}, rule]);
        let file = dir.path().join(format!("bad{i}.json"));
        std::fs::write(&file, serde_json::to_string_pretty(&p).unwrap()).unwrap();
        let (code, out, err) = rb(
            &dir.path().join("rb.db"),
            &["check", file.to_str().unwrap()],
        );
        assert_eq!(code, 1, "{out}{err}");
        assert!(out.contains(said), "case {i}: {out}");
        assert!(out.contains("/rules/1"), "case {i}: located: {out}");
    }
    // Validation of a member points at its family in the file and names the member.
    let mut p = page();
    p["rules"] = json!([
        {"id": "ok", "name": "OK", "logic": true},
        {"id": "f-{feature}", "name": "F {feature}", "each": {"feature": ["fetch", "nope"]},
         "logic": {"==": [{"var": "target.{feature}Level"}, 1]}}
    ]);
    let file = dir.path().join("member.json");
    std::fs::write(&file, serde_json::to_string_pretty(&p).unwrap()).unwrap();
    let (code, out, _) = rb(
        &dir.path().join("rb.db"),
        &["check", file.to_str().unwrap()],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("at /rules/1/logic")
            && out.contains("member `f-nope` of the rule family `f-{feature}`"),
        "{out}"
    );
}

#[test]
fn rule_add_and_rm_take_a_family_whole_and_refuse_one_member() {
    let (dir, db) = setup_with(&page());
    // One member alone is refused, with what to do instead (exit 2, nothing changed).
    let (code, _, err) = rb(&db, &["rule", "rm", "web", "feature-webgpu"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("member of the rule family `feature-{feature}`")
            && err.contains("rule rm web feature-{feature}"),
        "{err}"
    );
    let plain = dir.path().join("plain.json");
    std::fs::write(
        &plain,
        json!({"id": "feature-webgpu", "name": "Mine", "logic": true}).to_string(),
    )
    .unwrap();
    let (code, _, err) = rb(
        &db,
        &["rule", "add", "web", plain.to_str().unwrap(), "--replace"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("member of the rule family"), "{err}");
    // The family again, with fewer values, replaces it whole: the member it no longer
    // has goes.
    let fewer = dir.path().join("fewer.json");
    let mut family = page()["rules"][1].clone();
    family["each"] = json!({"feature": ["fetch", "dialog"]});
    std::fs::write(&fewer, family.to_string()).unwrap();
    let (code, _, err) = rb(&db, &["rule", "add", "web", fewer.to_str().unwrap()]);
    assert_eq!(code, 2, "without --replace: {err}");
    let (code, out, err) = rb(
        &db,
        &["rule", "add", "web", fewer.to_str().unwrap(), "--replace"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("feature-dialog") || err.contains("feature-dialog"),
        "{out}{err}"
    );
    let rules = export_page(&db, "web")["rules"].clone();
    assert_eq!(rules[1]["each"], json!({"feature": ["fetch", "dialog"]}));
    let ids: Vec<String> = target(&evaluate(&db, "web", "id=shop"), "safari-16")["rules"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(ids, ["named", "feature-fetch", "feature-dialog"]);
    // `diff` sees the member that went.
    let (code, out, err) = rb(&db, &["diff", "web@1", "web@2"]);
    assert!(code == 0 || code == 1, "{err}");
    assert!(out.contains("feature-webgpu"), "{out}");
    // The family goes whole by its id.
    let (code, _, err) = rb(&db, &["rule", "rm", "web", "feature-{feature}"]);
    assert_eq!(code, 0, "{err}");
    let rules = export_page(&db, "web")["rules"].clone();
    assert_eq!(rules.as_array().unwrap().len(), 1, "{rules}");
}

#[test]
fn the_page_at_an_earlier_revision_has_its_family_as_written() {
    let (dir, db) = setup_with(&page());
    let (code, _, err) = rb(&db, &["rule", "rm", "web", "feature-{feature}"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = rb(&db, &["export", "web@1"]);
    assert_eq!(code, 0, "{err}");
    let old: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(old["rules"][1]["each"], page()["rules"][1]["each"], "{old}");
    drop(dir);
}

/// What the lint says of a family's members constant over the data is said once, at
/// the family, naming them (it was said once per member, each at the same place).
#[test]
fn members_constant_over_the_data_are_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = page();
    // Every browser supports fetch and dialog: those two members pass for every pair.
    p["rules"][1].as_object_mut().unwrap().remove("appliesWhen");
    let file = dir.path().join("p.json");
    std::fs::write(&file, serde_json::to_string_pretty(&p).unwrap()).unwrap();
    let (code, out, err) = rb(
        &dir.path().join("rb.db"),
        &["check", file.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{out}{err}");
    let said: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("constant-over-data") && l.contains("family"))
        .collect();
    assert_eq!(said.len(), 1, "{out}");
    assert!(
        said[0].contains("at /rules/1:")
            && said[0].contains(
                "2 of the 3 members of the rule family `feature-{feature}` pass for every pair"
            )
            && said[0].contains("feature-fetch, feature-dialog"),
        "{out}"
    );
}

/// Regressions from the review of families:
/// - restoring one member from history split its family (the export then held it twice
///   and did not import): refused, as any change to one member;
/// - a value added by `--replace` went to the end of the page, after other rules (the
///   family row counted the wrong rules, and two families interleaved exported twice):
///   a new member goes right after its family;
/// - a name made from a value that holds no letter or digit passed `rule add`;
/// - entries of a list-form `each` had to name their parameters in one order;
/// - a value holding `{b}` was read again as `b`'s placeholder.
#[test]
fn review_regressions() {
    let mut p = page();
    p["target"]["rows"][0]["features"]["serial"] = json!(false);
    let (dir, db) = setup_with(&p);
    // A plain rule after the family.
    let plain = dir.path().join("plain.json");
    std::fs::write(
        &plain,
        json!({"id": "last", "name": "Last", "logic": true}).to_string(),
    )
    .unwrap();
    let (code, _, err) = rb(&db, &["rule", "add", "web", plain.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // The family grows by one value.
    let more = dir.path().join("more.json");
    let mut family = page()["rules"][1].clone();
    family["each"] = json!({"feature": ["fetch", "webgpu", "dialog", "serial"]});
    std::fs::write(&more, family.to_string()).unwrap();
    let (code, _, err) = rb(
        &db,
        &["rule", "add", "web", more.to_str().unwrap(), "--replace"],
    );
    assert_eq!(code, 0, "{err}");
    let ids: Vec<String> = target(&evaluate(&db, "web", "id=shop"), "safari-16")["rules"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        ids,
        [
            "named",
            "feature-fetch",
            "feature-webgpu",
            "feature-dialog",
            "feature-serial",
            "last"
        ],
        "the new member right after its family"
    );
    let exported = export_page(&db, "web");
    assert_eq!(exported["rules"].as_array().unwrap().len(), 3, "{exported}");
    let again = dir.path().join("again.json");
    std::fs::write(&again, exported.to_string()).unwrap();
    let (code, out, err) = rb(&db, &["check", again.to_str().unwrap()]);
    assert_eq!(code, 0, "the export reads back: {out}{err}");
    // One member from an earlier revision: refused, nothing written.
    let rev = export_page(&db, "web")["rules"].clone();
    let (code, _, err) = rb(
        &db,
        &["page", "restore", "web@1", "--rule", "feature-fetch"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("member of the rule family"), "{err}");
    assert_eq!(export_page(&db, "web")["rules"], rev);
    // A name that holds no letter or digit, made from a value.
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        json!({"id": "sym-{s}", "name": "{s}", "each": {"s": ["ok", "-"]}, "logic": true})
            .to_string(),
    )
    .unwrap();
    let (code, _, err) = rb(&db, &["rule", "add", "web", bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("sym-"), "names the member: {err}");
    // Entries naming their parameters in another order; a value holding `{b}`.
    let ok = dir.path().join("ok.json");
    std::fs::write(
        &ok,
        json!({"id": "e-{a}", "name": "E {a} {b}", "each": [{"a": "x", "b": "{a}"}, {"b": "y", "a": "z"}],
               "logic": true})
        .to_string(),
    )
    .unwrap();
    let (code, _, err) = rb(&db, &["rule", "add", "web", ok.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = rb(&db, &["matrix", "web", "--select", "id=shop"]);
    assert!(out.contains("E x {a}"), "a value is not read again: {out}");
    assert!(out.contains("E z y"), "{out}");
}

//! No silently dead reference: an override or an assertion of a page file that names
//! no row is an error where the file is checked or imported (located, with a
//! did-you-mean); keyHashes match whatever their case; a key and a keyHash that name
//! different rows are an error. After a dataset change the same references are kept
//! with a warning (tests/warnings.rs).

mod common;

use common::rb;
use serde_json::{Value, json};

fn page(overrides: Value, assertions: Value) -> Value {
    json!({
        "format": "rulebench.page/v1", "id": "refs", "name": "Refs",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "t3-chat", "n": 1}]},
        "target": {"name": "T", "key": ["id"], "label": "name",
                   "rows": [{"id": "gpt-4.1", "name": "GPT-4.1", "n": 2}, {"id": "o3", "name": "o3", "n": 0}]},
        "rules": [{"name": "R", "logic": {">": [{"var": "target.n"}, {"var": "source.n"}]}}],
        "overrides": overrides,
        "assertions": assertions
    })
}

fn hash(key: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(key.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `check FILE` and `import FILE` on a page: (check's exit and stdout, import's exit and
/// stderr).
fn check_and_import(p: &Value) -> ((i32, String), (i32, String)) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rb.db");
    let file = dir.path().join("refs.json");
    std::fs::write(&file, p.to_string()).unwrap();
    let (check, out, _) = rb(&db, &["check", file.to_str().unwrap()]);
    let (import, _, err) = rb(&db, &["import", file.to_str().unwrap()]);
    ((check, out), (import, err))
}

#[test]
fn an_override_naming_no_row_is_an_error_with_a_did_you_mean() {
    for (key, wants) in [
        // A typo in the value.
        ("id=gpt-41", "did you mean `id=gpt-4.1`?"),
        // An id alone where a key is asked (`override add` accepts it; a file did
        // nothing with it).
        ("gpt-4.1", "did you mean `id=gpt-4.1`?"),
        // The label.
        ("GPT-4.1", "did you mean `id=gpt-4.1`?"),
        // The seed's literal placeholder.
        ("abc123", "name a row the page has"),
    ] {
        let p = page(
            json!([{"sourceKey": "id=t3-chat", "targetKey": key, "value": false}]),
            json!([]),
        );
        let ((check, out), (import, err)) = check_and_import(&p);
        assert_eq!(check, 1, "{key}: {out}");
        assert!(out.contains("error[orphaned-override]"), "{key}: {out}");
        assert!(out.contains("at /overrides/0"), "{key}: {out}");
        assert!(out.contains(wants), "{key}: {out}");
        assert_eq!(import, 2, "{key}: {err}");
        assert!(err.contains("it would do nothing"), "{key}: {err}");
    }
}

#[test]
fn an_assertion_selecting_no_row_is_an_error_with_a_did_you_mean() {
    let p = page(
        json!([]),
        json!([{"id": "a", "select": "id=t3chat", "path": "$.selectionVerdict",
                "matcher": "toEqual", "expected": 2}]),
    );
    let ((check, out), (import, err)) = check_and_import(&p);
    assert_eq!(check, 1, "{out}");
    assert!(out.contains("error[assertion-orphaned]"), "{out}");
    assert!(out.contains("at /assertions/0/select"), "{out}");
    assert!(out.contains("did you mean `id=t3-chat`?"), "{out}");
    assert_eq!(import, 2, "{err}");
}

#[test]
fn a_key_hash_matches_whatever_its_case() {
    let upper = hash("id=o3").to_uppercase();
    let p = page(
        json!([{"sourceKey": "id=t3-chat", "targetKeyHash": upper, "value": true}]),
        json!([]),
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rb.db");
    let file = dir.path().join("refs.json");
    std::fs::write(&file, p.to_string()).unwrap();
    let (code, _, err) = rb(&db, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // Active: o3 fails the rule and the override forces it to 2.
    let (code, out, err) = rb(
        &db,
        &[
            "evaluate",
            "refs",
            "--select",
            "id=t3-chat",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let o3 = r["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "o3")
        .unwrap();
    assert_eq!(
        (o3["verdict"].as_i64(), o3["reason"].as_str()),
        (Some(2), Some("override"))
    );
    // Stored (and exported) lower-case.
    let exported = common::export_page(&db, "refs");
    assert_eq!(exported["overrides"][0]["targetKeyHash"], hash("id=o3"));
}

#[test]
fn a_key_and_a_key_hash_that_disagree_are_an_error() {
    let p = page(
        json!([{"sourceKey": "id=t3-chat", "targetKey": "id=gpt-4.1",
                "targetKeyHash": hash("id=o3"), "value": true}]),
        json!([]),
    );
    let ((check, out), (import, err)) = check_and_import(&p);
    assert_eq!(check, 1, "{out}");
    assert!(out.contains("error[override]"), "{out}");
    assert!(out.contains("at /overrides/0/targetKeyHash"), "{out}");
    assert!(out.contains("name different rows"), "{out}");
    assert_eq!(import, 2, "{err}");
    // Alike, they are fine.
    let p = page(
        json!([{"sourceKey": "id=t3-chat", "targetKey": "id=gpt-4.1",
                "targetKeyHash": hash("id=gpt-4.1").to_uppercase(), "value": true}]),
        json!([]),
    );
    let ((check, out), (import, err)) = check_and_import(&p);
    assert_eq!((check, import), (0, 0), "{out}{err}");
}

/// `--select` names a source row by its key fields in any order, or as the JSON object
/// of them (the spec's form), values of any type.
#[test]
fn a_row_is_selected_by_its_key_fields_in_any_order_or_as_an_object() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rb.db");
    let p = json!({
        "format": "rulebench.page/v1", "id": "two", "name": "Two",
        "source": {"name": "S", "key": ["kind", "n"], "rows": [
            {"kind": "web", "n": 5}, {"kind": "cli", "n": 5}]},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": "t", "m": 1}]},
        "rules": [{"name": "R", "logic": {">": [{"var": "target.m"}, {"var": "source.n"}]}}]
    });
    let file = dir.path().join("two.json");
    std::fs::write(&file, p.to_string()).unwrap();
    let (code, _, err) = rb(&db, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    for select in [
        "kind=cli|n=5",
        "n=5|kind=cli",
        r#"{"kind": "cli", "n": 5}"#,
        r#"{"n": 5, "kind": "cli"}"#,
    ] {
        let (code, out, err) = rb(
            &db,
            &["evaluate", "two", "--select", select, "--format", "json"],
        );
        assert_eq!(code, 0, "{select}: {err}");
        let r: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(r["selectionKey"], "kind=cli|n=5", "{select}");
    }
    // Not every key field: not a key (and not found).
    let (code, _, err) = rb(
        &db,
        &[
            "evaluate",
            "two",
            "--select",
            r#"{"n": 5}"#,
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 2, "{err}");
}

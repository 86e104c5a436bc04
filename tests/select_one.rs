//! `evaluate --select` reads the one source row it names (by key, keyHash or id) rather
//! than every row: its result — missed, then served from the cache — is the result that
//! source gets when every source is evaluated, whatever the needle, overrides and
//! orphaned overrides included.

mod common;

use serde_json::{Value, json};

use rulebench::app::App;
use rulebench_core::model::key_hash;

/// The result's JSON without what differs between two runs (when, and cache or not).
fn wire(r: &rulebench::app::types::SelectionResult) -> Value {
    let mut w = r.wire();
    let o = w.as_object_mut().unwrap();
    o.remove("evaluatedAt");
    o.remove("cache");
    w
}

/// A page of one-field keys with overrides on two sources, one of them naming a target
/// the page does not have (orphaned: a warning on that source's result only).
fn ids_page() -> Value {
    json!({
        "format": "rulebench.page/v1", "id": "ids", "name": "Ids",
        "source": {"name": "S", "key": ["id"], "label": "name", "rows": [
            {"id": "a", "name": "Alpha", "min": 1},
            {"id": "B", "name": "Beta", "min": 5},
            {"id": "c", "name": "Gamma", "min": 9}]},
        "target": {"name": "T", "key": ["id"], "rows": [
            {"id": "x", "n": 3}, {"id": "y", "n": 7}, {"id": "z", "n": 10}, {"id": "gone", "n": 0}]},
        "rules": [{"id": "big", "name": "Big", "logic": {">=": [{"var": "target.n"}, {"var": "source.min"}]}}],
        "overrides": [
            {"sourceKey": "id=B", "targetKey": "id=x", "value": true, "note": "by hand"},
            {"sourceKey": "id=B", "targetKey": "id=gone", "value": false},
            {"sourceKey": "id=c", "targetKey": "id=y", "value": false}
        ]
    })
}

#[test]
fn one_source_read_alone_is_evaluated_as_among_all() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::open(&dir.path().join("t.db")).unwrap();
    app.import(&ids_page().to_string(), "ids.json", false)
        .unwrap();
    // Target `gone` goes: B's override of it stays, orphaned.
    let targets: Vec<Value> = ids_page()["target"]["rows"].as_array().unwrap()[..3].to_vec();
    let bytes = serde_json::to_vec(&targets).unwrap();
    app.import_dataset_from(
        "ids",
        rulebench_core::model::Side::Target,
        rulebench::app::dataset::DataInput::Bytes {
            name: "<t>",
            bytes: &bytes,
        },
        &Default::default(),
        &mut |_| {},
    )
    .expect("not refused");
    for page in [
        "llm-chat-clients",
        "loan-eligibility",
        "provider-capabilities",
        "ids",
    ] {
        let all: Vec<_> = app.evaluate_all(page).unwrap().collect();
        let (head, _) = app.page(page).unwrap();
        for (s, row) in head.source.rows.iter().enumerate() {
            let key = head.source.row_key(row);
            let expected = wire(&all[s]);
            let mut needles = vec![
                key.clone(),
                key_hash(&key),
                key_hash(&key).to_uppercase(),
                head.source.row_id(row),
                head.source.row_label(row),
            ];
            // An id in another case, where the page's keys compare without case.
            let lower = head.source.row_id(row).to_lowercase();
            if App::find_row(&head, rulebench_core::model::Side::Source, &lower).ok() == Some(s) {
                needles.push(lower);
            }
            for needle in needles {
                // Twice: computed, then from the cache.
                for run in ["miss", "hit"] {
                    let r = app
                        .evaluate(page, &needle)
                        .unwrap_or_else(|e| panic!("{page} `{needle}`: {e}"));
                    assert_eq!(r.eval.selection, s, "{page} `{needle}` ({run})");
                    assert_eq!(r.selection_key, key, "{page} `{needle}` ({run})");
                    assert_eq!(wire(&r), expected, "{page} `{needle}` ({run})");
                    assert_eq!(
                        r.selection_warnings(),
                        all[s].selection_warnings(),
                        "{page} `{needle}` ({run})"
                    );
                }
            }
        }
    }
    // The orphaned override is B's warning, and B's alone.
    let b = app.evaluate("ids", "B").unwrap();
    assert_eq!(b.selection_warnings().len(), 1);
    assert!(
        app.evaluate("ids", "c")
            .unwrap()
            .selection_warnings()
            .is_empty()
    );
}

/// A needle that names no row by key, keyHash or id still gets the full search: its
/// hint, or its ambiguity.
#[test]
fn a_needle_read_alone_cannot_answer_gets_the_full_search() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (code, _, err) = common::rb(
        &db,
        &[
            "evaluate",
            "llm-chat-clients",
            "--select",
            "t3chat",
            "--format",
            "summary",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("did you mean `t3.chat`?"), "{err}");
}

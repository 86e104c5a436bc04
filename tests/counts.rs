//! `evaluate --format counts`: verdict counts per selection (and per value of a target
//! summary field with `--by`), equal to what the pairs say, without printing them.

mod common;

use std::collections::BTreeMap;

use common::rb;
use serde_json::Value;

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Per selection key: its summary line (verdict, recommendation, targets).
fn summaries(db: &std::path::Path, page: &str) -> BTreeMap<String, Value> {
    let (code, out, err) = rb(db, &["evaluate", page, "--all", "--format", "summary"]);
    assert_eq!(code, 0, "{err}");
    lines(&out)
        .into_iter()
        .map(|s| (s["selectionKey"].as_str().unwrap().to_owned(), s))
        .collect()
}

fn tally<'a>(targets: impl Iterator<Item = &'a Value>) -> [u64; 3] {
    let mut t = [0; 3];
    for target in targets {
        t[target["verdict"].as_u64().unwrap() as usize] += 1;
    }
    t
}

fn counted(line: &Value) -> [u64; 3] {
    ["none", "partial", "full"].map(|k| line[k].as_u64().unwrap())
}

#[test]
fn counts_equal_the_verdicts_of_every_pair() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    // Every sample page: overrides (llm-chat-clients, provider-capabilities) included.
    for page in [
        "llm-chat-clients",
        "loan-eligibility",
        "provider-capabilities",
    ] {
        let pairs = summaries(&db, page);
        let (code, out, err) = rb(&db, &["evaluate", page, "--all", "--format", "counts"]);
        assert_eq!(code, 0, "{err}");
        let counts = lines(&out);
        assert_eq!(counts.len(), pairs.len(), "{page}: a line per selection");
        for line in &counts {
            let key = line["selectionKey"].as_str().unwrap();
            let summary = &pairs[key];
            let targets = summary["targets"].as_array().unwrap();
            assert_eq!(counted(line), tally(targets.iter()), "{page} {key}");
            assert_eq!(line["targets"], targets.len(), "{page} {key}");
            assert_eq!(line["selectionVerdict"], summary["selectionVerdict"]);
            assert_eq!(line["recommendedTargetId"], summary["recommendedTargetId"]);
        }
    }
}

#[test]
fn counts_by_a_summary_field_split_each_selection() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let page = "llm-chat-clients";
    let pairs = summaries(&db, page);
    // The provider of each target, from the JSON result (summary fields are shown).
    let (code, out, err) = rb(
        &db,
        &["evaluate", page, "--select", "t3-chat", "--format", "json"],
    );
    assert_eq!(code, 0, "{err}");
    let result: Value = serde_json::from_str(&out).unwrap();
    let provider: BTreeMap<String, Value> = result["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_str().unwrap().to_owned(), t["provider"].clone()))
        .collect();
    let (code, out, err) = rb(
        &db,
        &[
            "evaluate", page, "--all", "--format", "counts", "--by", "provider",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let counts = lines(&out);
    let providers: std::collections::BTreeSet<String> =
        provider.values().map(Value::to_string).collect();
    assert!(
        providers.len() > 1,
        "the page's targets have several providers"
    );
    assert_eq!(counts.len(), pairs.len() * providers.len());
    for line in &counts {
        let key = line["selectionKey"].as_str().unwrap();
        let targets = pairs[key]["targets"].as_array().unwrap();
        let of_provider = targets
            .iter()
            .filter(|t| provider[t["id"].as_str().unwrap()] == line["provider"]);
        assert_eq!(
            counted(line),
            tally(of_provider),
            "{key} {}",
            line["provider"]
        );
    }
    // One selection: the same lines as its share of --all.
    let (code, out, _) = rb(
        &db,
        &[
            "evaluate", page, "--select", "t3-chat", "--format", "counts", "--by", "provider",
        ],
    );
    assert_eq!(code, 0);
    let one = lines(&out);
    let of_all: Vec<&Value> = counts
        .iter()
        .filter(|l| l["selectionKey"] == one[0]["selectionKey"])
        .collect();
    assert_eq!(one.iter().collect::<Vec<_>>(), of_all);
}

#[test]
fn counts_by_an_unknown_field_or_without_counts_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (code, out, err) = rb(
        &db,
        &[
            "evaluate",
            "llm-chat-clients",
            "--all",
            "--format",
            "counts",
            "--by",
            "contextWindow",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(
        err.contains("--by contextWindow: not a summary field") && err.contains("provider"),
        "{err}"
    );
    let (code, _, err) = rb(
        &db,
        &["evaluate", "llm-chat-clients", "--all", "--by", "provider"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("--format counts"), "{err}");
}

//! Verdict assertions: `rulebench test`, pinning, import and
//! export, persisted results and the limits, end to end through the app and the CLI.

mod common;
use common::rb;
use std::path::{Path, PathBuf};

use rulebench::app::{App, AppError};
use rulebench_core::assertions::{self, Assertion, Limits, PathMatch};
use rulebench_core::diag::Code;
use rulebench_core::model::Page;
use rulebench_store::Store;
use serde_json::{Value, json};
use tempfile::TempDir;

const LLM: &str = "llm-chat-clients";
const LOAN: &str = "loan-eligibility";
const T3: &str = "clientType=web|id=t3-chat";
const SAMPLE: &str = include_str!("../sample-pages/llm-chat-clients.json");
/// The message of the sample page's first assertion once gpt-4.1 is overridden to 0.
const BROKEN: &str = "$.targets[?@.id=='gpt-4.1'].verdict toEqual 2: got 0";

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

struct Env {
    dir: TempDir,
    db: PathBuf,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("x.db");
        Env { dir, db }
    }

    fn file(&self, name: &str, text: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).expect("write file");
        path.to_str().expect("UTF-8 temp path").to_owned()
    }

    fn app(&self) -> App {
        App::open(&self.db).expect("open the database")
    }
}

#[track_caller]
fn expect(db: &Path, args: &[&str], code: i32) -> (String, String) {
    // As is: `test FILE` must not create the database (one test checks it).
    let (c, out, err) =
        if args.first() == Some(&"test") && args.get(1).is_some_and(|a| a.ends_with(".json")) {
            common::rb_as_is(db, args)
        } else {
            rb(db, args)
        };
    assert_eq!(
        c, code,
        "rulebench {args:?} exited {c}, expected {code}\nstdout:\n{out}\nstderr:\n{err}"
    );
    (out, err)
}

/// The sample page with its assertions replaced.
fn sample_with(assertions: Value) -> String {
    let mut page: Value = serde_json::from_str(SAMPLE).unwrap();
    page["assertions"] = assertions;
    serde_json::to_string_pretty(&page).unwrap()
}

fn fingerprint(app: &App) -> Vec<(String, i64)> {
    app.store().fingerprint().unwrap()
}

/// A minimal XML well-formedness check: balanced, properly nested tags, quoted
/// attributes, and entities that XML knows.
fn check_xml(text: &str) -> Vec<String> {
    let body = text
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        .expect("XML declaration");
    let mut stack: Vec<String> = Vec::new();
    let mut elements = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find('<') {
        check_text(&rest[..start]);
        let end = rest[start..].find('>').expect("tag closes") + start;
        let tag = &rest[start + 1..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "nesting at </{name}>");
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let name = tag.split_whitespace().next().expect("tag name").to_owned();
        assert_eq!(
            tag[name.len()..].matches('"').count() % 2,
            0,
            "attributes of <{name}> are quoted"
        );
        check_text(&tag[name.len()..]);
        elements.push(name.clone());
        if !self_closing {
            stack.push(name);
        }
    }
    assert!(stack.is_empty(), "unclosed elements: {stack:?}");
    assert!(rest.trim().is_empty());
    elements
}

fn check_text(text: &str) {
    assert!(!text.contains('<'), "a raw < in {text:?}");
    let mut rest = text;
    while let Some(i) = rest.find('&') {
        let end = rest[i..].find(';').expect("entity ends") + i;
        let entity = &rest[i + 1..end];
        assert!(
            ["amp", "lt", "gt", "quot", "apos"].contains(&entity) || entity.starts_with('#'),
            "unknown entity &{entity};"
        );
        rest = &rest[end + 1..];
    }
    assert!(!text.chars().any(|c| c.is_control() && c != '\n'));
}

// ---------------------------------------------------------------------------------------
// rulebench test
// ---------------------------------------------------------------------------------------

#[test]
fn the_sample_page_passes_its_assertions() {
    let env = Env::new();
    let (out, _) = expect(&env.db, &["test", LLM], 0);
    assert!(
        out.starts_with("llm-chat-clients (revision 1): 8 assertions\n"),
        "{out}"
    );
    assert_eq!(out.matches("\nPASS  ").count(), 8, "{out}");
    assert!(out.contains(
        "PASS  gpt-4-1-full-on-t3-chat — gpt-4.1 stays fully compatible for t3.chat\n      \
         $.targets[?@.id=='gpt-4.1'].verdict toEqual 2\n"
    ));
    assert!(out.ends_with("8 assertions: 8 passed, 0 failed\n"), "{out}");
    // The matchers the issue asks the sample to show.
    let page: Page = serde_json::from_str(SAMPLE).unwrap();
    let matchers: Vec<&str> = page.assertions.iter().map(|a| a.matcher.as_str()).collect();
    for m in ["toEqual", "toBeNull", "toBeOneOf", "toMatch"] {
        assert!(matchers.contains(&m), "the sample uses {m}");
    }
    assert!(
        page.assertions
            .iter()
            .any(|a| a.select == "*" && a.path_match == PathMatch::All)
    );
}

#[test]
fn an_edit_that_breaks_a_pinned_verdict_exits_1_with_the_message() {
    let env = Env::new();
    expect(
        &env.db,
        &[
            "override", "add", LLM, "--source", "t3-chat", "--target", "gpt-4.1", "--value",
            "false",
        ],
        0,
    );
    let (out, _) = expect(&env.db, &["test", LLM], 1);
    assert!(
        out.contains(&format!(
            "FAIL  gpt-4-1-full-on-t3-chat — gpt-4.1 stays fully compatible for t3.chat\n      {BROKEN}\n"
        )),
        "{out}"
    );
    assert!(out.ends_with("8 assertions: 7 passed, 1 failed\n"), "{out}");
    // Removing the override makes it pass again.
    expect(
        &env.db,
        &[
            "override", "rm", LLM, "--source", "t3-chat", "--target", "gpt-4.1",
        ],
        0,
    );
    expect(&env.db, &["test", LLM], 0);
}

#[test]
fn junit_output_is_xml_with_a_testcase_per_assertion() {
    let env = Env::new();
    let (out, _) = expect(&env.db, &["test", LLM, "--format", "junit"], 0);
    let elements = check_xml(&out);
    assert_eq!(elements.iter().filter(|e| *e == "testcase").count(), 8);
    assert_eq!(elements.iter().filter(|e| *e == "failure").count(), 0);
    assert!(out.contains("<testsuite name=\"llm-chat-clients\" tests=\"8\" failures=\"0\""));

    expect(
        &env.db,
        &[
            "override", "add", LLM, "--source", T3, "--target", "gpt-4.1", "--value", "false",
        ],
        0,
    );
    let (out, _) = expect(&env.db, &["test", LLM, "--format", "junit"], 1);
    let elements = check_xml(&out);
    assert_eq!(elements.iter().filter(|e| *e == "testcase").count(), 8);
    assert_eq!(elements.iter().filter(|e| *e == "failure").count(), 1);
    assert!(out.contains("tests=\"8\" failures=\"1\""));
    assert!(
        out.contains("message=\"$.targets[?@.id=='gpt-4.1'].verdict toEqual 2: got 0\""),
        "{out}"
    );
}

#[test]
fn json_output_is_the_report() {
    let env = Env::new();
    let (out, _) = expect(&env.db, &["test", LLM, "--format", "json"], 0);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["pageId"], LLM);
    assert_eq!(report["passed"], 8);
    assert_eq!(report["failed"], 0);
    let first = &report["results"][0];
    assert_eq!(first["assertionId"], "gpt-4-1-full-on-t3-chat");
    assert_eq!(first["pathMatch"], "ANY");
    assert_eq!(
        first["actualSamples"],
        json!([{"selection": T3, "passed": true, "values": [2]}])
    );
    // The `*` assertion carries one sample per source row.
    let every = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["select"] == "*" && r["pathMatch"] == "ALL")
        .unwrap();
    assert_eq!(every["actualSamples"].as_array().unwrap().len(), 7);
}

#[test]
fn a_page_file_is_tested_in_memory_without_a_database() {
    let env = Env::new();
    let file = env.file("page.json", SAMPLE);
    let (out, _) = expect(&env.db, &["test", &file], 0);
    assert!(out.starts_with("llm-chat-clients (page file, in memory): 8 assertions\n"));
    assert!(!env.db.exists(), "testing a file opens no database");

    let broken = sample_with(json!([
        {"id": "t3", "select": "t3-chat", "path": "selectionVerdict", "matcher": "toEqual", "expected": 0}
    ]));
    let file = env.file("broken.json", &broken);
    let (out, _) = expect(&env.db, &["test", &file], 1);
    assert!(
        out.contains("FAIL  t3\n      $.selectionVerdict toEqual 0: got 2\n"),
        "{out}"
    );
    assert!(!env.db.exists());

    let (_, err) = expect(&env.db, &["test", &file, "--pin"], 2);
    assert!(err.contains("--pin writes to a stored page"), "{err}");
}

#[test]
fn invalid_assertions_are_bad_input_with_their_id_and_field() {
    let env = Env::new();
    let cases = [
        (
            json!({"id": "bad-path", "select": "*", "path": "$.targets[?@.id==", "matcher": "toBeNull"}),
            "/assertions/0/path",
            "assertion `bad-path`: `path` `$.targets[?@.id==` is not a valid JSONPath",
        ),
        (
            json!({"id": "bad-regex", "select": "*", "path": "$.pageId", "matcher": "toMatch", "expected": "(unclosed"}),
            "/assertions/0/expected",
            "assertion `bad-regex`: `expected` of toMatch: the pattern /(unclosed/ does not compile",
        ),
        (
            json!({"id": "bad-flags", "select": "*", "path": "$.pageId", "matcher": "toMatch",
                "expected": {"source": "llm", "flags": "gx"}}),
            "/assertions/0/expected/flags",
            "assertion `bad-flags`: `expected` of toMatch: flag `g` is not allowed (allowed flags: imsu)",
        ),
        (
            json!({"id": "bad-matcher", "select": "*", "path": "$.pageId", "matcher": "toBeNul"}),
            "/assertions/0/matcher",
            "assertion `bad-matcher`: unknown matcher `toBeNul` (matchers: toEqual, toBeNull, toContain, toMatch, toBeOneOf) (hint: did you mean `toBeNull`?)",
        ),
        (
            json!({"id": "no-expected", "select": "*", "path": "$.pageId", "matcher": "toEqual"}),
            "/assertions/0/expected",
            "assertion `no-expected`: `expected` is missing: toEqual needs any JSON value",
        ),
        (
            json!({"id": "no-options", "select": "*", "path": "$.pageId", "matcher": "toBeOneOf", "expected": []}),
            "/assertions/0/expected",
            "assertion `no-options`: `expected` of toBeOneOf: toBeOneOf needs a non-empty array of options, got []",
        ),
    ];
    let before = fingerprint(&env.app());
    for (assertion, pointer, message) in cases {
        let file = env.file("page.json", &sample_with(json!([assertion])));
        // `check` reports it (exit 1), `test` and `import` refuse it (exit 2).
        let (out, _) = expect(&env.db, &["check", &file], 1);
        assert!(out.contains(pointer) && out.contains(message), "{out}");
        let (_, err) = expect(&env.db, &["test", &file], 2);
        assert!(err.contains(&format!("at {pointer}: {message}")), "{err}");
        let (_, err) = expect(&env.db, &["import", &file, "--replace"], 2);
        assert!(err.contains(&format!("at {pointer}: {message}")), "{err}");
    }
    assert_eq!(fingerprint(&env.app()), before, "the database is as it was");
}

#[test]
fn import_errors_are_located() {
    let env = Env::new();
    let file = env.file(
        "page.json",
        &sample_with(
            json!([{"id": "m", "select": "*", "path": "$", "matcher": "toEquals", "expected": 1}]),
        ),
    );
    let (_, err) = expect(&env.db, &["import", &file, "--replace"], 2);
    let text = std::fs::read_to_string(&file).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("\"matcher\": \"toEquals\""))
        .unwrap()
        + 1;
    assert!(
        err.contains(&format!("error[assertion-matcher] {line}:")),
        "line {line}: {err}"
    );
    assert!(err.contains("at /assertions/0/matcher"), "{err}");
}

#[test]
fn unknown_assertion_keys_are_refused() {
    let env = Env::new();
    let file = env.file(
        "page.json",
        &sample_with(
            json!([{"id": "n", "select": "*", "path": "$", "matcher": "toBeNull", "Not": true}]),
        ),
    );
    let (_, err) = expect(&env.db, &["test", &file], 2);
    assert!(err.contains("unknown key `Not`"), "{err}");
    assert!(err.contains("at /assertions/0/Not"), "{err}");
    assert!(err.contains("did you mean `not`?"), "{err}");
}

#[test]
fn select_needs_pin_and_a_page_must_exist() {
    let env = Env::new();
    let (_, err) = expect(&env.db, &["test", LLM, "--select", "t3-chat"], 2);
    assert!(err.contains("--pin"), "{err}");
    let (_, err) = expect(&env.db, &["test", "llm-chat-client"], 2);
    assert!(err.contains("did you mean `llm-chat-clients`?"), "{err}");
}

// ---------------------------------------------------------------------------------------
// Pinning
// ---------------------------------------------------------------------------------------

#[test]
fn pin_round_trip() {
    let env = Env::new();
    // One selection: every target's verdict, the selection verdict, the recommendation.
    let (out, err) = expect(&env.db, &["test", LOAN, "--pin", "--select", "app-001"], 0);
    let page = env.app().page(LOAN).unwrap().0;
    let targets = page.target.rows.len();
    assert_eq!(page.assertions.len(), targets + 2);
    assert!(
        err.contains(&format!("{} new, 0 replaced (revision 2)", targets + 2)),
        "{err}"
    );
    assert!(
        out.ends_with(&format!(
            "{0} assertions: {0} passed, 0 failed\n",
            targets + 2
        )),
        "{out}"
    );
    let key = page
        .source
        .row_key(&page.source.rows[page.source.find_row("app-001").unwrap()]);
    assert!(page.assertions.iter().all(|a| a.select == key));
    assert_eq!(page.assertions[targets].path, "$.selectionVerdict");
    assert_eq!(page.assertions[targets + 1].path, "$.recommendedTargetId");

    // Every selection; pins already there are replaced, not duplicated.
    let (_, err) = expect(&env.db, &["test", LOAN, "--pin"], 0);
    let sources = page.source.rows.len();
    let all = sources * (targets + 2);
    assert!(
        err.contains(&format!(
            "{} new, {} replaced (revision 3)",
            all - targets - 2,
            targets + 2
        )),
        "{err}"
    );
    // Pinning again changes nothing and makes no revision.
    let (_, err) = expect(&env.db, &["test", LOAN, "--pin"], 0);
    assert!(
        err.contains("already pinned, nothing changed (revision 3)"),
        "{err}"
    );

    // Export → import elsewhere keeps them, and they pass there too.
    let (exported, _) = expect(&env.db, &["export", LOAN], 0);
    let other = Env::new();
    let file = other.file("loan.json", &exported);
    expect(&other.db, &["import", &file, "--replace"], 0);
    assert_eq!(other.app().page(LOAN).unwrap().0.assertions.len(), all);
    let (out, _) = expect(&other.db, &["test", LOAN], 0);
    assert!(out.ends_with(&format!("{all} assertions: {all} passed, 0 failed\n")));

    // A policy change that moves a verdict breaks a pin.
    expect(
        &other.db,
        &["policy", "set", LOAN, "requiredMode=IGNORE_REQUIRED"],
        0,
    );
    let (out, _) = expect(&other.db, &["test", LOAN], 1);
    assert!(out.contains("FAIL  pin-"), "{out}");
}

/// A synthetic page of 200 targets, 3 rules and `sources` sources, as `edit` leaves its
/// JSON, imported (`synthetic-200x3`).
fn pin_page(env: &Env, sources: &str, edit: impl FnOnce(&mut Value)) {
    let file = env.dir.path().join("big.json");
    let file = file.to_str().unwrap();
    expect(
        &env.db,
        &[
            "bench",
            "--targets",
            "200",
            "--rules",
            "3",
            "--sources",
            sources,
            "--write-page",
            file,
        ],
        0,
    );
    let mut page: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    edit(&mut page);
    std::fs::write(file, page.to_string()).unwrap();
    expect(&env.db, &["import", file], 0);
}

#[test]
fn pinning_too_much_is_refused_and_changes_nothing() {
    let env = Env::new();
    pin_page(&env, "40", |_| {});
    let id = "synthetic-200x3";
    let before = fingerprint(&env.app());
    let (_, err) = expect(&env.db, &["test", id, "--pin"], 2);
    // Refused as soon as the pins pass the limit, not after pinning all 40 sources.
    assert!(
        err.contains("at /assertions: the pins of 2 selection(s) of 40 are already"),
        "{err}"
    );
    assert!(err.contains("the limit is 65536 bytes per page"), "{err}");
    assert_eq!(fingerprint(&env.app()), before);
    // One selection fits.
    let (_, err) = expect(&env.db, &["test", id, "--pin", "--select", "client-000"], 0);
    assert!(err.contains("pinned"), "{err}");
}

/// Pins whose ids two rows share (the slugs of `A` and `a`) replace each other: the size
/// limit counts each id once, so pinning both is not refused when the merged list fits.
#[test]
fn pins_of_rows_with_one_slug_count_once_against_the_limit() {
    let env = Env::new();
    pin_page(&env, "2", |page| {
        page["source"]["rows"][0]["id"] = json!("A");
        page["source"]["rows"][1]["id"] = json!("a");
    });
    // One selection's pins fit (about 41 KB); both rows' would not, were their ids
    // counted twice.
    let (_, err) = expect(&env.db, &["test", "synthetic-200x3", "--pin"], 0);
    assert!(err.contains("pinned"), "{err}");
    let (page, _) = env.app().page("synthetic-200x3").unwrap();
    let one = env.app().evaluate("synthetic-200x3", "a").unwrap();
    assert_eq!(page.assertions.len(), one.target_count() + 2, "{err}");
}

// ---------------------------------------------------------------------------------------
// The app layer and the store
// ---------------------------------------------------------------------------------------

#[test]
fn import_export_round_trip_keeps_assertions() {
    let env = Env::new();
    let mut app = env.app();
    let (page, _) = app.page(LLM).unwrap();
    assert_eq!(page.assertions.len(), 8);
    let parsed: Page = serde_json::from_str(SAMPLE).unwrap();
    assert_eq!(page.assertions, parsed.assertions, "stored as written");
    let text = serde_json::to_string_pretty(&page).unwrap();
    let (again, _) = App::parse_page(&text, "export").unwrap();
    assert_eq!(again, page);
    app.import(&text, "export", true).unwrap();
    assert_eq!(app.page(LLM).unwrap().0, page);
}

#[test]
fn select_is_stored_as_the_row_key_and_ids_are_filled() {
    let env = Env::new();
    let mut app = env.app();
    let text = sample_with(json!([
        {"description": "t3.chat is compatible", "select": "t3.chat", "path": "selectionVerdict",
         "matcher": "toEqual", "expected": 2},
        {"select": "offline-notes", "path": "recommendedTargetId", "matcher": "toBeNull"}
    ]));
    app.import(&text, "p.json", true).unwrap();
    let page = app.page(LLM).unwrap().0;
    let got: Vec<(&str, &str)> = page
        .assertions
        .iter()
        .map(|a| (a.id.as_str(), a.select.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("t3-chat-is-compatible", T3),
            ("assertion-2", "clientType=desktop|id=offline-notes")
        ]
    );
    assert!(app.run_assertions(LLM).unwrap().all_passed());
}

#[test]
fn results_are_persisted_per_assertion() {
    let env = Env::new();
    let mut app = env.app();
    let report = app.run_assertions(LLM).unwrap();
    assert_eq!((report.passed, report.failed, report.revision), (8, 0, 1));
    let stored = app.assertion_results(LLM).unwrap();
    assert_eq!(stored.len(), 8);
    for (s, r) in stored.iter().zip(&report.results) {
        assert_eq!(s.assertion_id, r.assertion_id);
        assert_eq!(s.revision, 1);
        assert!(s.passed && !s.truncated && s.actual_sha256.is_none());
        assert_eq!(s.actual_samples, r.actual_samples);
        assert_eq!(s.run_at, report.run_at);
    }

    app.set_override(LLM, "t3-chat", "gpt-4.1", false, None)
        .unwrap();
    let report = app.run_assertions(LLM).unwrap();
    assert_eq!((report.failed, report.revision), (1, 2));
    let stored = app.assertion_results(LLM).unwrap();
    let failed: Vec<_> = stored.iter().filter(|s| !s.passed).collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].revision, 2);
    assert_eq!(failed[0].message.as_deref(), Some(BROKEN));
    // A run at the same revision replaces that revision's results.
    app.run_assertions(LLM).unwrap();
    let rows: i64 = app
        .store()
        .connection()
        .query_row(
            "SELECT COUNT(*) FROM assertion_results WHERE page_id = ?1",
            [LLM],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rows, 16, "one run per revision");
}

#[test]
fn large_actual_samples_are_truncated_with_a_hash() {
    let env = Env::new();
    let mut app = env.app();
    app.set_assertions(
        LLM,
        vec![Assertion {
            id: "whole".into(),
            description: None,
            select: "*".into(),
            path: "$".into(),
            path_match: PathMatch::Any,
            matcher: "toBeNull".into(),
            expected: None,
            not: true,
        }],
    )
    .unwrap();
    // A cap that holds the first source's entry and a bit.
    let whole = app.run_assertions(LLM).unwrap();
    let first = serde_json::to_string(&whole.results[0].actual_samples[0]).unwrap();
    let cap = first.len() + 100;
    let limits = Limits {
        max_details_bytes: cap,
        ..Limits::default()
    };
    let report = app.run_assertions_with(LLM, &limits).unwrap();
    let r = &report.results[0];
    assert!(r.passed && r.truncated);
    // The type stays (an array of the first whole entries) and so does the cap, as
    // stored too (a string of JSON text used to grow past it on storing).
    let kept = r.actual_samples.as_array().expect("an array still");
    assert!(!kept.is_empty() && kept.len() < 7);
    assert!(serde_json::to_string(&r.actual_samples).unwrap().len() <= cap);
    let stored = &app.assertion_results(LLM).unwrap()[0];
    assert!(stored.truncated);
    assert_eq!(stored.actual_samples, r.actual_samples);
    let stored_bytes: i64 = app
        .store()
        .connection()
        .query_row(
            "SELECT MAX(LENGTH(actual_json)) FROM assertion_results",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert!(stored_bytes as usize <= cap, "{stored_bytes}");
    assert_eq!(stored.actual_sha256, r.actual_sha256);
    assert_eq!(stored.actual_sha256.as_ref().unwrap().len(), 64);
    // Within the default 512 KB the same samples are kept whole.
    let report = app.run_assertions(LLM).unwrap();
    assert!(!report.results[0].truncated);
    assert_eq!(
        report.results[0].actual_samples.as_array().unwrap().len(),
        7
    );
}

#[test]
fn editing_assertions_makes_revisions_and_validates() {
    let env = Env::new();
    let mut app = env.app();
    let before = fingerprint(&app);
    let bad = Assertion {
        id: "x".into(),
        description: None,
        select: T3.into(),
        path: "$.selectionVerdict".into(),
        path_match: PathMatch::Any,
        matcher: "toBeOneOf".into(),
        expected: Some(json!([])),
        not: false,
    };
    match app.put_assertion(LLM, bad.clone()) {
        Err(AppError::Invalid { diagnostics, .. }) => {
            assert_eq!(diagnostics[0].pointer, "/assertions/8/expected");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(fingerprint(&app), before);
    let good = Assertion {
        expected: Some(json!([1, 2])),
        ..bad
    };
    let (id, revision) = app.put_assertion(LLM, good).unwrap();
    assert_eq!((id.as_str(), revision), ("x", 2));
    assert_eq!(app.page(LLM).unwrap().0.assertions.len(), 9);
    assert_eq!(app.remove_assertion(LLM, "x").unwrap(), 3);
    assert_eq!(app.page(LLM).unwrap().0.assertions.len(), 8);
    assert!(matches!(
        app.remove_assertion(LLM, "x"),
        Err(AppError::NotFound { .. })
    ));
}

#[test]
fn the_pure_core_runs_a_page_in_memory() {
    let page: Page = serde_json::from_str(SAMPLE).unwrap();
    let report =
        assertions::run_in_memory(&page, 0, "2026-01-01T00:00:00Z", &Limits::default()).unwrap();
    assert_eq!((report.passed, report.failed), (8, 0));
    // A re-run after an in-memory edit (as the TUI does) sees the edit.
    let mut edited = page.clone();
    edited.overrides.clear();
    let report =
        assertions::run_in_memory(&edited, 0, "2026-01-01T00:00:00Z", &Limits::default()).unwrap();
    let failed: Vec<&str> = report
        .results
        .iter()
        .filter(|r| !r.passed)
        .map(|r| r.assertion_id.as_str())
        .collect();
    assert_eq!(failed, ["opencode-llama-override-verified"]);
}

#[test]
fn a_schema_2_database_upgrades_and_keeps_its_pages() {
    let env = Env::new();
    {
        let mut old = Store::open_at(&env.db, 2).unwrap();
        let mut page: Page = serde_json::from_str(SAMPLE).unwrap();
        page.assertions.clear();
        old.insert_page(&page, false).unwrap();
        old.set_meta("seeded", "before").unwrap();
    }
    let mut app = env.app();
    assert_eq!(app.store().opened_at_version, 2);
    assert!(app.page(LLM).unwrap().0.assertions.is_empty());
    let pinned = app.pin_assertions(LLM, Some("t3-chat")).unwrap();
    assert_eq!((pinned.added, pinned.revision), (16, 2));
    assert!(app.run_assertions(LLM).unwrap().all_passed());
}

#[test]
fn deleting_a_page_deletes_its_assertions_and_results() {
    let env = Env::new();
    let mut app = env.app();
    app.run_assertions(LLM).unwrap();
    let count = |app: &App, table: &str| -> i64 {
        app.store()
            .connection()
            .query_row(
                &format!("SELECT COUNT(*) FROM {table} WHERE page_id = ?1"),
                [LLM],
                |r| r.get(0),
            )
            .unwrap()
    };
    assert_eq!(count(&app, "assertions"), 8);
    assert_eq!(count(&app, "assertion_results"), 8);
    let mut store = Store::open(&env.db).unwrap();
    assert!(store.delete_page(LLM).unwrap());
    assert_eq!(count(&app, "assertions"), 0);
    assert_eq!(count(&app, "assertion_results"), 0);
}

/// Renaming an assertion (an edit that changes its id) replaces it in place: one
/// revision, the old id gone, the position kept.
#[test]
fn a_rename_is_one_revision() {
    let env = Env::new();
    let mut app = env.app();
    let (page, revision) = app.page(LLM).unwrap();
    let first = page.assertions[0].clone();
    let renamed = Assertion {
        id: "renamed".into(),
        ..first.clone()
    };
    let (id, rev) = app
        .replace_assertion(LLM, Some(&first.id), renamed.clone())
        .unwrap();
    assert_eq!((id.as_str(), rev), ("renamed", revision + 1));
    let (after, _) = app.page(LLM).unwrap();
    assert_eq!(after.assertions.len(), page.assertions.len());
    assert_eq!(after.assertions[0], renamed);
    assert!(after.assertions.iter().all(|a| a.id != first.id));
    // Renaming onto another assertion's id is refused, and changes nothing.
    let clash = Assertion {
        id: page.assertions[1].id.clone(),
        ..first.clone()
    };
    assert!(app.replace_assertion(LLM, Some("renamed"), clash).is_err());
    assert_eq!(app.page(LLM).unwrap().1, revision + 1);
}

/// A dataset import that drops a row named by an override and by an assertion goes
/// through: the override is kept (inactive, flagged orphaned by `check`), the assertion
/// fails when the tests run, saying why; the row coming back revives both.
#[test]
fn a_dropped_row_orphans_its_override_and_fails_its_assertion() {
    let env = Env::new();
    let mut app = env.app();
    // llama-3.3-70b has the sample's override (opencode × llama); pin an assertion on
    // the t3-chat source and then drop both rows.
    let (page, _) = app.page(LLM).unwrap();
    app.put_assertion(
        LLM,
        serde_json::from_value(
            json!({"id": "t3", "select": T3, "path": "$.selectionVerdict",
            "matcher": "toEqual", "expected": 2}),
        )
        .unwrap(),
    )
    .unwrap();
    let keep = |d: &rulebench_core::model::Dataset, drop: &str| -> Vec<Value> {
        d.rows
            .iter()
            .filter(|r| r["id"] != drop)
            .map(|r| serde_json::to_value(r).unwrap())
            .collect()
    };
    let import = |app: &mut App, side, rows: Vec<Value>| {
        let bytes = serde_json::to_vec(&rows).unwrap();
        app.import_dataset_from(
            LLM,
            side,
            rulebench::app::dataset::DataInput::Bytes {
                name: "<t>",
                bytes: &bytes,
            },
            &Default::default(),
            &mut |_| {},
        )
    };
    use rulebench_core::model::Side;
    import(&mut app, Side::Target, keep(&page.target, "llama-3.3-70b")).expect("not refused");
    import(&mut app, Side::Source, keep(&page.source, "t3-chat")).expect("not refused");
    let (now, _) = app.page(LLM).unwrap();
    assert_eq!(
        now.overrides.len(),
        page.overrides.len(),
        "the override is kept"
    );
    let diags = app.check_page(LLM).unwrap();
    assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
    assert!(
        diags.iter().any(|d| d.code == Code::OrphanedOverride),
        "{diags:?}"
    );
    assert!(
        diags.iter().any(|d| d.code == Code::AssertionOrphaned),
        "{diags:?}"
    );
    let report = app.run_assertions(LLM).unwrap();
    let t3 = report
        .results
        .iter()
        .find(|r| r.assertion_id == "t3")
        .unwrap();
    assert!(!t3.passed);
    assert!(
        t3.message
            .as_deref()
            .unwrap()
            .contains("matches no source row"),
        "{:?}",
        t3.message
    );
    // The rows come back: the override applies again, the assertion passes.
    import(&mut app, Side::Target, keep(&page.target, "-")).unwrap();
    import(&mut app, Side::Source, keep(&page.source, "-")).unwrap();
    let report = app.run_assertions(LLM).unwrap();
    assert!(
        report
            .results
            .iter()
            .find(|r| r.assertion_id == "t3")
            .unwrap()
            .passed
    );
    let r = app.evaluate(LLM, "opencode").unwrap();
    let llama = r
        .names
        .targets
        .iter()
        .position(|t| t.id == "llama-3.3-70b")
        .unwrap();
    assert_eq!(r.eval.overrides.value(llama), Some(true));
}

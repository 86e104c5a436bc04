//! Integration tests of the command line and its result JSON: every command is run as a
//! process against a fresh database in a temporary directory.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use sha2::{Digest, Sha256};
use tempfile::TempDir;

const T3: &str = "clientType=web|id=t3-chat";
const LLM: &str = "llm-chat-clients";
const LOAN: &str = "loan-eligibility";
const PROVIDERS: &str = "provider-capabilities";
const SAMPLE_IDS: [&str; 3] = [LLM, LOAN, PROVIDERS];

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn finish(out: Output) -> (i32, String, String) {
    (
        out.status.code().expect("rulebench was killed by a signal"),
        String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    )
}

fn command(db: &Path, args: &[&str]) -> Command {
    common::ensure_db(db, args);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rulebench"));
    cmd.env_remove("RULEBENCH_DB")
        .arg("--db")
        .arg(db)
        .args(args);
    cmd
}

/// Runs `rulebench --db DB ARGS...`: (exit code, stdout, stderr).
fn rb(db: &Path, args: &[&str]) -> (i32, String, String) {
    finish(
        command(db, args)
            .stdin(Stdio::null())
            .output()
            .expect("run rulebench"),
    )
}

/// Runs `rulebench --db DB ARGS...` with `input` on stdin.
fn rb_stdin(db: &Path, args: &[&str], input: &str) -> (i32, String, String) {
    let mut child = command(db, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rulebench");
    // A command that refuses its arguments exits before reading stdin: the pipe is
    // then closed, which is no failure of the test (it made this one flaky).
    match child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input.as_bytes())
    {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.expect("write stdin"),
    }
    finish(child.wait_with_output().expect("wait for rulebench"))
}

/// Runs rulebench and asserts its exit code; returns (stdout, stderr).
#[track_caller]
fn expect(db: &Path, args: &[&str], code: i32) -> (String, String) {
    let (c, out, err) = rb(db, args);
    assert_eq!(
        c, code,
        "rulebench {args:?} exited {c}, expected {code}\nstdout:\n{out}\nstderr:\n{err}"
    );
    (out, err)
}

#[track_caller]
fn ok(db: &Path, args: &[&str]) -> String {
    expect(db, args, 0).0
}

/// A command that changes something: exit 0, nothing on stdout (data only goes
/// there), its status line on stderr.
#[track_caller]
fn changed(db: &Path, args: &[&str]) -> String {
    let (out, err) = expect(db, args, 0);
    assert_eq!(out, "", "status lines go to stderr: {args:?}");
    err
}

#[track_caller]
fn usage_error(db: &Path, args: &[&str]) -> String {
    let (_, err) = expect(db, args, 2);
    assert!(
        !err.trim().is_empty(),
        "exit 2 without a message for {args:?}"
    );
    err
}

#[track_caller]
fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// A fresh temporary database (created and seeded on first use).
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

    fn db(&self) -> &Path {
        &self.db
    }

    /// Writes a file in the temporary directory and returns its path as a string.
    fn file(&self, name: &str, text: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).expect("write file");
        path.to_str().expect("UTF-8 temp path").to_owned()
    }
}

fn sample_path(id: &str) -> String {
    format!("{}/sample-pages/{id}.json", env!("CARGO_MANIFEST_DIR"))
}

fn sample_text(id: &str) -> String {
    std::fs::read_to_string(sample_path(id)).expect("read sample page")
}

/// The text of the page the tests' databases hold as `llm-chat-clients`: the spec's own
/// page ([`common::SEED_CHAT`]), the fixture the tests below edit.
fn seed_chat_text() -> String {
    common::SEED_CHAT.to_owned()
}

/// `text` with `from` replaced once; panics when `from` is not there.
#[track_caller]
fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "fixture text lacks {from:?}");
    text.replacen(from, to, 1)
}

/// 1-based line:col (in characters) where `needle` first starts in `text`.
#[track_caller]
fn line_col(text: &str, needle: &str) -> String {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in text"));
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    format!("{line}:{col}")
}

fn sha256_hex(s: &str) -> String {
    format!("{:x}", Sha256::digest(s.as_bytes()))
}

fn pages_json(db: &Path) -> Vec<Value> {
    match json(&ok(db, &["pages", "--json"])) {
        Value::Array(pages) => pages,
        other => panic!("pages --json is not an array: {other}"),
    }
}

fn page_summary(db: &Path, id: &str) -> Value {
    pages_json(db)
        .into_iter()
        .find(|p| p["id"] == id)
        .unwrap_or_else(|| panic!("page {id} not listed by pages --json"))
}

fn revision(db: &Path, id: &str) -> i64 {
    page_summary(db, id)["revision"]
        .as_i64()
        .expect("revision is an integer")
}

fn export(db: &Path, id: &str) -> Value {
    json(&ok(db, &["export", id]))
}

/// Everything a user can see of the database: `pages --json` and the export of every page.
fn snapshot(db: &Path) -> Value {
    let pages = pages_json(db);
    let exports: Vec<Value> = pages
        .iter()
        .map(|p| export(db, p["id"].as_str().expect("page id is a string")))
        .collect();
    serde_json::json!({ "pages": pages, "exports": exports })
}

/// Asserts that the database looks exactly as in `before` (a [`snapshot`]).
#[track_caller]
fn assert_unchanged(db: &Path, before: &Value, what: &str) {
    if let Some(d) = json_diff(&snapshot(db), before, false, "") {
        panic!("{what} changed the database: {d}");
    }
}

fn short(v: Option<&Value>) -> String {
    let s = v.map_or("(absent)".to_owned(), Value::to_string);
    if s.chars().count() > 200 {
        format!("{}…", s.chars().take(200).collect::<String>())
    } else {
        s
    }
}

/// The first place where two JSON values differ, as `pointer: actual vs expected`. With
/// `loose`, numbers compare by value (`1` equals `1.0`, as in JSON).
fn json_diff(a: &Value, b: &Value, loose: bool, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x.keys().chain(y.keys()).find_map(|k| {
            let p = format!("{path}/{k}");
            match (x.get(k), y.get(k)) {
                (Some(u), Some(v)) => json_diff(u, v, loose, &p),
                (u, v) => Some(format!("{p}: {} vs {}", short(u), short(v))),
            }
        }),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (u, v))| json_diff(u, v, loose, &format!("{path}/{i}"))),
        (Value::Number(x), Value::Number(y)) if loose => {
            (x.as_f64() != y.as_f64()).then(|| format!("{path}: {x} vs {y}"))
        }
        _ => (a != b).then(|| format!("{path}: {} vs {}", short(Some(a)), short(Some(b)))),
    }
}

/// Asserts two pages are the same JSON (numbers by value: the page file writes `1.0`,
/// an export may write `1`).
#[track_caller]
fn assert_same_page(actual: &Value, expected: &Value) {
    // `$schema` names the schema for editors (a path in the sample pages, the
    // schema's id in an export); it is not part of the page.
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("$schema");
        }
        v
    };
    let (mut actual, expected) = (strip(actual), strip(expected));
    // A rule written as an `expression` exports its `logic` beside it (the JSONLogic it
    // reads as); a page file may give the expression alone.
    if let (Some(a), Some(e)) = (
        actual.get_mut("rules").and_then(Value::as_array_mut),
        expected.get("rules").and_then(Value::as_array),
    ) {
        for (a, e) in a.iter_mut().zip(e) {
            if e.get("expression").is_some()
                && e.get("logic").is_none()
                && let Some(a) = a.as_object_mut()
            {
                a.remove("logic");
            }
        }
    }
    if let Some(d) = json_diff(&actual, &expected, true, "") {
        panic!("pages differ at {d}");
    }
}

fn evaluate(db: &Path, page: &str, select: &str) -> Value {
    json(&ok(db, &["evaluate", page, "--select", select]))
}

#[track_caller]
fn target<'a>(result: &'a Value, id: &str) -> &'a Value {
    result["targets"]
        .as_array()
        .expect("targets is an array")
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("target {id} not in result"))
}

#[track_caller]
fn assert_target(result: &Value, id: &str, verdict: u64, score: f64) {
    let t = target(result, id);
    assert_eq!(t["verdict"].as_u64(), Some(verdict), "verdict of {id}: {t}");
    let s = t["score"].as_f64().expect("score is a number");
    assert!(
        (s - score).abs() < 1e-9,
        "score of {id}: {s}, expected {score}"
    );
}

#[track_caller]
fn assert_contains(haystack: &str, needle: &str) {
    assert!(
        haystack.contains(needle),
        "expected {needle:?} in:\n{haystack}"
    );
}

/// A small valid page with the given id.
fn small_page(id: &str, name: &str) -> String {
    format!(
        r#"{{
  "format": "rulebench.page/v1",
  "id": "{id}",
  "name": "{name}",
  "source": {{
    "name": "Clients",
    "key": ["id"],
    "label": "name",
    "rows": [
      {{"id": "a", "name": "A", "needsX": true}},
      {{"id": "b", "name": "B", "needsX": false}}
    ]
  }},
  "target": {{
    "name": "Servers",
    "key": ["id"],
    "label": "name",
    "rows": [
      {{"id": "s1", "name": "S1", "hasX": true}},
      {{"id": "s2", "name": "S2", "hasX": false}}
    ]
  }},
  "rules": [
    {{"id": "x", "name": "X support", "required": true,
      "logic": {{"or": [{{"==": [{{"var": "source.needsX"}}, false]}}, {{"==": [{{"var": "target.hasX"}}, true]}}]}}}}
  ],
  "devicePolicy": {{"requiredMode": "ANY_REQUIRED_FAIL_IS_0", "fullThreshold": 1.0, "partialThreshold": 0.4}},
  "selectionPolicy": {{"aggregate": {{"mode": "ANY_DEVICE_FULL_IS_COMPATIBLE", "elseMode": "ANY_DEVICE_PARTIAL_IS_PARTIAL"}},
                       "recommendation": {{"strategy": "HIGHEST_VERDICT_THEN_SCORE"}}}}
}}
"#
    )
}

/// A JSON rule for loan-eligibility.
fn loan_rule(id: &str) -> String {
    format!(
        r#"{{"id": "{id}", "name": "Rule {id}", "required": false, "weight": 1,
  "logic": {{">=": [{{"var": "source.age"}}, 18]}}}}"#
    )
}

// ---------------------------------------------------------------------------------------------
// pages
// ---------------------------------------------------------------------------------------------

#[test]
fn pages_lists_the_sample_pages_as_text() {
    let env = Env::new();
    let out = ok(env.db(), &["pages"]);
    for id in SAMPLE_IDS {
        assert!(
            out.lines().any(|l| l.split_whitespace().next() == Some(id)),
            "{id} not listed:\n{out}"
        );
    }
}

#[test]
fn pages_json_has_id_name_rules_revision() {
    let env = Env::new();
    let pages = pages_json(env.db());
    let mut ids: Vec<&str> = pages.iter().map(|p| p["id"].as_str().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, SAMPLE_IDS);
    for p in &pages {
        assert!(p["name"].is_string(), "name: {p}");
        assert!(p["rules"].is_u64(), "rules: {p}");
        assert_eq!(
            p["revision"].as_i64(),
            Some(1),
            "a seeded page is at revision 1: {p}"
        );
    }
    let llm = page_summary(env.db(), LLM);
    assert_eq!(llm["name"], "Chat clients × LLM models");
    assert_eq!(llm["rules"], 9);
    assert_eq!(page_summary(env.db(), LOAN)["rules"], 8);
}

#[test]
fn database_from_rulebench_db_environment_variable() {
    let env = Env::new();
    let db = env.dir.path().join("from-env.db");
    let run = |args: &[&str]| {
        finish(
            Command::new(env!("CARGO_BIN_EXE_rulebench"))
                .env("RULEBENCH_DB", &db)
                .args(args)
                .stdin(Stdio::null())
                .output()
                .expect("run rulebench"),
        )
    };
    // A command that only reads creates no database at a path that is not there (a
    // typo): it says so, naming the path.
    let (code, _, err) = run(&["pages"]);
    assert_eq!(code, 2);
    assert!(err.contains("from-env.db does not exist"), "{err}");
    assert!(!db.exists(), "a read made a database");
    let (code, _, err) = run(&["db", "init"]);
    assert_eq!(code, 0, "stderr: {err}");
    let (code, out, err) = run(&["pages"]);
    assert_eq!(code, 0, "stderr: {err}");
    for id in SAMPLE_IDS {
        assert_contains(&out, id);
    }
    assert!(
        db.is_file(),
        "the database was not created at $RULEBENCH_DB"
    );

    let file = env.file("env-page.json", &small_page("env-page", "Env page"));
    let (code, _, err) = run(&["import", &file]);
    assert_eq!(code, 0, "stderr: {err}");
    // The same database, named with --db, has the page.
    assert_eq!(revision(&db, "env-page"), 1);
    // --db wins over $RULEBENCH_DB.
    let other = env.dir.path().join("other.db");
    let (code, out, err) = finish(
        Command::new(env!("CARGO_BIN_EXE_rulebench"))
            .env("RULEBENCH_DB", &db)
            .arg("--db")
            .arg(&other)
            .args(["db", "init"])
            .output()
            .expect("run rulebench"),
    );
    assert_eq!(code, 0, "stderr: {err}");
    assert!(other.is_file(), "--db did not take precedence: {out}");
    let (code, out, err) = finish(
        Command::new(env!("CARGO_BIN_EXE_rulebench"))
            .env("RULEBENCH_DB", &db)
            .arg("--db")
            .arg(&other)
            .args(["pages", "--json"])
            .output()
            .expect("run rulebench"),
    );
    assert_eq!(code, 0, "stderr: {err}");
    assert!(
        !out.contains("env-page"),
        "--db did not take precedence:\n{out}"
    );
}

// ---------------------------------------------------------------------------------------------
// import
// ---------------------------------------------------------------------------------------------

#[test]
fn import_a_new_page_file() {
    let env = Env::new();
    let file = env.file("small.json", &small_page("small", "Small page"));
    let out = changed(env.db(), &["import", &file]);
    assert_contains(&out, "small");
    let p = page_summary(env.db(), "small");
    assert_eq!(p["name"], "Small page");
    assert_eq!(p["rules"], 1);
    assert_eq!(p["revision"], 1);
    assert_eq!(pages_json(env.db()).len(), 4);

    let r = evaluate(env.db(), "small", "a");
    assert_eq!(r["selectionVerdict"], 2);
    assert_eq!(r["recommendedTargetId"], "s1");
    assert_target(&r, "s1", 2, 1.0);
    assert_eq!(target(&r, "s2")["verdict"], 0);
    assert_eq!(target(&r, "s2")["reason"], "required-fail");
}

#[test]
fn import_existing_id_needs_replace() {
    let env = Env::new();
    let before = snapshot(env.db());
    let err = usage_error(env.db(), &["import", &sample_path(LOAN)]);
    assert_contains(&err, LOAN);
    assert_contains(&err, "--replace");
    assert_unchanged(env.db(), &before, "a refused import changed the database");

    let out = changed(env.db(), &["import", "--replace", &sample_path(LOAN)]);
    assert_contains(&out, LOAN);
    assert_eq!(revision(env.db(), LOAN), 2);
    assert_eq!(revision(env.db(), LLM), 1);
    assert_same_page(&export(env.db(), LOAN), &json(&sample_text(LOAN)));
}

#[test]
fn import_several_files_one_bad() {
    let env = Env::new();
    let good1 = env.file("good1.json", &small_page("good-one", "Good one"));
    let bad_text = "{\n  \"format\": \"rulebench.page/v1\",\n  \"id\": \"bad\",\n  oops\n}\n";
    let bad = env.file("bad.json", bad_text);
    let good2 = env.file("good2.json", &small_page("good-two", "Good two"));

    let (out, err) = expect(env.db(), &["import", &good1, &bad, &good2], 2);
    assert_eq!(out, "");
    assert_contains(&err, "good-one");
    assert_contains(&err, "good-two");
    assert_contains(&err, &bad);
    assert_contains(&err, &line_col(bad_text, "oops"));
    let failed = err
        .lines()
        .filter(|l| l.starts_with("error"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        !failed.contains(&good1) && !failed.contains(&good2),
        "good files reported as failed:\n{err}"
    );

    let ids: Vec<String> = pages_json(env.db())
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect();
    assert!(ids.contains(&"good-one".to_owned()), "{ids:?}");
    assert!(ids.contains(&"good-two".to_owned()), "{ids:?}");
    assert!(!ids.contains(&"bad".to_owned()), "{ids:?}");
    assert_eq!(ids.len(), 5);
}

/// Imports `text` with --replace, expects exit 2 and an unchanged database; returns stderr.
fn failed_import_changes_nothing(env: &Env, name: &str, text: &str) -> String {
    // Evaluate first, so the result cache holds something too.
    evaluate(env.db(), LLM, T3);
    let before = snapshot(env.db());
    let file = env.file(name, text);
    let err = usage_error(env.db(), &["import", "--replace", &file]);
    assert_contains(&err, &file);
    assert_unchanged(env.db(), &before, "a failed import changed the database");
    let again = evaluate(env.db(), LLM, T3);
    assert_eq!(again["cache"], "hit");
    assert_eq!(again["revisionId"], 1);
    err
}

#[test]
fn failed_import_json_syntax_error_leaves_database_unchanged() {
    let env = Env::new();
    let text = replace_once(
        &seed_chat_text(),
        "\"name\": \"Chat clients × LLM models\",",
        "\"name\": \"Chat clients × LLM models\"",
    );
    let err = failed_import_changes_nothing(&env, "syntax.json", &text);
    // serde_json notices the missing comma at the next key.
    assert_contains(&err, &line_col(&text, "\"description\""));
    assert_contains(&err, "json-syntax");
}

#[test]
fn failed_import_unknown_operator_leaves_database_unchanged() {
    let env = Env::new();
    let text = replace_once(
        &seed_chat_text(),
        r#""logic": {"or": [{"==": [{"var": "source.needsToolCalling"}"#,
        r#""logic": {"orr": [{"==": [{"var": "source.needsToolCalling"}"#,
    );
    let err = failed_import_changes_nothing(&env, "operator.json", &text);
    assert_contains(&err, "`orr`");
    assert_contains(&err, "did you mean `or`");
    assert_contains(&err, "/rules/1/logic/orr");
    assert_contains(&err, &line_col(&text, "\"orr\""));
}

#[test]
fn failed_import_unknown_field_leaves_database_unchanged() {
    let env = Env::new();
    let text = replace_once(
        &seed_chat_text(),
        "\"target.supportsStreaming\"",
        "\"target.supportStreaming\"",
    );
    let err = failed_import_changes_nothing(&env, "field.json", &text);
    assert_contains(&err, "target.supportStreaming");
    assert_contains(&err, "did you mean `target.supportsStreaming`");
    assert_contains(&err, "/rules/0/logic/");
    let line = line_col(&text, "\"target.supportStreaming\"");
    let line = line.split(':').next().unwrap();
    assert_contains(&err, &format!(" {line}:"));
}

#[test]
fn failed_import_personal_tier_over_rule_limit_leaves_database_unchanged() {
    let env = Env::new();
    let mut page = json(&sample_text(LOAN));
    assert_eq!(page["organization"]["planTier"], "personal");
    let rules = page["rules"].as_array_mut().unwrap();
    assert_eq!(rules.len(), 8);
    for i in 0..3 {
        let mut r = rules[0].clone();
        r["id"] = Value::from(format!("extra-{i}"));
        r["name"] = Value::from(format!("Extra {i}"));
        rules.push(r);
    }
    let text = serde_json::to_string_pretty(&page).unwrap();
    let err = failed_import_changes_nothing(&env, "eleven.json", &text);
    assert_contains(&err, "Rule limit reached (10/10)");

    // Also as a new page id.
    page["id"] = Value::from("loan-eleven");
    let before = snapshot(env.db());
    let file = env.file(
        "eleven-new.json",
        &serde_json::to_string_pretty(&page).unwrap(),
    );
    let err = usage_error(env.db(), &["import", &file]);
    assert_contains(&err, "Rule limit reached (10/10)");
    assert_unchanged(env.db(), &before, "the failed command");
}

// ---------------------------------------------------------------------------------------------
// export
// ---------------------------------------------------------------------------------------------

#[test]
fn export_import_round_trip_for_every_sample_page() {
    let env = Env::new();
    for id in SAMPLE_IDS {
        let first = ok(env.db(), &["export", id]);
        let file = env.file(&format!("{id}.export.json"), &first);
        ok(env.db(), &["import", "--replace", &file]);
        assert_eq!(revision(env.db(), id), 2);
        let second = ok(env.db(), &["export", id]);
        if let Some(d) = json_diff(&json(&second), &json(&first), false, "") {
            panic!("import(export({id})) != {id}: {d}");
        }
    }
}

#[test]
fn export_to_a_file() {
    let env = Env::new();
    let path = env.dir.path().join("out.json");
    let path_str = path.to_str().unwrap();
    let out = ok(env.db(), &["export", LLM, "-o", path_str]);
    assert!(
        !out.contains("\"format\""),
        "export -o also wrote the page to stdout"
    );
    let written = std::fs::read_to_string(&path).expect("export -o wrote the file");
    assert_eq!(json(&written), export(env.db(), LLM));
    assert_eq!(json(&written)["id"], LLM);

    let err = usage_error(env.db(), &["export", "llm-chat-client"]);
    assert_contains(&err, "did you mean `llm-chat-clients`");
}

// ---------------------------------------------------------------------------------------------
// evaluate
// ---------------------------------------------------------------------------------------------

#[test]
fn evaluate_t3_chat_json() {
    let env = Env::new();
    let r = evaluate(env.db(), LLM, T3);
    assert_eq!(r["pageId"], LLM);
    assert_eq!(r["selectionKey"], T3);
    assert_eq!(r["selectionVerdict"], 2);
    assert_eq!(r["recommendedTargetId"], "gpt-4.1");
    assert_eq!(r["targets"].as_array().unwrap().len(), 14);
    assert_target(&r, "gpt-4.1", 2, 1.0);
    assert_target(&r, "claude-3.7-sonnet", 2, 1.0);
    assert_target(&r, "llama-3.3-70b", 1, 0.6);

    let gpt = target(&r, "gpt-4.1");
    assert_eq!(gpt["reason"], "full");
    assert_eq!(gpt["displayName"], "GPT-4.1");
    assert_eq!(gpt["provider"], "openai");
    assert_eq!(gpt["rules"].as_object().unwrap().len(), 9);
    let llama = target(&r, "llama-3.3-70b");
    assert_eq!(llama["reason"], "partial");
    assert_eq!(llama["rules"]["tool-calling"], false);
    assert_eq!(llama["rules"]["structured-outputs"], false);
    assert_eq!(llama["rules"]["streaming"], true);
    assert!(r["features"].is_array());
    assert!(r["evaluatedAt"].is_string());
}

#[test]
fn evaluate_caches_results_per_revision() {
    let env = Env::new();
    let first = evaluate(env.db(), LLM, T3);
    assert_eq!(first["cache"], "miss");
    let second = evaluate(env.db(), LLM, T3);
    assert_eq!(second["cache"], "hit");
    assert_eq!(second["revisionId"], first["revisionId"]);
    let strip = |mut v: Value| {
        v.as_object_mut().unwrap().remove("cache");
        v
    };
    assert_eq!(
        strip(second),
        strip(first.clone()),
        "the cached result differs"
    );

    // The same selection named by id or keyHash is the same cache entry.
    assert_eq!(evaluate(env.db(), LLM, "t3-chat")["cache"], "hit");
    assert_eq!(evaluate(env.db(), LLM, &sha256_hex(T3))["cache"], "hit");

    // A change makes a new revision: a miss again.
    ok(env.db(), &["policy", "set", LLM, "fullThreshold=0.9"]);
    let third = evaluate(env.db(), LLM, T3);
    assert_eq!(third["cache"], "miss");
    assert_ne!(third["revisionId"], first["revisionId"]);
    assert_eq!(third["revisionId"], revision(env.db(), LLM));
}

#[test]
fn evaluate_table_marks_the_recommended_target() {
    let env = Env::new();
    let out = ok(
        env.db(),
        &["evaluate", LLM, "--select", T3, "--format", "table"],
    );
    let starred: Vec<&str> = out.lines().filter(|l| l.contains('★')).collect();
    assert_eq!(starred.len(), 1, "one ★ expected:\n{out}");
    assert!(
        starred[0].split_whitespace().any(|w| w == "gpt-4.1"),
        "★ not on gpt-4.1:\n{out}"
    );
    for id in ["claude-3.7-sonnet", "llama-3.3-70b"] {
        assert_contains(&out, id);
    }
}

#[test]
fn evaluate_select_unknown_key_is_bad_input() {
    let env = Env::new();
    let err = usage_error(
        env.db(),
        &["evaluate", LLM, "--select", "clientType=web|id=t3-chatt"],
    );
    assert_contains(&err, "t3-chatt");
    assert_contains(&err, &format!("did you mean `{T3}`"));

    let err = usage_error(env.db(), &["evaluate", LLM, "--select", "no-such-row"]);
    assert_contains(&err, "no-such-row");
    assert_contains(&err, "hint");

    usage_error(env.db(), &["evaluate", "no-such-page", "--select", T3]);
    usage_error(env.db(), &["evaluate", LLM]);
    usage_error(
        env.db(),
        &["evaluate", LLM, "--select", T3, "--format", "xml"],
    );
}

#[test]
fn evaluate_all_json() {
    let env = Env::new();
    let all = json(&ok(
        env.db(),
        &["evaluate", LLM, "--all", "--format", "json"],
    ));
    let all = all.as_array().expect("an array of results");
    assert_eq!(all.len(), 7);
    let t3 = all
        .iter()
        .find(|r| r["selectionKey"] == T3)
        .expect("t3.chat in --all");
    assert_eq!(t3["selectionVerdict"], 2);
    assert_eq!(t3["recommendedTargetId"], "gpt-4.1");
    assert_target(t3, "llama-3.3-70b", 1, 0.6);
    // json is the default.
    assert_eq!(
        json(&ok(env.db(), &["evaluate", LLM, "--all"]))
            .as_array()
            .unwrap()
            .len(),
        7
    );
}

#[test]
fn evaluate_all_csv() {
    let env = Env::new();
    let out = ok(env.db(), &["evaluate", LLM, "--all", "--format", "csv"]);
    let mut lines = out.lines();
    let header = lines.next().expect("a header");
    assert!(
        header.contains("selectionKey") && header.contains("targetId"),
        "header: {header}"
    );
    let columns = header.split(',').count();
    let summary = page_summary(env.db(), LLM);
    let (sources, targets) = (
        summary["sources"].as_u64().unwrap() as usize,
        summary["targets"].as_u64().unwrap() as usize,
    );
    assert_eq!((sources, targets), (7, 14));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(
        rows.len(),
        sources * targets,
        "one line per source × target:\n{out}"
    );
    let key_col = header.split(',').position(|h| h == "selectionKey").unwrap();
    let target_col = header.split(',').position(|h| h == "targetId").unwrap();
    let mut pairs = std::collections::BTreeSet::new();
    for row in &rows {
        let fields: Vec<&str> = row.split(',').collect();
        assert_eq!(fields.len(), columns, "row: {row}");
        pairs.insert((fields[key_col].to_owned(), fields[target_col].to_owned()));
    }
    assert_eq!(
        pairs.len(),
        sources * targets,
        "duplicate source × target lines"
    );
    assert!(pairs.contains(&(T3.to_owned(), "gpt-4.1".to_owned())));
}

#[test]
fn evaluate_all_markdown() {
    let env = Env::new();
    let out = ok(env.db(), &["evaluate", LLM, "--all", "--format", "md"]);
    let table: Vec<&str> = out.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(table.len(), 2 + 7, "header, separator and 7 rows:\n{out}");
    assert!(table[1].contains("---"), "separator: {}", table[1]);
    let cells = table[0].matches('|').count();
    for row in &table {
        assert!(row.ends_with('|'), "row: {row}");
        assert_eq!(
            row.matches('|').count() - row.matches("\\|").count(),
            cells,
            "ragged row: {row}"
        );
    }
    assert_contains(table[0], "gpt-4.1");
    assert!(
        table
            .iter()
            .any(|r| r.contains("t3-chat") && r.contains("gpt-4.1")),
        "no t3.chat row:\n{out}"
    );
}

#[test]
fn evaluate_all_table_prints_a_table_per_selection() {
    let env = Env::new();
    let out = ok(env.db(), &["evaluate", LLM, "--all", "--format", "table"]);
    let sources = export(env.db(), LLM)["source"]["rows"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(out.matches("selection verdict").count(), sources, "{out}");
    assert_contains(&out, T3);
    let err = usage_error(env.db(), &["evaluate", LLM, "--all", "--select", T3]);
    assert_contains(&err, "--select");
}

// ---------------------------------------------------------------------------------------------
// check and eval
// ---------------------------------------------------------------------------------------------

#[test]
fn check_sample_pages_pass() {
    let env = Env::new();
    for id in SAMPLE_IDS {
        let out = ok(env.db(), &["check", id]);
        assert_contains(&out, "0 errors");
        // The file checks the same.
        let out = ok(env.db(), &["check", &sample_path(id)]);
        assert_contains(&out, "0 errors");
    }
    usage_error(env.db(), &["check", "no-such-page"]);
}

#[test]
fn check_invalid_page_file_lists_diagnostics_with_line_col() {
    let env = Env::new();
    let text = replace_once(
        &seed_chat_text(),
        r#""logic": {"or": [{"==": [{"var": "source.needsToolCalling"}"#,
        r#""logic": {"orr": [{"==": [{"var": "source.needsToolCalling"}"#,
    );
    let text = replace_once(&text, "\"target.contextWindow\"", "\"target.contextWindw\"");
    let file = env.file("invalid.json", &text);
    let before = snapshot(env.db());
    let (out, _) = expect(env.db(), &["check", &file], 1);
    assert_contains(&out, &line_col(&text, "\"orr\""));
    assert_contains(&out, "unknown-operator");
    assert_contains(&out, "did you mean `or`");
    let field_line = line_col(&text, "\"target.contextWindw\"");
    assert_contains(
        &out,
        &format!(" {}:", field_line.split(':').next().unwrap()),
    );
    assert_contains(&out, "did you mean `target.contextWindow`");
    assert_contains(&out, "2 errors");
    assert_unchanged(env.db(), &before, "check changed the database");

    // A syntax error.
    let bad_text = "{\n  \"id\": \"x\",,\n}\n";
    let bad = env.file("syntax.json", bad_text);
    let (out, _) = expect(env.db(), &["check", &bad], 1);
    assert_contains(&out, &line_col(bad_text, ",\n}"));
}

#[test]
fn check_json_format() {
    let env = Env::new();
    let text = replace_once(
        &seed_chat_text(),
        "\"target.supportsStreaming\"",
        "\"target.supportStreaming\"",
    );
    let file = env.file("field.json", &text);
    let (out, _) = expect(env.db(), &["check", &file, "--format", "json"], 1);
    let diags = json(&out);
    let diags = diags.as_array().expect("an array of diagnostics");
    let errors: Vec<&Value> = diags.iter().filter(|d| d["severity"] == "error").collect();
    assert_eq!(errors.len(), 1, "{out}");
    let e = errors[0];
    assert_eq!(e["code"], "unknown-field");
    assert!(
        e["pointer"]
            .as_str()
            .unwrap()
            .starts_with("/rules/0/logic/"),
        "{e}"
    );
    assert!(e["line"].is_u64() && e["column"].is_u64(), "{e}");
    let expected_line: u64 = line_col(&text, "\"target.supportStreaming\"")
        .split(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(e["line"], expected_line);
    assert_contains(e["hint"].as_str().unwrap(), "target.supportsStreaming");

    let out = ok(env.db(), &["check", LLM, "--format", "json"]);
    let diags = json(&out);
    assert!(
        diags
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["severity"] != "error"),
        "{out}"
    );
}

#[test]
fn eval_plain_jsonlogic() {
    let env = Env::new();
    let out = ok(
        env.db(),
        &["eval", "--logic", r#"{"+":[1,2]}"#, "--data", "null"],
    );
    assert_eq!(json(&out), Value::from(3));
    let out = ok(
        env.db(),
        &[
            "eval",
            "--logic",
            r#"{"var":"a.b"}"#,
            "--data",
            r#"{"a":{"b":"x"}}"#,
        ],
    );
    assert_eq!(json(&out), Value::from("x"));
}

#[test]
fn eval_invalid_logic_json_is_bad_input() {
    let env = Env::new();
    let err = usage_error(
        env.db(),
        &["eval", "--logic", r#"{"+":[1,2]"#, "--data", "null"],
    );
    assert_contains(&err, "--logic");
    assert_contains(&err, "1:10");
    let err = usage_error(env.db(), &["eval", "--logic", "1", "--data", "{\n  nope"]);
    assert_contains(&err, "--data");
    assert_contains(&err, "2:3");
}

// ---------------------------------------------------------------------------------------------
// rule add / rm
// ---------------------------------------------------------------------------------------------

#[test]
fn rule_add_from_file_and_from_stdin() {
    let env = Env::new();
    let file = env.file("r1.json", &loan_rule("r1"));
    let out = changed(env.db(), &["rule", "add", LOAN, &file]);
    assert_contains(&out, "r1");
    assert_eq!(revision(env.db(), LOAN), 2);
    assert_eq!(page_summary(env.db(), LOAN)["rules"], 9);

    let (code, out, err) = rb_stdin(env.db(), &["rule", "add", LOAN, "-"], &loan_rule("r2"));
    assert_eq!(code, 0, "stderr: {err}");
    assert_eq!(out, "");
    assert_contains(&err, "r2");
    assert_eq!(revision(env.db(), LOAN), 3);
    assert_eq!(page_summary(env.db(), LOAN)["rules"], 10);

    let page = export(env.db(), LOAN);
    let ids: Vec<&str> = page["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(&ids[8..], ["r1", "r2"]);
    let r2 = &page["rules"][9];
    assert_eq!(r2["name"], "Rule r2");
    assert_eq!(r2["logic"], json(r#"{">=": [{"var": "source.age"}, 18]}"#));

    // The new rules are evaluated.
    let r = evaluate(env.db(), LOAN, "app-001");
    for t in r["targets"].as_array().unwrap() {
        assert_eq!(t["rules"]["r1"], true, "{t}");
        assert_eq!(t["rules"]["r2"], true, "{t}");
    }
}

#[test]
fn rule_add_existing_id_needs_replace() {
    let env = Env::new();
    let file = env.file("r1.json", &loan_rule("r1"));
    ok(env.db(), &["rule", "add", LOAN, &file]);
    let before = snapshot(env.db());
    let err = usage_error(env.db(), &["rule", "add", LOAN, &file]);
    assert_contains(&err, "r1");
    assert_contains(&err, "--replace");
    assert_unchanged(env.db(), &before, "the failed command");

    // A sample rule's id too.
    let (code, _, err) = rb_stdin(
        env.db(),
        &["rule", "add", LOAN, "-"],
        r#"{"id": "minimum-age", "name": "Minimum Age", "logic": true}"#,
    );
    assert_eq!(code, 2, "stderr: {err}");
    assert_contains(&err, "minimum-age");
    assert_unchanged(env.db(), &before, "the failed command");

    let changed = loan_rule("r1").replace("Rule r1", "Rule one");
    let (code, _, err) = rb_stdin(env.db(), &["rule", "add", LOAN, "-", "--replace"], &changed);
    assert_eq!(code, 0, "stderr: {err}");
    assert_eq!(revision(env.db(), LOAN), 3);
    let page = export(env.db(), LOAN);
    let rules = page["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 9);
    assert_eq!(rules[8]["name"], "Rule one");
}

#[test]
fn rule_add_with_unknown_field_fails_and_leaves_page_unchanged() {
    let env = Env::new();
    let before = snapshot(env.db());
    let text = r#"{"id": "bad", "name": "Bad",
  "logic": {">=": [{"var": "source.agee"}, 18]}}"#;
    let (code, _, err) = rb_stdin(env.db(), &["rule", "add", LOAN, "-"], text);
    assert_eq!(code, 2, "stderr: {err}");
    assert_contains(&err, "source.agee");
    assert_contains(&err, "did you mean `source.age`");
    assert_contains(&err, &line_col(text, "\"var\": \"source.agee\""));
    assert_unchanged(env.db(), &before, "the failed command");

    let file = env.file("bad.json", text);
    let err = usage_error(env.db(), &["rule", "add", LOAN, &file]);
    assert_contains(&err, &file);
    assert_unchanged(env.db(), &before, "the failed command");

    // Bad JSON and an unknown page.
    let (code, _, err) = rb_stdin(env.db(), &["rule", "add", LOAN, "-"], "{\"id\": ");
    assert_eq!(code, 2, "stderr: {err}");
    assert_contains(&err, "1:");
    let err = usage_error(env.db(), &["rule", "add", "loan-eligibilty", &file]);
    assert_contains(&err, "did you mean `loan-eligibility`");
    assert_unchanged(env.db(), &before, "the failed command");
}

#[test]
fn rule_rm_removes_a_rule() {
    let env = Env::new();
    let file = env.file("r1.json", &loan_rule("r1"));
    ok(env.db(), &["rule", "add", LOAN, &file]);
    assert_eq!(revision(env.db(), LOAN), 2);
    let out = changed(env.db(), &["rule", "rm", LOAN, "r1"]);
    assert_contains(&out, "r1");
    assert_eq!(revision(env.db(), LOAN), 3);
    assert_eq!(page_summary(env.db(), LOAN)["rules"], 8);
    let mut page = export(env.db(), LOAN);
    assert_same_page(&page, &json(&sample_text(LOAN)));

    // A sample rule.
    ok(env.db(), &["rule", "rm", LOAN, "collateral"]);
    assert_eq!(revision(env.db(), LOAN), 4);
    page = export(env.db(), LOAN);
    assert!(
        page["rules"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["id"] != "collateral")
    );
    let r = evaluate(env.db(), LOAN, "app-001");
    assert!(r["targets"][0]["rules"].get("collateral").is_none());
}

#[test]
fn rule_rm_unknown_rule_is_bad_input() {
    let env = Env::new();
    let before = snapshot(env.db());
    let err = usage_error(env.db(), &["rule", "rm", LOAN, "credit-scor"]);
    assert_contains(&err, "credit-scor");
    assert_contains(&err, "did you mean `credit-score`");
    let err = usage_error(env.db(), &["rule", "rm", LOAN, "zzzzzzzzzz"]);
    assert_contains(&err, "zzzzzzzzzz");
    assert_contains(&err, "hint");
    assert_unchanged(env.db(), &before, "the failed command");
}

#[test]
fn rule_limit_of_personal_tier() {
    let env = Env::new();
    assert_eq!(
        export(env.db(), LOAN)["organization"]["planTier"],
        "personal"
    );
    assert_eq!(page_summary(env.db(), LOAN)["rules"], 8);
    for (i, id) in ["ninth", "tenth"].into_iter().enumerate() {
        let (code, _, err) = rb_stdin(env.db(), &["rule", "add", LOAN, "-"], &loan_rule(id));
        assert_eq!(code, 0, "rule {id}: {err}");
        assert_eq!(revision(env.db(), LOAN), 2 + i as i64);
    }
    assert_eq!(page_summary(env.db(), LOAN)["rules"], 10);

    let before = snapshot(env.db());
    let (code, _, err) = rb_stdin(
        env.db(),
        &["rule", "add", LOAN, "-"],
        &loan_rule("eleventh"),
    );
    assert_eq!(code, 2, "stderr: {err}");
    assert_contains(&err, "Rule limit reached (10/10)");
    assert_unchanged(env.db(), &before, "a refused rule changed the page");

    // Replacing an existing rule is not adding one.
    let changed = loan_rule("tenth").replace("Rule tenth", "Rule 10");
    let (code, _, err) = rb_stdin(env.db(), &["rule", "add", LOAN, "-", "--replace"], &changed);
    assert_eq!(code, 0, "stderr: {err}");
    assert_eq!(page_summary(env.db(), LOAN)["rules"], 10);

    // A team page is not limited at 10.
    for i in 0..2 {
        let rule = format!(r#"{{"id": "extra-{i}", "name": "Extra {i}", "logic": true}}"#);
        let (code, _, err) = rb_stdin(env.db(), &["rule", "add", LLM, "-"], &rule);
        assert_eq!(code, 0, "stderr: {err}");
    }
    assert_eq!(page_summary(env.db(), LLM)["rules"], 11);
}

// ---------------------------------------------------------------------------------------------
// overrides
// ---------------------------------------------------------------------------------------------

#[test]
fn override_add_and_rm() {
    let env = Env::new();
    let base = evaluate(env.db(), LLM, T3);
    assert_eq!(base["recommendedTargetId"], "gpt-4.1");

    ok(
        env.db(),
        &[
            "override", "add", LLM, "--source", T3, "--target", "gpt-4.1", "--value", "false",
            "--note", "x",
        ],
    );
    assert_eq!(revision(env.db(), LLM), 2);
    let r = evaluate(env.db(), LLM, T3);
    assert_eq!(r["cache"], "miss");
    assert_eq!(r["revisionId"], 2);
    let gpt = target(&r, "gpt-4.1");
    assert_eq!(gpt["verdict"], 0);
    assert_eq!(gpt["reason"], "override");
    // The rules are still evaluated and reported.
    assert_eq!(gpt["rules"], target(&base, "gpt-4.1")["rules"]);
    assert_ne!(r["recommendedTargetId"], "gpt-4.1");
    assert!(r["recommendedTargetId"].is_string());
    assert_eq!(r["selectionVerdict"], 2);

    let overrides = export(env.db(), LLM)["overrides"].clone();
    let o = overrides
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["note"] == "x")
        .unwrap_or_else(|| panic!("override not exported: {overrides}"));
    assert_eq!(o["value"], false);

    ok(
        env.db(),
        &["override", "rm", LLM, "--source", T3, "--target", "gpt-4.1"],
    );
    assert_eq!(revision(env.db(), LLM), 3);
    let r = evaluate(env.db(), LLM, T3);
    assert_eq!(r["recommendedTargetId"], "gpt-4.1");
    assert_target(&r, "gpt-4.1", 2, 1.0);
    assert_eq!(target(&r, "gpt-4.1")["reason"], "full");
    assert_same_page(&export(env.db(), LLM), &json(&seed_chat_text()));

    // Removing it again, or naming unknown rows, is bad input and changes nothing.
    let before = snapshot(env.db());
    usage_error(
        env.db(),
        &["override", "rm", LLM, "--source", T3, "--target", "gpt-4.1"],
    );
    let err = usage_error(
        env.db(),
        &[
            "override", "add", LLM, "--source", T3, "--target", "gpt-4.2", "--value", "true",
        ],
    );
    assert_contains(&err, "gpt-4.2");
    usage_error(
        env.db(),
        &[
            "override", "add", LLM, "--source", T3, "--target", "gpt-4.1", "--value", "maybe",
        ],
    );
    assert_unchanged(env.db(), &before, "the failed command");
}

#[test]
fn override_by_key_hash() {
    let env = Env::new();
    let source = sha256_hex(T3);
    let target_hash = sha256_hex("id=gpt-4.1");
    ok(
        env.db(),
        &[
            "override",
            "add",
            LLM,
            "--source",
            &source,
            "--target",
            &target_hash,
            "--value",
            "false",
        ],
    );
    assert_eq!(revision(env.db(), LLM), 2);
    let r = evaluate(env.db(), LLM, T3);
    assert_eq!(target(&r, "gpt-4.1")["verdict"], 0);
    assert_eq!(target(&r, "gpt-4.1")["reason"], "override");
    assert_ne!(r["recommendedTargetId"], "gpt-4.1");

    ok(
        env.db(),
        &[
            "override",
            "rm",
            LLM,
            "--source",
            &source,
            "--target",
            &target_hash,
        ],
    );
    assert_eq!(revision(env.db(), LLM), 3);
    let r = evaluate(env.db(), LLM, T3);
    assert_eq!(target(&r, "gpt-4.1")["verdict"], 2);
    assert_eq!(r["recommendedTargetId"], "gpt-4.1");

    // An override written by keyHash in a page file applies, and `override rm` by key removes it.
    let mut page = json(&seed_chat_text());
    page["overrides"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "sourceKeyHash": source, "targetKeyHash": target_hash, "value": false
        }));
    let file = env.file("hashed.json", &serde_json::to_string_pretty(&page).unwrap());
    ok(env.db(), &["import", "--replace", &file]);
    let r = evaluate(env.db(), LLM, T3);
    assert_eq!(target(&r, "gpt-4.1")["reason"], "override");
    assert_ne!(r["recommendedTargetId"], "gpt-4.1");
    ok(
        env.db(),
        &["override", "rm", LLM, "--source", T3, "--target", "gpt-4.1"],
    );
    let r = evaluate(env.db(), LLM, T3);
    assert_eq!(target(&r, "gpt-4.1")["reason"], "full");
    assert_eq!(r["recommendedTargetId"], "gpt-4.1");
}

// ---------------------------------------------------------------------------------------------
// policies
// ---------------------------------------------------------------------------------------------

#[test]
fn policy_set_full_threshold() {
    let env = Env::new();
    assert_target(&evaluate(env.db(), LLM, T3), "llama-3.3-70b", 1, 0.6);
    ok(env.db(), &["policy", "set", LLM, "fullThreshold=0.5"]);
    assert_eq!(revision(env.db(), LLM), 2);
    assert_eq!(export(env.db(), LLM)["devicePolicy"]["fullThreshold"], 0.5);
    let r = evaluate(env.db(), LLM, T3);
    assert_eq!(r["cache"], "miss");
    assert_target(&r, "llama-3.3-70b", 2, 0.6);
    assert_eq!(target(&r, "llama-3.3-70b")["reason"], "full");

    // Several at once: one change, one revision.
    ok(
        env.db(),
        &[
            "policy",
            "set",
            LLM,
            "fullThreshold=1",
            "partialThreshold=0.7",
        ],
    );
    assert_eq!(revision(env.db(), LLM), 3);
    let r = evaluate(env.db(), LLM, T3);
    assert_target(&r, "llama-3.3-70b", 0, 0.6);
    assert_eq!(target(&r, "llama-3.3-70b")["reason"], "low-score");
    assert_eq!(revision(env.db(), LOAN), 1);
}

#[test]
fn policy_set_invalid_threshold_changes_nothing() {
    let env = Env::new();
    let before = snapshot(env.db());
    let err = usage_error(env.db(), &["policy", "set", LLM, "partialThreshold=2"]);
    assert_contains(&err, "partialThreshold");
    assert_unchanged(env.db(), &before, "the failed command");

    // All or nothing: a valid assignment next to a bad one is not applied either.
    usage_error(
        env.db(),
        &[
            "policy",
            "set",
            LLM,
            "fullThreshold=0.5",
            "partialThreshold=2",
        ],
    );
    usage_error(
        env.db(),
        &[
            "policy",
            "set",
            LLM,
            "fullThreshold=0.5",
            "fullThreshold=abc",
        ],
    );
    usage_error(
        env.db(),
        &[
            "policy",
            "set",
            LLM,
            "fullThreshold=0.5",
            "requiredMode=NOPE",
        ],
    );
    usage_error(env.db(), &["policy", "set", LLM, "fullThreshold"]);
    assert_unchanged(env.db(), &before, "the failed command");
    assert_target(&evaluate(env.db(), LLM, T3), "llama-3.3-70b", 1, 0.6);
}

#[test]
fn policy_set_unknown_name_suggests() {
    let env = Env::new();
    let before = snapshot(env.db());
    let err = usage_error(env.db(), &["policy", "set", LLM, "fullThreshhold=0.5"]);
    assert_contains(&err, "fullThreshhold");
    assert_contains(&err, "did you mean `fullThreshold`");
    let err = usage_error(
        env.db(),
        &[
            "policy",
            "set",
            LLM,
            "fullThreshold=0.5",
            "partialTreshold=0.1",
        ],
    );
    assert_contains(&err, "did you mean `partialThreshold`");
    assert_unchanged(env.db(), &before, "the failed command");
}

#[test]
fn every_change_increments_the_revision() {
    let env = Env::new();
    let mut expected = 1;
    let mut step = |args: &[&str]| {
        ok(env.db(), args);
        expected += 1;
        assert_eq!(revision(env.db(), LLM), expected, "after {args:?}");
    };
    step(&["policy", "set", LLM, "fullThreshold=0.9"]);
    step(&["policy", "set", LLM, "requiredMode=IGNORE_REQUIRED"]);
    step(&[
        "override", "add", LLM, "--source", T3, "--target", "o3", "--value", "true",
    ]);
    step(&["override", "rm", LLM, "--source", T3, "--target", "o3"]);
    step(&["rule", "rm", LLM, "vision"]);
    let file = env.file(
        "r.json",
        r#"{"id": "always", "name": "Always", "logic": true}"#,
    );
    step(&["rule", "add", LLM, &file]);
    step(&["rule", "add", LLM, &file, "--replace"]);
    let page = env.file("llm.json", &seed_chat_text());
    step(&["import", "--replace", &page]);
    // Reads do not.
    ok(env.db(), &["evaluate", LLM, "--select", T3]);
    ok(env.db(), &["export", LLM]);
    ok(env.db(), &["check", LLM]);
    assert_eq!(revision(env.db(), LLM), expected);
    assert_eq!(revision(env.db(), LOAN), 1);
}

// ---------------------------------------------------------------------------------------------
// untrusted text
// ---------------------------------------------------------------------------------------------

#[test]
fn control_characters_in_data_are_escaped_in_tables() {
    let env = Env::new();
    let text = r#"{
  "format": "rulebench.page/v1",
  "id": "escapes",
  "name": "Escapes \u001b[2J page",
  "source": {
    "name": "Evil \u001b[31m sources",
    "key": ["id"],
    "label": "name",
    "rows": [
      {"id": "evil\u001b[31m", "name": "Red \u001b[31m label \u0007", "needsX": true}
    ]
  },
  "target": {
    "name": "Targets",
    "key": ["id"],
    "label": "name",
    "summary": ["vendor"],
    "rows": [
      {"id": "t\u001b[0m1", "name": "T \u001b[2J one", "vendor": "v\u001b]0;title\u0007", "hasX": true},
      {"id": "plain", "name": "Plain \u001b[5m", "vendor": "v", "hasX": false}
    ]
  },
  "rules": [
    {"id": "x", "name": "X", "required": false,
     "logic": {"or": [{"==": [{"var": "source.needsX"}, false]}, {"==": [{"var": "target.hasX"}, true]}]}}
  ]
}
"#;
    let file = env.file("escapes.json", text);
    ok(env.db(), &["import", &file]);

    let out = ok(
        env.db(),
        &[
            "evaluate",
            "escapes",
            "--select",
            "id=evil\u{1b}[31m",
            "--format",
            "table",
        ],
    );
    assert!(!out.contains('\u{1b}'), "raw ESC in table output:\n{out:?}");
    assert!(!out.contains('\u{7}'), "raw BEL in table output:\n{out:?}");
    assert_contains(&out, "[31m");
    assert_contains(&out, "[0m1");
    let table = out;

    // The same row selected by its label (the label carries escapes too).
    let out = ok(
        env.db(),
        &[
            "evaluate",
            "escapes",
            "--select",
            "Red \u{1b}[31m label \u{7}",
            "--format",
            "table",
        ],
    );
    assert!(!out.contains('\u{1b}'), "raw ESC in table output:\n{out:?}");

    let out = ok(env.db(), &["pages"]);
    assert!(!out.contains('\u{1b}'), "raw ESC in pages output:\n{out:?}");
    assert_contains(&out, "escapes");

    let out = ok(
        env.db(),
        &["evaluate", "escapes", "--all", "--format", "md"],
    );
    assert!(
        !out.contains('\u{1b}'),
        "raw ESC in markdown output:\n{out:?}"
    );

    // JSON keeps the data and escapes it the JSON way.
    let out = ok(
        env.db(),
        &["evaluate", "escapes", "--select", "id=evil\u{1b}[31m"],
    );
    assert!(!out.contains('\u{1b}'), "raw ESC in JSON output:\n{out:?}");
    let r = json(&out);
    assert_eq!(r["selectionKey"], "id=evil\u{1b}[31m");
    assert_eq!(r["recommendedTargetId"], "t\u{1b}[0m1");

    // The recommended target keeps its ★ when its id had to be escaped.
    assert!(
        table.lines().any(|l| l.contains('★') && l.contains("[0m1")),
        "★ not on the escaped target:\n{table}"
    );
}

/// The command line and the workbench share one policy parser: percentages and modes
/// in any case work in both.
#[test]
fn policy_set_takes_percentages_and_lenient_mode_names() {
    let env = Env::new();
    ok(
        env.db(),
        &[
            "policy",
            "set",
            LLM,
            "fullThreshold=85%",
            "requiredMode=any-required-fail-caps-at-partial",
        ],
    );
    let page = export(env.db(), LLM);
    assert_eq!(page["devicePolicy"]["fullThreshold"], 0.85);
    assert_eq!(
        page["devicePolicy"]["requiredMode"],
        "ANY_REQUIRED_FAIL_CAPS_AT_PARTIAL"
    );
}

/// Every file argument takes `-` for stdin: import, check, test, rule add, dataset
/// import (the format told by the content) and eval's --logic or --data.
#[test]
fn every_file_argument_reads_stdin_from_a_dash() {
    let env = Env::new();
    let (_, page, _) = rb(env.db(), &["export", LOAN]);
    let renamed = page.replace("\"id\": \"loan-eligibility\"", "\"id\": \"loan-stdin\"");
    let (code, out, err) = rb_stdin(env.db(), &["check", "-"], &page);
    assert_eq!(code, 0, "{err}");
    // (The analysis's warnings on the sample, then the count.)
    assert!(out.lines().all(|l| l.starts_with("<stdin>: ")), "{out}");
    assert!(out.ends_with("<stdin>: 0 errors, 2 warnings\n"), "{out}");
    let (code, out, _) = rb_stdin(env.db(), &["check", "-"], "{\"format\": 1}");
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("<stdin>: error[json-shape] 1:12"), "{out}");
    let (code, out, err) = rb_stdin(env.db(), &["test", "-"], &page);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("0 failed"), "{out}");
    let (code, _, err) = rb_stdin(env.db(), &["import", "-"], &renamed);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("imported loan-stdin (revision 1) from <stdin>"),
        "{err}"
    );
    let (code, out, err) = rb_stdin(
        env.db(),
        &["eval", "--logic", "-", "--data", r#"{"a": 2}"#],
        r#"{"*": [{"var": "a"}, 21]}"#,
    );
    assert_eq!((code, out.trim()), (0, "42"), "{err}");
    let (code, out, _) = rb_stdin(
        env.db(),
        &["eval", "--logic", r#"{"var": "a"}"#, "--data", "-"],
        r#"{"a": [1]}"#,
    );
    assert_eq!((code, out.trim()), (0, "[1]"));
    let (code, _, err) = rb_stdin(env.db(), &["eval", "--logic", "-", "--data", "-"], "1");
    assert_eq!(code, 2);
    assert!(err.contains("both"), "{err}");
    // A dataset from stdin: JSON Lines, told by its content; it cannot be linked.
    let (_, before, _) = rb(env.db(), &["export", LLM]);
    let before: Value = serde_json::from_str(&before).unwrap();
    let mut rows = String::new();
    for row in before["target"]["rows"].as_array().unwrap() {
        rows.push_str(&row.to_string());
        rows.push('\n');
    }
    let (code, _, err) = rb_stdin(env.db(), &["dataset", "import", LLM, "target", "-"], &rows);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("from <stdin> (JSON Lines"), "{err}");
    let (code, _, err) = rb_stdin(
        env.db(),
        &["dataset", "import", LLM, "target", "-", "--link"],
        &rows,
    );
    assert_eq!(code, 2);
    assert!(err.contains("--link needs a file"), "{err}");
}

/// `matrix`: the rule × target grid of a selection in five formats; CSV/TSV parse back
/// to the same grid as the JSON, and the verdict row agrees with `evaluate`.
#[test]
fn the_matrix_command_exports_the_grid_in_every_format() {
    let env = Env::new();
    let sel = ["--select", "t3-chat"];
    let json_text = ok(
        env.db(),
        &["matrix", LLM, sel[0], sel[1], "--format", "json"],
    );
    let grid: Value = serde_json::from_str(&json_text).unwrap();
    let targets = grid["targets"].as_array().unwrap();
    let rules = grid["rules"].as_array().unwrap();
    assert_eq!((targets.len(), rules.len()), (14, 9));
    let eval: Value =
        serde_json::from_str(&ok(env.db(), &["evaluate", LLM, sel[0], sel[1]])).unwrap();
    for (t, target) in eval["targets"].as_array().unwrap().iter().enumerate() {
        assert_eq!(grid["verdicts"][t], target["verdict"], "target {t}");
        assert_eq!(targets[t]["id"], target["id"]);
    }
    for (format, delimiter) in [("csv", b','), ("tsv", b'\t')] {
        let text = ok(
            env.db(),
            &["matrix", LLM, sel[0], sel[1], "--format", format],
        );
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .from_reader(text.as_bytes());
        let header = reader.headers().unwrap().clone();
        // rule, category, required, then a column per target (no glyph in a name: a
        // required rule says so in its column).
        assert_eq!(header.len(), 3 + 14, "{format}");
        assert_eq!(&header[2], "required");
        assert_eq!(&header[3], targets[0]["id"].as_str().unwrap());
        let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        for rule in rules {
            let name = rule["name"].as_str().unwrap();
            let record = records
                .iter()
                .find(|r| &r[0] == name)
                .unwrap_or_else(|| panic!("{format}: no record for {name}"));
            assert_eq!(
                &record[2],
                rule["required"].as_bool().unwrap().to_string(),
                "{format} {name}"
            );
            let outcomes: Vec<&str> = record.iter().skip(3).collect();
            let expected = common::strs(&rule["outcomes"]);
            assert_eq!(outcomes, expected, "{format} {name}");
            assert_eq!(&record[1], rule["category"].as_str().unwrap());
        }
        let verdicts = records.iter().find(|r| &r[0] == "verdict").unwrap();
        assert!(verdicts[3].starts_with(&grid["verdicts"][0].to_string()));
    }
    let table = ok(env.db(), &["matrix", LLM, sel[0], sel[1]]);
    assert!(
        table.contains("✓") && table.contains("■ Streaming Support"),
        "{table}"
    );
    let md = ok(
        env.db(),
        &["matrix", LLM, sel[0], sel[1], "--format", "markdown"],
    );
    assert!(md.lines().any(|l| l.starts_with("|---|---|")), "{md}");
    assert_eq!(
        md.lines().filter(|l| l.starts_with("| ")).count(),
        1 + 2 + 9 + 2,
        "header, shown fields, rules, verdict and score: {md}"
    );
}

/// CSV guards text a spreadsheet would run as a formula (opt-out with a flag); TSV is
/// CSV with tabs; tables align on display width (CJK takes two columns).
#[test]
fn csv_guards_formulas_tsv_works_and_tables_align_wide_characters() {
    let env = Env::new();
    let page = serde_json::json!({
        "format": "rulebench.page/v1", "id": "wide", "name": "Wide",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
        "target": {"name": "T", "key": ["id"], "rows": [
            {"id": "=HYPERLINK(\"http://x\")", "ok": true}, {"id": "模型甲", "ok": true}, {"id": "b", "ok": false},
            {"id": "-2", "ok": true}]},
        "rules": [{"id": "ok", "name": "Ok", "required": true, "weight": 1, "category": "c",
                   "logic": {"==": [{"var": "target.ok"}, true]}}]
    });
    let file = env.file("wide.json", &page.to_string());
    ok(env.db(), &["import", &file]);
    let csv_text = ok(
        env.db(),
        &["evaluate", "wide", "--select", "s", "--format", "csv"],
    );
    assert!(csv_text.contains("'=HYPERLINK"), "{csv_text}");
    // A number is data, not a formula: `-2` stays a number.
    assert!(
        csv_text.contains(",-2,") && !csv_text.contains("'-2"),
        "{csv_text}"
    );
    let raw = ok(
        env.db(),
        &[
            "evaluate",
            "wide",
            "--select",
            "s",
            "--format",
            "csv",
            "--no-formula-guard",
        ],
    );
    let mut reader = csv::Reader::from_reader(raw.as_bytes());
    let ids: Vec<String> = reader.records().map(|r| r.unwrap()[3].to_owned()).collect();
    assert_eq!(ids, ["=HYPERLINK(\"http://x\")", "模型甲", "b", "-2"]);
    let tsv = ok(
        env.db(),
        &["evaluate", "wide", "--select", "s", "--format", "tsv"],
    );
    assert!(
        tsv.lines()
            .next()
            .unwrap()
            .starts_with("selectionKey\tselectionVerdict"),
        "{tsv}"
    );
    let table = ok(
        env.db(),
        &["evaluate", "wide", "--select", "s", "--format", "table"],
    );
    // Every VERDICT cell starts at the same display column.
    use unicode_width::UnicodeWidthStr;
    let columns: Vec<usize> = table
        .lines()
        .filter(|l| l.contains("● 2") || l.contains("○ 0"))
        .map(|l| l[..l.find(['●', '○']).unwrap()].width())
        .collect();
    assert_eq!(columns.len(), 4, "{table}");
    assert!(
        columns.windows(2).all(|w| w[0] == w[1]),
        "{columns:?}\n{table}"
    );
    // pages: --format json, and --json as its alias.
    let a: Value = serde_json::from_str(&ok(env.db(), &["pages", "--format", "json"])).unwrap();
    let b: Value = serde_json::from_str(&ok(env.db(), &["pages", "--json"])).unwrap();
    assert_eq!(a, b);
}

/// An export names the page schema first; `rulebench schema` prints that schema.
#[test]
fn export_names_the_schema_and_the_schema_validates_it() {
    let env = Env::new();
    let out = ok(env.db(), &["export", LLM]);
    assert!(
        out.starts_with("{\n  \"$schema\": \"urn:rulebench:schema:page:v1\","),
        "{out}"
    );
    let schema: Value = serde_json::from_str(&ok(env.db(), &["schema"])).unwrap();
    assert_eq!(schema["$id"], "urn:rulebench:schema:page:v1");
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let page: Value = serde_json::from_str(&out).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&page)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    // And it imports back as the same page.
    let file = env.file("back.json", &out.replace("llm-chat-clients", "llm-back"));
    ok(env.db(), &["import", &file]);
}

/// Gaps found trying it as a new user: a no-op change makes no revision; a row name
/// that matches two rows is ambiguous (not "not found"); a keyHash in capitals names its
/// row; JSONLogic outside the infix grammar is bad input (exit 2).
#[test]
fn no_op_changes_ambiguous_names_key_hash_case_and_expr_exit_codes() {
    let env = Env::new();
    let r0 = revision(env.db(), LLM);
    ok(env.db(), &["policy", "set", LLM, "fullThreshold=1"]);
    assert_eq!(revision(env.db(), LLM), r0, "the same policy value again");
    ok(env.db(), &["policy", "set", LLM, "fullThreshold=0.9"]);
    assert_eq!(revision(env.db(), LLM), r0 + 1);
    let add = |note: &str| {
        ok(
            env.db(),
            &[
                "override",
                "add",
                LLM,
                "--source",
                "opencode",
                "--target",
                "llama-3.3-70b",
                "--value",
                "true",
                "--note",
                note,
            ],
        );
    };
    add("Verified by testing team - works with Groq provider");
    assert_eq!(revision(env.db(), LLM), r0 + 1, "the same override again");
    add("re-verified");
    assert_eq!(revision(env.db(), LLM), r0 + 2, "a new note is a change");

    // Two source rows share the key field value `web`.
    let mut page: Value = serde_json::from_str(&ok(env.db(), &["export", LLM])).unwrap();
    page["id"] = serde_json::json!("llm-two-web");
    let mut twin = page["source"]["rows"][0].clone();
    twin["id"] = serde_json::json!("web-two");
    twin["displayName"] = serde_json::json!("Web two");
    page["source"]["rows"].as_array_mut().unwrap().push(twin);
    page["overrides"] = serde_json::json!([]);
    page["assertions"] = serde_json::json!([]);
    let file = env.file("two.json", &page.to_string());
    ok(env.db(), &["import", &file]);
    let err = usage_error(env.db(), &["evaluate", "llm-two-web", "--select", "web"]);
    assert!(
        err.contains("`web` is ambiguous: it names 2 source rows: clientType=web|id=t3-chat, clientType=web|id=web-two"),
        "{err}"
    );
    // A keyHash in any case.
    let hash = rulebench_core::model::key_hash("clientType=web|id=t3-chat");
    let out = ok(
        env.db(),
        &[
            "evaluate",
            LLM,
            "--select",
            &hash.to_uppercase(),
            "--format",
            "summary",
        ],
    );
    assert!(
        out.contains("\"selectionKey\":\"clientType=web|id=t3-chat\""),
        "{out}"
    );
    // Logic with no infix form: exit 2, with the reason.
    let err = usage_error(env.db(), &["expr", "--to-infix", r#"{"merge": [1, 2]}"#]);
    assert!(err.contains("merge"), "{err}");
}

/// Stdin is read once: `import - -` is refused before anything is imported.
#[test]
fn stdin_named_twice_is_refused() {
    let env = Env::new();
    let (code, _, err) = rb_stdin(env.db(), &["import", "-", "-"], "{}");
    assert_eq!(code, 2);
    assert!(err.contains("stdin (-) can be read once"), "{err}");
}

/// A reader that stops early (`| head -1`) ends every format quietly with 0: CSV and TSV
/// kept the closed pipe's kind inside the CSV writer's error and exited 2 ("stdout:
/// Broken pipe") on outputs larger than the pipe's buffer.
#[test]
fn a_closed_pipe_ends_every_format_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pipe.db");
    let page = dir.path().join("big.json");
    let page_arg = page.to_str().unwrap();
    let (code, _, err) = rb(
        &db,
        &[
            "bench",
            "--write-page",
            page_arg,
            "--targets",
            "3000",
            "--rules",
            "8",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = rb(&db, &["--no-seed", "import", page_arg]);
    assert_eq!(code, 0, "{err}");
    let id = "synthetic-3000x8";
    for format in ["csv", "tsv", "json", "jsonl", "summary", "table", "md"] {
        let mut child = command(&db, &["evaluate", id, "--all", "--format", format])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn rulebench");
        // Read a little, then close the pipe while it still writes (megabytes).
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 64];
        std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
        drop(stdout);
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `-o -` is stdout, as everywhere else (it wrote a file named `-`).
#[test]
fn dash_o_dash_is_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("o.db");
    for args in [
        &["export", "llm-chat-clients", "-o", "-"][..],
        &["sql", "llm-chat-clients", "--dialect", "sqlite", "-o", "-"][..],
    ] {
        let out = command(&db, args)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(out.stdout.len() > 100, "{args:?}: printed on stdout");
        assert!(!dir.path().join("-").exists(), "{args:?}: no file named -");
    }
}

//! The official JSONLogic test suite (jsonlogic.com/tests.json, 278 cases), run through
//! the `rulebench eval` binary and through the library's `engine::apply`.
//!
//! The suite is carried in `tests/data/jsonlogic-tests.json` so a plain clone tests itself.

use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use rulebench_core::engine;

/// The official suite: section headers (strings) and `[rule, data, expected]` cases.
const SUITE: &str = include_str!("data/jsonlogic-tests.json");

/// How many cases the official suite holds.
const CASES: usize = 278;

/// Worker threads for the binary run (each case spawns one process).
const WORKERS: usize = 2;

#[derive(Debug, Clone)]
struct Case {
    /// Position among the cases (1-based), for reports.
    number: usize,
    section: String,
    logic: Value,
    data: Value,
    expected: Value,
}

impl Case {
    fn describe(&self) -> String {
        format!(
            "#{} [{}] logic={} data={} expected={}",
            self.number, self.section, self.logic, self.data, self.expected
        )
    }
}

fn suite() -> Vec<Case> {
    let items: Vec<Value> = serde_json::from_str(SUITE).expect("the suite is valid JSON");
    let mut section = String::from("(no section)");
    let mut cases = Vec::new();
    for item in items {
        match item {
            Value::String(header) => section = header,
            Value::Array(parts) => {
                let [logic, data, expected]: [Value; 3] = parts
                    .try_into()
                    .unwrap_or_else(|p| panic!("a case is [rule, data, expected], got {p:?}"));
                cases.push(Case {
                    number: cases.len() + 1,
                    section: section.clone(),
                    logic,
                    data,
                    expected,
                });
            }
            other => panic!("unexpected suite entry {other}"),
        }
    }
    cases
}

/// JSON equality where numbers compare by value (`6 == 6.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y || (x.is_nan() && y.is_nan()),
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn report(how: &str, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} of {CASES} official JSONLogic cases fail {how}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn suite_has_exactly_the_official_case_count() {
    let cases = suite();
    assert_eq!(cases.len(), CASES, "tests/data/jsonlogic-tests.json");
}

#[test]
fn same_compares_numbers_by_value() {
    use serde_json::json;
    assert!(same(&json!(6), &json!(6.0)));
    assert!(same(&json!([1, {"a": 2.0}]), &json!([1.0, {"a": 2}])));
    assert!(!same(&json!(6), &json!("6")));
    assert!(!same(&json!([1]), &json!([1, 2])));
    assert!(!same(&json!({"a": 1}), &json!({"b": 1})));
}

#[test]
fn library_apply_passes_the_official_suite() {
    let cases = suite();
    assert_eq!(cases.len(), CASES);
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| match engine::apply(&case.logic, &case.data) {
            Ok(got) if same(&got, &case.expected) => None,
            Ok(got) => Some(format!("{} got={got}", case.describe())),
            Err(e) => Some(format!("{} error={e}", case.describe())),
        })
        .collect();
    report("through engine::apply", &failures);
}

/// Runs `rulebench eval --logic JSON --data JSON` and parses what it prints.
fn run_binary(case: &Case, db: &std::path::Path) -> Result<Value, String> {
    let output = Command::new(env!("CARGO_BIN_EXE_rulebench"))
        // `eval` needs no database; point it at a scratch one all the same.
        .env("RULEBENCH_DB", db)
        .arg("eval")
        .arg("--logic")
        .arg(case.logic.to_string())
        .arg("--data")
        .arg(case.data.to_string())
        .output()
        .map_err(|e| format!("cannot run rulebench: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "exit {:?}, stderr: {}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    serde_json::from_str(stdout.trim()).map_err(|e| format!("stdout is not JSON ({e}): {stdout:?}"))
}

#[test]
fn binary_eval_passes_the_official_suite() {
    let cases = suite();
    assert_eq!(cases.len(), CASES);
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("conformance.db");
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::<(usize, String)>::new());
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = cases.get(i) else { break };
                    let failure = match run_binary(case, &db) {
                        Ok(got) if same(&got, &case.expected) => None,
                        Ok(got) => Some(format!("{} got={got}", case.describe())),
                        Err(e) => Some(format!("{} {e}", case.describe())),
                    };
                    if let Some(f) = failure {
                        failures.lock().expect("no poisoned lock").push((i, f));
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().expect("no poisoned lock");
    failures.sort();
    let failures: Vec<String> = failures.into_iter().map(|(_, f)| f).collect();
    report("through `rulebench eval`", &failures);
}

//! Predicate-list rules: `from_logic(to_logic(p)) == p` (proptest),
//! accepted by `rule add` and in page files, stored as JSONLogic, and their errors with
//! what and where.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use proptest::prelude::*;
use rulebench_core::predicates::{
    LogicalOperator, Operand, Operator, Predicate, PredicateList, from_logic, to_logic,
};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Round trip
// ---------------------------------------------------------------------------------------------

fn field() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "source.age",
        "source.country",
        "source.limits.max",
        "target.country",
        "target.tags",
        "target.minAge",
    ])
    .prop_map(str::to_owned)
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i32>().prop_map(|n| json!(n)),
        (-1000i32..1000).prop_map(|n| json!(f64::from(n) / 8.0)),
        "[a-zA-Z0-9 ._-]{0,8}".prop_map(Value::String),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Null),
    ]
}

fn operand() -> impl Strategy<Value = Operand> {
    prop_oneof![
        3 => scalar().prop_map(Operand::Literal),
        1 => prop::collection::vec(scalar(), 0..4).prop_map(|v| Operand::Literal(Value::Array(v))),
        2 => field().prop_map(Operand::Field),
    ]
}

fn predicate() -> impl Strategy<Value = Predicate> {
    (
        field(),
        prop::sample::select(Operator::ALL.to_vec()),
        operand(),
    )
        .prop_map(|(field, operator, value)| Predicate {
            field,
            operator,
            value,
        })
}

fn list() -> impl Strategy<Value = PredicateList> {
    (
        prop::collection::vec(predicate(), 1..5),
        prop_oneof![Just(LogicalOperator::And), Just(LogicalOperator::Or)],
    )
        .prop_map(|(predicates, logical_operator)| PredicateList {
            predicates,
            logical_operator,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A predicate list survives being stored as JSONLogic. `contains` with a field value
    /// is the same JSONLogic as `in` with the fields swapped and reads back as that.
    #[test]
    fn from_logic_of_to_logic_is_identity(p in list()) {
        let logic = to_logic(&p);
        let back = from_logic(&logic);
        prop_assert_eq!(back.as_ref(), Some(&p.canonical()), "logic {}", logic);
        let field_contains = p.predicates.iter().any(|q| {
            matches!(q.operator, Operator::Contains | Operator::NotContains)
                && matches!(q.value, Operand::Field(_))
        });
        if !field_contains {
            prop_assert_eq!(back, Some(p.clone()));
        }
        // The canonical form is a fixed point, and the logic compiles.
        prop_assert_eq!(to_logic(&p.canonical()), logic.clone());
        prop_assert!(rulebench_core::engine::compile(&logic).is_ok());
    }

    /// The page-file form reads back to the same list.
    #[test]
    fn the_written_form_reads_back(p in list()) {
        let written = p.to_json();
        let read = rulebench_core::predicates::read_list(
            &written["predicates"],
            Some(("logical_operator", &written["logical_operator"])),
        );
        prop_assert_eq!(read.ok(), Some(p));
    }
}

// ---------------------------------------------------------------------------------------------
// The command line
// ---------------------------------------------------------------------------------------------

struct Env {
    dir: tempfile::TempDir,
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
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    }

    fn run(&self, args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
        run(&self.db, args, stdin)
    }

    #[track_caller]
    fn ok(&self, args: &[&str], stdin: Option<&str>) -> String {
        let (code, out, err) = self.run(args, stdin);
        assert_eq!(
            code, 0,
            "rulebench {args:?}\nstdout:\n{out}\nstderr:\n{err}"
        );
        out
    }

    #[track_caller]
    fn fails(&self, args: &[&str], stdin: Option<&str>, expected: i32) -> (String, String) {
        let (code, out, err) = self.run(args, stdin);
        assert_eq!(
            code, expected,
            "rulebench {args:?}\nstdout:\n{out}\nstderr:\n{err}"
        );
        (out, err)
    }

    fn revision(&self, page: &str) -> i64 {
        let pages: Value = serde_json::from_str(&self.ok(&["pages", "--json"], None)).unwrap();
        pages
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == page)
            .and_then(|p| p["revision"].as_i64())
            .expect("page listed with its revision")
    }
}

fn run(db: &Path, args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    common::ensure_db(db, args);
    let mut child = Command::new(env!("CARGO_BIN_EXE_rulebench"))
        .env_remove("RULEBENCH_DB")
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rulebench");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().expect("exit code"),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

const SEED_RULE: &str = r#"{
  "name": "Adult resident",
  "required": true,
  "predicates": [
    {"field": "source.age", "operator": ">=", "value": 18},
    {"field": "source.country", "operator": "==", "value": {"field": "target.country"}}
  ],
  "logical_operator": "and"
}"#;

#[test]
fn rule_add_takes_a_predicate_list_and_stores_jsonlogic() {
    let env = Env::new();
    let (code, out, err) = env.run(&["rule", "add", "loan-eligibility", "-"], Some(SEED_RULE));
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("saved rule adult-resident in loan-eligibility")),
        "{err}"
    );
    let page: Value = serde_json::from_str(&env.ok(&["export", "loan-eligibility"], None)).unwrap();
    let rule = page["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "adult-resident")
        .unwrap();
    assert_eq!(
        rule["logic"],
        json!({"and": [{">=": [{"var": "source.age"}, 18]},
                       {"==": [{"var": "source.country"}, {"var": "target.country"}]}]})
    );
    assert!(rule.get("predicates").is_none() && rule.get("logical_operator").is_none());
    // Explained: shown as the predicate list it still is, both conditions in the sentence.
    let e: Value = serde_json::from_str(&env.ok(
        &[
            "explain",
            "loan-eligibility",
            "--select",
            "app-001",
            "--target",
            "us-prime-auto",
            "--rule",
            "adult-resident",
            "--format",
            "json",
        ],
        None,
    ))
    .unwrap();
    let r = &e["rules"][0];
    assert_eq!(r["passed"], false);
    assert_eq!(
        r["predicates"],
        json!({"predicates": [
            {"field": "source.age", "operator": ">=", "value": 18},
            {"field": "source.country", "operator": "==", "value": {"field": "target.country"}}],
            "logical_operator": "AND"})
    );
    let out = env.ok(
        &[
            "explain",
            "loan-eligibility",
            "--select",
            "app-001",
            "--target",
            "us-prime-auto",
            "--rule",
            "adult-resident",
        ],
        None,
    );
    assert!(
        out.contains(
            "✗ Adult resident (required): source.country ('Canada') differs from target.country ('USA')"
        ),
        "{out}"
    );
}

#[test]
fn rule_add_errors_say_what_and_where_and_change_nothing() {
    let env = Env::new();
    let before = env.revision("loan-eligibility");
    let text = r#"{
  "name": "Bad",
  "predicates": [
    {"field": "source.age", "operator": ">=", "value": 18},
    {"field": "source.country", "operator": "equals", "value": "USA"},
    {"operator": "<", "value": 3}
  ]
}"#;
    let (_, err) = env.fails(&["rule", "add", "loan-eligibility", "-"], Some(text), 2);
    assert!(
        err.contains(
            "error[predicate-operator] 5:33 at /predicates/1/operator: unknown operator `equals`"
        ),
        "{err}"
    );
    assert!(
        err.contains("error[predicate] 6:5 at /predicates/2: the predicate has no `field`"),
        "{err}"
    );
    // A field no row has: the validation error points at the predicate's field.
    let text = r#"{"name": "Typo", "predicates": [
  {"field": "source.credit_scor", "operator": ">", "value": 700}]}"#;
    let (_, err) = env.fails(&["rule", "add", "loan-eligibility", "-"], Some(text), 2);
    assert!(
        err.contains("error[unknown-field] 2:4 at /predicates/0/field: no source row has a field `credit_scor`")
            && err.contains("did you mean `source.credit_score`?"),
        "{err}"
    );
    let text = r#"{"name": "Both", "logic": true, "predicates": [
  {"field": "source.age", "operator": ">", "value": 1}]}"#;
    let (_, err) = env.fails(&["rule", "add", "loan-eligibility", "-"], Some(text), 2);
    assert!(
        err.contains("at /predicates: a rule takes `logic` or `predicates`, not both"),
        "{err}"
    );
    let (_, err) = env.fails(
        &["rule", "add", "loan-eligibility", "-"],
        Some(r#"{"name": "Neither"}"#),
        2,
    );
    assert!(
        err.contains("a rule needs `logic` (JSONLogic) or `predicates` (a predicate list)"),
        "{err}"
    );
    let (_, err) = env.fails(
        &["rule", "add", "loan-eligibility", "-"],
        Some(
            r#"{"name": "Xor", "logical_operator": "XOR", "predicates": [{"field": "source.age", "operator": ">", "value": 1}]}"#,
        ),
        2,
    );
    assert!(
        err.contains("`logical_operator` must be \"AND\" or \"OR\""),
        "{err}"
    );
    assert_eq!(
        env.revision("loan-eligibility"),
        before,
        "bad input changes nothing"
    );
}

/// A page file with predicate-list rules imports; errors carry the page pointer and
/// line:col; `check` reports them too.
#[test]
fn page_files_take_predicate_lists() {
    let env = Env::new();
    let mut page: Value =
        serde_json::from_str(&env.ok(&["export", "loan-eligibility"], None)).unwrap();
    page["id"] = json!("loans-2");
    page["rules"].as_array_mut().unwrap().push(json!({
        "id": "adult-resident",
        "name": "Adult resident",
        "predicates": [
            {"field": "source.age", "operator": ">=", "value": 18},
            {"field": "source.purpose", "operator": "IN", "value": ["car", "home"]},
            {"field": "target.purposes", "operator": "contains", "value": "car"}],
        "logicalOperator": "OR"
    }));
    let good = serde_json::to_string_pretty(&page).unwrap();
    let file = env.file("good.json", &good);
    env.ok(&["import", &file], None);
    let exported: Value = serde_json::from_str(&env.ok(&["export", "loans-2"], None)).unwrap();
    assert_eq!(
        exported["rules"][8]["logic"],
        json!({"or": [{">=": [{"var": "source.age"}, 18]},
                      {"in": [{"var": "source.purpose"}, ["car", "home"]]},
                      {"in": ["car", {"var": "target.purposes"}]}]})
    );
    assert!(exported["rules"][8].get("predicates").is_none());

    page["id"] = json!("loans-3");
    page["rules"][8]["predicates"][1]["operator"] = json!("inn");
    page["rules"][8]["predicates"][2]["field"] = json!("target.purpose");
    let bad = serde_json::to_string_pretty(&page).unwrap();
    let file = env.file("bad.json", &bad);
    let (_, err) = env.fails(&["import", &file], None, 2);
    let (line, col) = locate(&bad, "\"operator\": \"inn\"");
    assert!(
        err.contains(&format!(
            "error[predicate-operator] {line}:{col} at /rules/8/predicates/1/operator: unknown operator `inn` (hint: did you mean `in`?)"
        )),
        "{err}"
    );
    // The predicates are read before the fields are checked: fix the operator and the
    // unknown field is reported at the predicate's field.
    page["rules"][8]["predicates"][1]["operator"] = json!("in");
    let bad = serde_json::to_string_pretty(&page).unwrap();
    let file = env.file("bad2.json", &bad);
    let (_, err) = env.fails(&["import", &file], None, 2);
    let (line, col) = locate(&bad, "\"field\": \"target.purpose\"");
    assert!(
        err.contains(&format!("error[unknown-field] {line}:{col} at /rules/8/predicates/2/field: no target row has a field `purpose`")),
        "{err}"
    );
    let (out, _) = env.fails(&["check", &file], None, 1);
    assert!(out.contains("at /rules/8/predicates/2/field"), "{out}");
    let (_, err) = env.fails(&["export", "loans-3"], None, 2);
    assert!(err.contains("not found"), "{err}");
}

/// 1-based line:col of the start of `needle`'s value-or-key in `text` (the key).
fn locate(text: &str, needle: &str) -> (usize, usize) {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` not in the text"));
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap().chars().count() + 1;
    (line, col)
}

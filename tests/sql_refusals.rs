//! How much of what people write translates to SQL: random rules over every operator
//! and every kind of field, compiled to each dialect; the refusal rate by reason
//! (`cargo test --test sql_refusals -- --nocapture` prints it).

mod common;

use std::collections::BTreeMap;

use common::sql::parse;
use rulebench::app::synth::Rng;
use rulebench::app::types::Dialect;
use serde_json::{Value, json};

/// The fields of the page below, by kind.
const NUM: &[&str] = &["n", "x"];
const TEXT: &[&str] = &["s", "version"];
const BOOL: &[&str] = &["b"];
const ARRAY: &[&str] = &["tags"];

fn field(rng: &mut Rng) -> Value {
    let side = *rng.pick(&["source", "target"]);
    let f = match rng.below(6) {
        0 | 1 => *rng.pick(NUM),
        2 | 3 => *rng.pick(TEXT),
        4 => *rng.pick(BOOL),
        _ => *rng.pick(ARRAY),
    };
    json!({"var": format!("{side}.{f}")})
}

fn constant(rng: &mut Rng) -> Value {
    match rng.below(6) {
        0 => json!(rng.below(10) as i64 - 2),
        1 => json!(*rng.pick(&[0.5, 2.25, 10.0])),
        2 => json!(*rng.pick(&["a", "gpt", "3.5", "", "x y"])),
        3 => json!(rng.below(2) == 0),
        4 => json!(null),
        _ => json!(["a", "b"]),
    }
}

/// Any value: a field, a constant, or an operation.
fn value(rng: &mut Rng, depth: u32) -> Value {
    if depth == 0 || rng.below(100) < 45 {
        return if rng.below(100) < 65 {
            field(rng)
        } else {
            constant(rng)
        };
    }
    let d = depth - 1;
    let op = *rng.pick(&[
        "==",
        "!=",
        "===",
        "!==",
        "<",
        "<=",
        ">",
        ">=",
        "!",
        "!!",
        "and",
        "or",
        "if",
        "in",
        "cat",
        "substr",
        "+",
        "-",
        "*",
        "/",
        "%",
        "min",
        "max",
        "missing",
        "missing_some",
        "some",
        "all",
        "none",
    ]);
    match op {
        "!" | "!!" => json!({op: [value(rng, d)]}),
        "if" => json!({"if": [value(rng, d), value(rng, d), value(rng, d)]}),
        "substr" => json!({"substr": [value(rng, d), rng.below(4) as i64 - 1]}),
        "missing" => json!({"missing": [format!("source.{}", rng.pick(NUM))]}),
        "missing_some" => json!({"missing_some": [1, ["source.n", "target.s"]]}),
        "some" | "all" | "none" => {
            let f = json!({"var": format!("{}.tags", rng.pick(&["source", "target"]))});
            json!({op: [f, {"==": [{"var": ""}, *rng.pick(&["a", "b"])]}]})
        }
        _ => json!({op: [value(rng, d), value(rng, d)]}),
    }
}

/// A rule: a comparison or a connective at the top, as people write them.
fn rule(rng: &mut Rng) -> Value {
    let op = *rng.pick(&["==", "!=", "<", ">=", "and", "or", "!", "in", "===", "some"]);
    match op {
        "!" => json!({"!": [value(rng, 2)]}),
        "some" => value(rng, 1),
        _ => json!({op: [value(rng, 2), value(rng, 2)]}),
    }
}

fn page(rules: &[Value]) -> rulebench::app::types::Page {
    let rules: Vec<Value> = rules
        .iter()
        .enumerate()
        .map(|(i, logic)| json!({"id": format!("r{i}"), "name": format!("r{i}"), "logic": logic}))
        .collect();
    parse(
        &json!({
            "format": "rulebench.page/v1", "id": "wild", "name": "wild",
            "source": {"name": "S", "key": ["id"], "rows": [
                {"id": "a", "n": 1, "x": 2.5, "s": "gpt", "version": "3.5", "b": true, "tags": ["a"]},
                {"id": "b", "n": 4, "x": 0.5, "s": "", "version": "10", "b": false, "tags": []},
                {"id": "c", "s": "x y", "version": "2", "tags": ["b", "a"]}]},
            "target": {"name": "T", "key": ["id"], "rows": [
                {"id": "t1", "n": 3, "x": 1.0, "s": "a", "version": "4.0", "b": true, "tags": ["a", "b"]},
                {"id": "t2", "n": 0, "x": -2.0, "s": "gpt", "version": "1", "tags": []}]},
            "rules": rules
        })
        .to_string(),
    )
}

/// The refusals of `n` random rules in a dialect, by reason: (refused, by reason).
pub fn refusals(dialect: Dialect, n: usize, seed: u64) -> (usize, BTreeMap<String, usize>) {
    let mut rng = Rng::new(seed);
    let rules: Vec<Value> = (0..n).map(|_| rule(&mut rng)).collect();
    let mut by_reason = BTreeMap::new();
    let mut refused = 0;
    // Pages of 100 rules (the plan's limit).
    for chunk in rules.chunks(100) {
        let page = page(chunk);
        let problems = rulebench_core::sql::problems(&page, dialect);
        refused += problems.len();
        for e in &problems {
            let reason = format!(
                "{}: {}",
                e.operator.as_deref().unwrap_or("-"),
                e.why
                    .split([':', '(', ','])
                    .next()
                    .unwrap_or_default()
                    .trim()
            );
            *by_reason.entry(reason).or_insert(0) += 1;
        }
    }
    (refused, by_reason)
}

#[test]
fn the_refusal_rate_on_random_rules() {
    for dialect in Dialect::ALL {
        let n = 3000;
        let (refused, by_reason) = refusals(dialect, n, 7);
        let mut report = format!(
            "{}: {refused} of {n} random rules refused ({:.1}%)\n",
            dialect.name(),
            100.0 * refused as f64 / n as f64
        );
        let mut reasons: Vec<_> = by_reason.into_iter().collect();
        reasons.sort_by_key(|r| std::cmp::Reverse(r.1));
        for (reason, count) in reasons {
            report.push_str(&format!("  {count:5}  {reason}\n"));
        }
        eprintln!("{report}");
        // Measured: 40.4% (51.0% in SQLite, which has no regular expressions) on this
        // generator, which applies every operator to every kind of operand (arrays
        // added, substr of booleans); a translation that stops working shows here.
        let ceiling = if dialect == Dialect::Sqlite { 52 } else { 41 };
        assert!(refused * 100 <= n * ceiling, "{report}");
    }
}

//! Differential test against json-logic-js, the reference implementation: a generated
//! corpus of compatibility-style rules over heterogeneous rows (nulls, empty strings,
//! numeric strings, booleans, arrays, absent fields), plus the official suite, run
//! through `core::engine::apply` and through json-logic-js under node. Reports the
//! agreement and the differences by operator family.
//!
//! Needs node and json-logic-js 2.0.5: `npm install --prefix target/jsdeps
//! json-logic-js@2.0.5` (`.ci/run` does it). Without them the test prints why and
//! returns.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// A small deterministic generator (xorshift64*), so the corpus is the same every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const FIELDS: &[&str] = &["n", "m", "s", "t", "b", "z", "a", "e", "o", "absent"];

/// Values a row field takes: numbers, numeric and other strings, booleans, null,
/// arrays, objects.
fn field_value(rng: &mut Rng, field: &str) -> Option<Value> {
    let v = match field {
        "n" | "m" => rng
            .pick(&[
                json!(0),
                json!(1),
                json!(5),
                json!(-3),
                json!(2.5),
                json!(100),
                json!(null),
                json!("7"),
            ])
            .clone(),
        "s" | "t" => rng
            .pick(&[
                json!(""),
                json!("openai"),
                json!("5"),
                json!("abc"),
                json!("OpenAI"),
                json!(" 3 "),
                json!(null),
                json!("true"),
            ])
            .clone(),
        "b" => rng
            .pick(&[
                json!(true),
                json!(false),
                json!(null),
                json!("false"),
                json!(0),
            ])
            .clone(),
        "z" => json!(null),
        "a" => rng
            .pick(&[
                json!([1, 2]),
                json!([]),
                json!(["openai", "x"]),
                json!([0]),
                json!("openai"),
                json!(null),
                json!([[1], 2]),
            ])
            .clone(),
        "e" => rng
            .pick(&[json!(""), json!([]), json!(0), json!(false)])
            .clone(),
        "o" => rng.pick(&[json!({}), json!({"k": 1}), json!(null)]).clone(),
        _ => return None,
    };
    // Sometimes the field is not in the row at all.
    (!rng.chance(10)).then_some(v)
}

fn row(rng: &mut Rng) -> Value {
    let mut r = serde_json::Map::new();
    for f in FIELDS {
        if let Some(v) = field_value(rng, f) {
            r.insert((*f).to_owned(), v);
        }
    }
    Value::Object(r)
}

fn var(rng: &mut Rng) -> Value {
    let side = rng.pick(&["source", "target"]);
    let field = rng.pick(FIELDS);
    let path = format!("{side}.{field}");
    if rng.chance(15) {
        json!({"var": [path, rng.pick(&[json!(0), json!(""), json!("d"), json!(null)]).clone()]})
    } else {
        json!({"var": path})
    }
}

fn literal(rng: &mut Rng) -> Value {
    rng.pick(&[
        json!(0),
        json!(1),
        json!(3),
        json!(-1),
        json!(2.5),
        json!(""),
        json!("openai"),
        json!("5"),
        json!(true),
        json!(false),
        json!(null),
        json!([1, 2]),
        json!([]),
        json!(["openai", "anthropic"]),
    ])
    .clone()
}

fn leaf(rng: &mut Rng) -> Value {
    if rng.chance(65) {
        var(rng)
    } else {
        literal(rng)
    }
}

/// A rule of the kinds compatibility pages hold, `depth` levels at most.
fn expr(rng: &mut Rng, depth: usize) -> Value {
    if depth == 0 || rng.chance(20) {
        return leaf(rng);
    }
    let d = depth - 1;
    let sub = |rng: &mut Rng| expr(rng, d);
    match rng.below(24) {
        0 => json!({"==": [sub(rng), sub(rng)]}),
        1 => json!({"!=": [sub(rng), sub(rng)]}),
        2 => json!({"===": [sub(rng), sub(rng)]}),
        3 => json!({"!==": [sub(rng), sub(rng)]}),
        4 => json!({"<": [sub(rng), sub(rng)]}),
        5 => json!({"<=": [sub(rng), sub(rng)]}),
        6 => json!({">": [sub(rng), sub(rng)]}),
        7 => json!({">=": [sub(rng), sub(rng)]}),
        8 => json!({"<": [sub(rng), sub(rng), sub(rng)]}),
        9 => json!({"<=": [sub(rng), sub(rng), sub(rng)]}),
        10 => json!({"!": [sub(rng)]}),
        11 => json!({"!!": [sub(rng)]}),
        12 => {
            let n = 1 + rng.below(3);
            json!({"and": (0..n).map(|_| sub(rng)).collect::<Vec<_>>()})
        }
        13 => {
            let n = 1 + rng.below(3);
            json!({"or": (0..n).map(|_| sub(rng)).collect::<Vec<_>>()})
        }
        14 => json!({"if": [sub(rng), sub(rng), sub(rng)]}),
        15 => json!({"in": [sub(rng), sub(rng)]}),
        16 => json!({"cat": [sub(rng), sub(rng)]}),
        17 => json!({*rng.pick(&["+", "-", "*", "/", "%"]): [sub(rng), sub(rng)]}),
        18 => json!({*rng.pick(&["min", "max"]): [sub(rng), sub(rng)]}),
        19 => {
            let a = format!("{}.{}", rng.pick(&["source", "target"]), rng.pick(FIELDS));
            let b = format!("{}.{}", rng.pick(&["source", "target"]), rng.pick(FIELDS));
            if rng.chance(50) {
                json!({"missing": [a, b]})
            } else {
                json!({"missing_some": [1, [a, b]]})
            }
        }
        20 => json!({"substr": [sub(rng), *rng.pick(&[0, 1, -2])]}),
        21 => json!({*rng.pick(&["some", "all", "none"]): [var(rng), {">=": [{"var": ""}, 1]}]}),
        22 => json!({"merge": [sub(rng), sub(rng)]}),
        _ => json!({"!": {"==": [sub(rng), sub(rng)]}}),
    }
}

/// The family a rule counts under: its root operator.
fn family(logic: &Value) -> String {
    match logic {
        Value::Object(o) if o.len() == 1 => o.keys().next().unwrap().clone(),
        _ => "literal".into(),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Ok(Value),
    Error,
    NonFinite,
}

fn same(a: &Outcome, b: &Outcome) -> bool {
    match (a, b) {
        (Outcome::Ok(x), Outcome::Ok(y)) => same_value(x, y),
        (Outcome::Error, Outcome::Error) | (Outcome::NonFinite, Outcome::NonFinite) => true,
        // The engine reports NaN and ±Infinity as an error (JSON cannot hold them);
        // json-logic-js returns them.
        (Outcome::Error, Outcome::NonFinite) | (Outcome::NonFinite, Outcome::Error) => true,
        _ => false,
    }
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(u, v)| same_value(u, v))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

/// json-logic-js, when node and the package are there.
fn node_path() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/jsdeps/node_modules");
    let found = dir.join("json-logic-js/package.json").is_file();
    let node = Command::new("node").arg("--version").output().is_ok();
    (found && node).then_some(dir)
}

fn run_js(cases: &[(Value, Value)], modules: &PathBuf) -> Vec<Outcome> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/js/jsonlogic-eval.js");
    let mut child = Command::new("node")
        .arg(script)
        .env("NODE_PATH", modules)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node");
    let mut input = String::new();
    for (logic, data) in cases {
        input.push_str(&json!({"logic": logic, "data": data}).to_string());
        input.push('\n');
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("node output");
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "node failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            if let Some(ok) = v.get("ok") {
                Outcome::Ok(ok.clone())
            } else if v.get("nonfinite").is_some() {
                Outcome::NonFinite
            } else {
                Outcome::Error
            }
        })
        .collect()
}

fn run_engine(logic: &Value, data: &Value) -> Outcome {
    match rulebench_core::engine::apply(logic, data) {
        Ok(v) => Outcome::Ok(v),
        Err(_) => Outcome::Error,
    }
}

/// The generated corpus: `n` rules, each over a pair of rows.
fn corpus(n: usize) -> Vec<(Value, Value)> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    (0..n)
        .map(|_| {
            let depth = 1 + rng.below(3);
            let logic = expr(&mut rng, depth);
            let data = json!({"source": row(&mut rng), "target": row(&mut rng)});
            (logic, data)
        })
        .collect()
}

/// The agreement the engine must keep on the whole corpus (generated rules, the
/// official suite and every sample-page rule over its rows).
const AGREEMENT_AT_LEAST: f64 = 0.995;

/// The official suite's cases: (logic, data).
fn official_suite() -> Vec<(Value, Value)> {
    let items: Vec<Value> =
        serde_json::from_str(include_str!("data/jsonlogic-tests.json")).unwrap();
    items
        .into_iter()
        .filter_map(|i| match i {
            Value::Array(c) if c.len() == 3 => Some((c[0].clone(), c[1].clone())),
            _ => None,
        })
        .collect()
}

/// Every rule of the sample pages over every (source, target) pair of its page.
fn sample_page_cases() -> Vec<(Value, Value)> {
    let mut out = Vec::new();
    for text in [
        include_str!("../sample-pages/llm-chat-clients.json"),
        include_str!("../sample-pages/loan-eligibility.json"),
        include_str!("../sample-pages/provider-capabilities.json"),
    ] {
        let page: rulebench_core::model::Page = serde_json::from_str(text).unwrap();
        for rule in &page.rules {
            for s in &page.source.rows {
                for t in &page.target.rows {
                    let data = json!({
                        "source": Value::Object(page.source.effective_row(s).into_owned()),
                        "target": Value::Object(page.target.effective_row(t).into_owned()),
                    });
                    out.push((rule.logic.clone(), data));
                }
            }
        }
    }
    out
}

#[test]
fn the_engine_agrees_with_json_logic_js_on_generated_rules() {
    let Some(modules) = node_path() else {
        eprintln!(
            "skipped: node or json-logic-js missing (npm install --prefix target/jsdeps json-logic-js@2.0.5)"
        );
        return;
    };
    let generated = corpus(12_000);
    let (official, samples) = (official_suite(), sample_page_cases());
    let mut cases = generated.clone();
    cases.extend(official.iter().cloned());
    cases.extend(samples.iter().cloned());
    let js = run_js(&cases, &modules);
    assert_eq!(js.len(), cases.len());
    let mut by_family: BTreeMap<String, (usize, usize, Vec<String>)> = BTreeMap::new();
    let mut agree = 0;
    for ((logic, data), expected) in cases.iter().zip(&js) {
        let got = run_engine(logic, data);
        let entry = by_family.entry(family(logic)).or_default();
        entry.0 += 1;
        if same(&got, expected) {
            agree += 1;
        } else {
            entry.1 += 1;
            if entry.2.len() < 3 {
                entry.2.push(format!(
                    "{logic} over {data}: engine {got:?}, js {expected:?}"
                ));
            }
        }
    }
    let rate = agree as f64 / cases.len() as f64;
    eprintln!(
        "agreement with json-logic-js: {agree}/{} = {:.2}% ({} generated rules, {} official \
         cases, {} sample-page rule evaluations)",
        cases.len(),
        rate * 100.0,
        generated.len(),
        official.len(),
        samples.len()
    );
    // The official suite and the sample pages must agree case for case.
    let exact = generated.len();
    let strict_bad: Vec<String> = cases[exact..]
        .iter()
        .zip(&js[exact..])
        .filter(|((l, d), e)| !same(&run_engine(l, d), e))
        .map(|((l, d), e)| format!("{l} over {d}: js {e:?}"))
        .collect();
    for (f, (n, bad, examples)) in &by_family {
        if *bad > 0 {
            eprintln!("  {f}: {bad} of {n} differ");
            for e in examples {
                eprintln!("    {e}");
            }
        }
    }
    assert!(
        rate >= AGREEMENT_AT_LEAST,
        "agreement fell to {:.2}%",
        rate * 100.0
    );
    assert!(
        strict_bad.is_empty(),
        "official suite or sample pages differ: {strict_bad:#?}"
    );
}

/// Regressions found in review, each with json-logic-js's answer (no node needed).
#[test]
fn missing_in_item_scope_equality_conversions_and_missing_arguments() {
    let apply = |logic: Value, data: Value| rulebench_core::engine::apply(&logic, &data);
    // `missing` inside a quantifier reads the current item, not the root data.
    assert_eq!(
        apply(
            json!({"all": [{"var": "target.endpoints"}, {"!": {"missing": ["url"]}}]}),
            json!({"target": {"endpoints": [{"url": "a"}, {"url": "b"}]}})
        ),
        Ok(json!(true))
    );
    assert_eq!(
        apply(
            json!({"map": [{"var": "xs"}, {"missing": ["a"]}]}),
            json!({"xs": [{"a": 1}, {"b": 2}]})
        ),
        Ok(json!([[], ["a"]]))
    );
    // `==` converts as the comparisons do.
    assert_eq!(
        apply(json!({"==": ["0x10", 16]}), json!(null)),
        Ok(json!(true))
    );
    assert_eq!(
        apply(json!({"<=": ["0x10", 16]}), json!(null)),
        Ok(json!(true))
    );
    assert_eq!(
        apply(
            json!({"==": [[1e20], "100000000000000000000"]}),
            json!(null)
        ),
        Ok(json!(true))
    );
    // A missing argument is undefined (NaN), not null (0).
    assert_eq!(apply(json!({"<": [-1]}), json!(null)), Ok(json!(false)));
    assert!(
        apply(json!({"-": []}), json!(null)).is_err(),
        "NaN is no JSON result"
    );
    // No sign after a radix prefix.
    assert_eq!(
        apply(json!({"<": [{"var": "x"}, 5]}), json!({"x": "0x+3"})),
        Ok(json!(false))
    );
}

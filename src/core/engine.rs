//! The JSONLogic engine: datalogic-rs with its extension operators, compiled once per rule.
//!
//! Besides compiling, this module works out statically which fields of the source and
//! target rows a rule reads ([`Reads`]); the matrix uses that to evaluate a rule once per
//! distinct combination of the values it reads instead of once per pair.

use std::sync::OnceLock;

use datalogic_rs::bumpalo::Bump;
use datalogic_rs::{DataValue, Engine, Logic};
use serde_json::Value;

use super::model::Side;

/// The process-wide engine (it is immutable and thread-safe).
pub fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(Engine::new)
}

/// Every operator this build evaluates, as the engine names them.
pub fn operator_names() -> Vec<&'static str> {
    engine().builtin_operator_names().collect()
}

/// Operators whose second argument (and later ones) is evaluated per array item.
pub(crate) const ITERATORS: &[&str] = &[
    "map", "filter", "reduce", "all", "some", "none", "sort", "group_by",
];

/// A rule compiled for evaluation, with the fields it reads.
pub struct CompiledRule {
    pub logic: Logic,
    pub reads: Reads,
}

impl std::fmt::Debug for CompiledRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledRule")
            .field("reads", &self.reads)
            .finish()
    }
}

/// Compiles a rule's logic. Validation (see `validate`) runs before this and catches
/// what the engine would accept but a page must not hold.
pub fn compile(logic: &Value) -> Result<CompiledRule, String> {
    let compiled = engine().compile(logic).map_err(|e| e.to_string())?;
    Ok(CompiledRule {
        logic: compiled,
        reads: Reads::of(logic),
    })
}

/// A path into one row: the segments after `source.` / `target.`; empty = the whole row.
pub type FieldPath = Vec<String>;

/// The fields of each side a rule can read. A side is `None` when the rule may read
/// anything of it (a computed `var` path, for instance): the whole row then counts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reads {
    pub source: Option<Vec<FieldPath>>,
    pub target: Option<Vec<FieldPath>>,
}

impl Reads {
    /// Analyses a rule. Over-approximates: reading more than needed only costs speed.
    pub fn of(logic: &Value) -> Reads {
        let mut reads = Reads {
            source: Some(vec![]),
            target: Some(vec![]),
        };
        walk_reads(logic, false, &mut reads);
        for paths in [&mut reads.source, &mut reads.target].into_iter().flatten() {
            paths.sort();
            paths.dedup();
        }
        reads
    }

    /// The paths read on one side (`None`: the whole row).
    pub fn side(&self, side: Side) -> Option<&[FieldPath]> {
        match side {
            Side::Source => self.source.as_deref(),
            Side::Target => self.target.as_deref(),
        }
    }

    fn everything(&mut self) {
        self.source = None;
        self.target = None;
    }

    /// Records a dotted context path such as `target.supportsStreaming`.
    fn add_dotted(&mut self, path: &str) {
        if path.is_empty() {
            return self.everything();
        }
        let mut segments = path.split('.');
        let head = segments.next().unwrap_or_default();
        let rest: FieldPath = segments.map(str::to_owned).collect();
        self.add(head, rest);
    }

    fn add(&mut self, head: &str, rest: FieldPath) {
        let slot = match head {
            "source" => &mut self.source,
            "target" => &mut self.target,
            // Anything else reads null from the context: no row field.
            _ => return,
        };
        if let Some(paths) = slot {
            paths.push(rest);
        }
    }
}

fn walk_reads(node: &Value, in_item_scope: bool, reads: &mut Reads) {
    match node {
        Value::Array(items) => items
            .iter()
            .for_each(|v| walk_reads(v, in_item_scope, reads)),
        Value::Object(map) if map.len() == 1 => {
            let (op, args) = map.iter().next().expect("one entry");
            match op.as_str() {
                "var" => {
                    let path = match args {
                        Value::Array(a) => a.first(),
                        other => Some(other),
                    };
                    match path {
                        // Inside map/filter/…, `var` names the current item, not the pair.
                        Some(Value::String(_) | Value::Number(_)) | None if in_item_scope => {}
                        Some(Value::String(p)) => reads.add_dotted(p),
                        Some(Value::Null) | None => reads.everything(),
                        Some(Value::Number(_)) => {}
                        Some(_) => reads.everything(),
                    }
                    if let Value::Array(a) = args {
                        a.iter()
                            .skip(1)
                            .for_each(|v| walk_reads(v, in_item_scope, reads));
                    }
                }
                "val" => {
                    let segments: Option<Vec<&str>> = match args {
                        Value::Array(a) => a.iter().map(Value::as_str).collect(),
                        Value::String(s) => Some(vec![s.as_str()]),
                        _ => None,
                    };
                    match segments {
                        Some(_) if in_item_scope => {}
                        Some(s) if s.is_empty() => reads.everything(),
                        Some(s) => reads.add(s[0], s[1..].iter().map(|x| x.to_string()).collect()),
                        // Scope-level access or computed segments: anything.
                        None => reads.everything(),
                    }
                }
                "missing" | "missing_some" | "exists" => {
                    let names: Vec<&Value> = match (op.as_str(), args) {
                        ("missing_some", Value::Array(a)) => match a.get(1) {
                            Some(Value::Array(names)) => names.iter().collect(),
                            _ => return reads.everything(),
                        },
                        ("exists", Value::Array(a)) => {
                            // `exists` takes path segments.
                            match a.iter().map(Value::as_str).collect::<Option<Vec<_>>>() {
                                Some(s) if !in_item_scope && !s.is_empty() => {
                                    reads.add(s[0], s[1..].iter().map(|x| x.to_string()).collect());
                                    return;
                                }
                                Some(_) if in_item_scope => return,
                                _ => return reads.everything(),
                            }
                        }
                        (_, Value::Array(a)) => a.iter().collect(),
                        (_, other) => vec![other],
                    };
                    for name in names {
                        match name {
                            Value::String(_) if in_item_scope => {}
                            Value::String(p) => reads.add_dotted(p),
                            Value::Array(inner) => {
                                inner.iter().for_each(|v| walk_reads(v, in_item_scope, reads))
                            }
                            Value::Number(_) | Value::Null | Value::Bool(_) => {}
                            _ => reads.everything(),
                        }
                    }
                }
                op if ITERATORS.contains(&op) => match args {
                    Value::Array(a) => {
                        if let Some(first) = a.first() {
                            walk_reads(first, in_item_scope, reads);
                        }
                        a.iter().skip(1).for_each(|v| walk_reads(v, true, reads));
                    }
                    other => walk_reads(other, in_item_scope, reads),
                },
                _ => walk_reads(args, in_item_scope, reads),
            }
        }
        Value::Object(map) => map
            .values()
            .for_each(|v| walk_reads(v, in_item_scope, reads)),
        _ => {}
    }
}

/// The outcome of one rule for one pair.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The rule's value and whether it counts as a pass (JSONLogic truthiness).
    Value { value: Value, pass: bool },
    /// The engine raised an error; the rule fails.
    Error(String),
}

impl Outcome {
    pub fn passed(&self) -> bool {
        matches!(self, Outcome::Value { pass: true, .. })
    }
}

/// Evaluates a compiled rule against the context `{source, target}`, in `arena`.
/// Returns whether the rule passed, or the engine's error.
pub fn eval_pair<'a>(
    rule: &'a Logic,
    source: DataValue<'a>,
    target: DataValue<'a>,
    arena: &'a Bump,
) -> Result<&'a DataValue<'a>, String> {
    let pair = arena.alloc([("source", source), ("target", target)]);
    engine()
        .evaluate(rule, DataValue::Object(pair), arena)
        .map_err(|e| e.to_string())
}

/// JSONLogic truthiness as the engine applies it.
pub fn truthy(value: &DataValue<'_>) -> bool {
    engine().truthy(value)
}

/// Evaluates a compiled rule for one pair of JSON rows, with the full value.
pub fn evaluate_rows(rule: &Logic, source: &Value, target: &Value) -> Outcome {
    let arena = Bump::new();
    let s = DataValue::from_serde_value_in(source, &arena);
    let t = DataValue::from_serde_value_in(target, &arena);
    match eval_pair(rule, s, t, &arena) {
        Ok(v) => Outcome::Value {
            pass: truthy(v),
            value: to_json(v),
        },
        Err(e) => Outcome::Error(e),
    }
}

/// Plain JSONLogic: `logic` applied to `data` (what `rulebench eval` does).
pub fn apply(logic: &Value, data: &Value) -> Result<Value, String> {
    let compiled = engine().compile(logic).map_err(|e| e.to_string())?;
    let arena = Bump::new();
    let data = DataValue::from_serde_value_in(data, &arena);
    let result = engine()
        .evaluate(&compiled, data, &arena)
        .map_err(|e| e.to_string())?;
    Ok(to_json(result))
}

/// Converts an engine value to JSON; whole floats print as integers, as JSONLogic does.
pub fn to_json(value: &DataValue<'_>) -> Value {
    normalize_numbers(serde_json::from_str(&value.to_string()).unwrap_or(Value::Null))
}

/// `2.0` → `2`, recursively, so results read as JSONLogic's reference prints them.
fn normalize_numbers(value: Value) -> Value {
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f.fract() == 0.0 && f.abs() < 9.0e15 {
                Value::from(f as i64)
            } else {
                Value::Number(n)
            }
        }
        Value::Array(a) => Value::Array(a.into_iter().map(normalize_numbers).collect()),
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, v)| (k, normalize_numbers(v)))
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(v: &[&str]) -> Option<Vec<FieldPath>> {
        Some(
            v.iter()
                .map(|p| {
                    if p.is_empty() {
                        vec![]
                    } else {
                        p.split('.').map(str::to_owned).collect()
                    }
                })
                .collect(),
        )
    }

    #[test]
    fn reads_of_the_seed_streaming_rule() {
        let rule = json!({"or": [{"==": [{"var": "source.needsStreaming"}, false]},
            {"and": [{"==": [{"var": "source.needsStreaming"}, true]},
                     {"==": [{"var": "target.supportsStreaming"}, true]}]}]});
        let reads = Reads::of(&rule);
        assert_eq!(reads.source, paths(&["needsStreaming"]));
        assert_eq!(reads.target, paths(&["supportsStreaming"]));
    }

    #[test]
    fn reads_skip_item_scope_and_catch_computed_paths() {
        let rule = json!({"some": [{"var": "target.tags"}, {"==": [{"var": ""}, "x"]}]});
        assert_eq!(
            Reads::of(&rule),
            Reads {
                source: Some(vec![]),
                target: paths(&["tags"])
            }
        );
        let rule = json!({"var": {"cat": ["target.", "x"]}});
        assert_eq!(Reads::of(&rule), Reads::default());
        let rule = json!({"missing": ["source.a", "target.b"]});
        assert_eq!(Reads::of(&rule).target, paths(&["b"]));
        let rule = json!({"var": "target"});
        assert_eq!(Reads::of(&rule).target, paths(&[""]));
    }

    #[test]
    fn missing_field_reads_as_null() {
        let rule = compile(&json!({"==": [{"var": "source.maxLatencyMs"}, null]})).unwrap();
        let out = evaluate_rows(&rule.logic, &json!({}), &json!({}));
        assert_eq!(
            out,
            Outcome::Value {
                value: json!(true),
                pass: true
            }
        );
    }

    #[test]
    fn apply_prints_whole_numbers_as_integers() {
        assert_eq!(apply(&json!({"+": [1, 2]}), &json!(null)).unwrap(), json!(3));
        assert_eq!(
            apply(&json!({"/": [1, 4]}), &json!(null)).unwrap(),
            json!(0.25)
        );
    }
}

//! The JSONLogic engine: datalogic-rs with its extension operators, compiled once per rule.
//!
//! Besides compiling, this module works out statically which fields of the source and
//! target rows a rule reads ([`Reads`]); the matrix uses that to evaluate a rule once per
//! distinct combination of the values it reads instead of once per pair.

use std::sync::OnceLock;

use datalogic_rs::bumpalo::Bump;
use datalogic_rs::operator::EvalContext;
use datalogic_rs::{ArenaExt, CustomOperator, DataValue, Engine, Logic};
use serde_json::Value;

use super::model::Side;

/// The process-wide engine (it is immutable and thread-safe).
pub fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        // JSONLogic's truthiness as json-logic-js has it: `[]` is falsy, every object
        // truthy (datalogic-rs finds `{}` falsy), for `if`, `and`, `or` and the
        // quantifiers as for `!` and `!!`.
        let mut config = datalogic_rs::EvaluationConfig::default();
        config.truthy_evaluator = datalogic_rs::TruthyEvaluator::custom(|v| {
            use datalogic_rs::datavalue::OwnedDataValue as O;
            match v {
                O::Null => false,
                O::Bool(b) => *b,
                O::Number(n) => {
                    let f = n.as_f64();
                    f != 0.0 && !f.is_nan()
                }
                O::String(s) => !s.is_empty(),
                O::Array(items) => !items.is_empty(),
                _ => true,
            }
        });
        let mut builder = Engine::builder()
            .with_config(config)
            .add_operator(JS_EQ, LooseEquality { negate: false })
            .add_operator(JS_NE, LooseEquality { negate: true })
            .add_operator(ARRAY_OF, ArrayOf);
        for (_, name) in super::jsops::OPERATORS {
            builder = builder.add_operator(*name, super::jsops::operator(name));
        }
        builder.build()
    })
}

/// Every operator a rule may use, as the engine names them.
pub fn operator_names() -> Vec<&'static str> {
    engine().builtin_operator_names().collect()
}

/// The operators `==` and `!=` compile to. datalogic-rs's own loose equality holds
/// `null == 0`, `null == false` and `null == ""`, which JSONLogic (JavaScript's `==`)
/// does not; rules get JavaScript's abstract equality instead.
const JS_EQ: &str = "rulebench:==";
const JS_NE: &str = "rulebench:!=";

struct LooseEquality {
    negate: bool,
}

impl CustomOperator for LooseEquality {
    fn evaluate<'a>(
        &self,
        args: &[&'a DataValue<'a>],
        _ctx: &mut EvalContext<'_, 'a>,
        arena: &'a Bump,
    ) -> datalogic_rs::Result<&'a DataValue<'a>> {
        let null = DataValue::Null;
        let a = args.first().copied().unwrap_or(&null);
        let b = args.get(1).copied().unwrap_or(&null);
        Ok(arena.bool(js_loose_eq(a, b) != self.negate))
    }
}

/// JavaScript's `==` over JSON values. Arrays and objects compared with each other
/// are equal when their contents are (JavaScript compares identity, which JSON data
/// has no notion of).
pub fn js_loose_eq(a: &DataValue<'_>, b: &DataValue<'_>) -> bool {
    use DataValue as V;
    match (a, b) {
        (V::Null, V::Null) => true,
        (V::Null, _) | (_, V::Null) => false,
        (V::Number(x), V::Number(y)) => x.as_f64() == y.as_f64(),
        (V::String(x), V::String(y)) => x == y,
        (V::Bool(x), V::Bool(y)) => x == y,
        (V::Number(n), V::String(s)) | (V::String(s), V::Number(n)) => {
            n.as_f64() == super::jsops::to_number(&V::String(s))
        }
        (V::Bool(x), other) | (other, V::Bool(x)) => {
            js_loose_eq(&DataValue::from_f64(if *x { 1.0 } else { 0.0 }), other)
        }
        (V::Array(_) | V::Object(_), V::Array(_) | V::Object(_)) => a == b,
        (V::Array(_) | V::Object(_), prim) | (prim, V::Array(_) | V::Object(_)) => {
            let text = super::jsops::to_string(if matches!(a, V::Array(_) | V::Object(_)) {
                a
            } else {
                b
            });
            js_loose_eq(&DataValue::String(&text), prim)
        }
        _ => a == b,
    }
}

/// The logic as the engine compiles it: `==` / `!=` become JavaScript's equality and the
/// operators of [`super::jsops`] replace datalogic-rs's.
fn for_engine(logic: &Value) -> Value {
    for_engine_in(logic, false)
}

/// `item_scope`: inside map/filter/all/some/none/reduce, where the data is the current
/// item. `missing` and `missing_some` keep datalogic-rs's operators there (they read the
/// current item; a custom operator sees only the root data).
fn for_engine_in(logic: &Value, item_scope: bool) -> Value {
    match logic {
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| for_engine_in(v, item_scope)).collect())
        }
        Value::Object(map) if map.len() == 1 => {
            let (k, v) = map.iter().next().expect("one entry");
            let op = k.as_str();
            let name = match op {
                "==" => JS_EQ.to_owned(),
                "!=" => JS_NE.to_owned(),
                "missing" | "missing_some" if item_scope => k.clone(),
                _ => super::jsops::engine_name(op).map_or_else(|| k.clone(), str::to_owned),
            };
            let args = match v {
                Value::Array(args) => {
                    let mut out: Vec<Value> = args
                        .iter()
                        .enumerate()
                        .map(|(i, a)| for_engine_in(a, item_scope || item_scoped(op, i)))
                        .collect();
                    // The array quantifiers of json-logic-js see a non-array as `[]`.
                    if matches!(op, "all" | "some" | "none" | "filter" | "map" | "reduce")
                        && !out.is_empty()
                    {
                        out[0] = json_array_of(out[0].take());
                    }
                    Value::Array(out)
                }
                other => for_engine_in(other, item_scope),
            };
            let mut m = serde_json::Map::new();
            m.insert(name, args);
            Value::Object(m)
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), for_engine_in(v, item_scope)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `{"if": [{"rulebench:is_array": x}, x, []]}` without evaluating `x` twice is not
/// expressible; the operator below returns its argument when it is an array, else `[]`.
fn json_array_of(logic: Value) -> Value {
    serde_json::json!({ARRAY_OF: [logic]})
}

const ARRAY_OF: &str = "rulebench:array_of";

struct ArrayOf;

impl CustomOperator for ArrayOf {
    fn evaluate<'a>(
        &self,
        args: &[&'a DataValue<'a>],
        _ctx: &mut EvalContext<'_, 'a>,
        arena: &'a Bump,
    ) -> datalogic_rs::Result<&'a DataValue<'a>> {
        Ok(match args.first() {
            Some(v @ DataValue::Array(_)) => v,
            _ => arena.array(&[]),
        })
    }
}

/// Whether argument `i` of operator `op` is evaluated per array item (where `var`
/// names the item, not the pair). Every other argument sees the pair.
pub(crate) fn item_scoped(op: &str, i: usize) -> bool {
    match op {
        // [array, per-item logic]; reduce: [array, per-item logic, initial value].
        "map" | "filter" | "all" | "some" | "none" | "group_by" | "reduce" => i == 1,
        // [array, ascending, per-item key].
        "sort" => i == 2,
        _ => false,
    }
}

/// A rule compiled for evaluation, with the fields it reads.
pub struct CompiledRule {
    pub logic: Logic,
    /// The rule's `appliesWhen`, when it has one: where it is falsy the outcome is n/a.
    pub applies: Option<Logic>,
    /// What the logic and the condition read.
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
    let compiled = engine()
        .compile(&for_engine(logic))
        .map_err(|e| e.to_string())?;
    Ok(CompiledRule {
        logic: compiled,
        applies: None,
        reads: Reads::of(logic),
    })
}

/// Compiles a rule's logic and its `appliesWhen` condition (an error names which).
pub fn compile_rule(logic: &Value, applies_when: Option<&Value>) -> Result<CompiledRule, String> {
    let mut rule = compile(logic)?;
    if let Some(condition) = applies_when {
        let c = compile(condition).map_err(|e| format!("appliesWhen: {e}"))?;
        rule.applies = Some(c.logic);
        rule.reads = rule.reads.union(&c.reads);
    }
    Ok(rule)
}

/// A path into one row: the segments after `source.` / `target.`; empty = the whole row.
pub type FieldPath = Vec<String>;

/// The paths a condition holds present (not null) wherever it is truthy: `P` alone,
/// `!!P`, `P != null`, `P == v` or `P === v` for a `v` that is not null, `v in P`, and
/// an `and` of such tests. A rule whose `appliesWhen` is such a test reads those paths
/// only where they are present.
pub fn present_when_true(condition: &Value) -> Vec<String> {
    fn path(v: &Value) -> Option<String> {
        match v.as_object().filter(|o| o.len() == 1)?.get("var")? {
            Value::String(p) => Some(p.clone()),
            // With a default, a missing field reads the default: nothing is proven.
            Value::Array(a) if a.get(1).is_none_or(Value::is_null) => {
                a.first()?.as_str().map(str::to_owned)
            }
            _ => None,
        }
    }
    let mut out = Vec::new();
    if let Some(p) = path(condition) {
        out.push(p);
        return out;
    }
    let Some((op, args)) = condition
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.iter().next())
    else {
        return out;
    };
    let args: Vec<&Value> = match args {
        Value::Array(a) => a.iter().collect(),
        one => vec![one],
    };
    let literal = |v: &Value| !v.is_null() && !v.is_object() && !v.is_array();
    match (op.as_str(), args.as_slice()) {
        ("and", items) => items.iter().for_each(|c| out.extend(present_when_true(c))),
        ("!!", [a]) => out.extend(path(a)),
        ("!=" | "!==", [a, b]) => {
            if b.is_null() {
                out.extend(path(a));
            } else if a.is_null() {
                out.extend(path(b));
            }
        }
        ("==" | "===", [a, b]) => {
            if literal(b) {
                out.extend(path(a));
            } else if literal(a) {
                out.extend(path(b));
            }
        }
        ("in", [a, b]) if literal(a) => out.extend(path(b)),
        _ => {}
    }
    out
}

/// Whether the `var` at `pointer` in `logic` reads one of `paths`.
pub fn reads_one_of(logic: &Value, pointer: &str, paths: &[String]) -> bool {
    let read = match logic.pointer(pointer) {
        Some(Value::String(p)) => Some(p.as_str()),
        Some(Value::Array(a)) => a.first().and_then(Value::as_str),
        _ => None,
    };
    read.is_some_and(|r| paths.iter().any(|p| p == r))
}

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

    /// What either of two reads reads.
    pub fn union(&self, other: &Reads) -> Reads {
        let side = |a: &Option<Vec<FieldPath>>, b: &Option<Vec<FieldPath>>| match (a, b) {
            (Some(a), Some(b)) => {
                let mut paths: Vec<FieldPath> = a.iter().chain(b).cloned().collect();
                paths.sort();
                paths.dedup();
                Some(paths)
            }
            _ => None,
        };
        Reads {
            source: side(&self.source, &other.source),
            target: side(&self.target, &other.target),
        }
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
                            Value::Array(inner) => inner
                                .iter()
                                .for_each(|v| walk_reads(v, in_item_scope, reads)),
                            Value::Number(_) | Value::Null | Value::Bool(_) => {}
                            _ => reads.everything(),
                        }
                    }
                }
                op => match args {
                    Value::Array(a) => a.iter().enumerate().for_each(|(i, v)| {
                        walk_reads(v, in_item_scope || item_scoped(op, i), reads)
                    }),
                    other => walk_reads(other, in_item_scope, reads),
                },
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

/// Logic compiled once and tested over many JSON values (`evaluate --where`): a value
/// passes when the logic's result is truthy; an engine error fails it.
pub struct Test {
    logic: Logic,
}

impl Test {
    pub fn new(logic: &Value) -> Result<Test, String> {
        if let Some(at) = super::diag::deeper_than(logic, super::diag::MAX_DEPTH) {
            return Err(format!(
                "logic nests deeper than the limit of {} levels (at `{at}`)",
                super::diag::MAX_DEPTH
            ));
        }
        let logic = engine()
            .compile(&for_engine(logic))
            .map_err(|e| e.to_string())?;
        Ok(Test { logic })
    }

    pub fn passes(&self, data: &Value) -> bool {
        let arena = Bump::new();
        let data = DataValue::from_serde_value_in(data, &arena);
        engine()
            .evaluate(&self.logic, data, &arena)
            .is_ok_and(|v| truthy(v))
    }
}

/// Plain JSONLogic: `logic` applied to `data` (what `rulebench eval` does).
pub fn apply(logic: &Value, data: &Value) -> Result<Value, String> {
    // The engine refuses deep logic with no place named: the one limit of rules, with
    // the pointer where it is passed.
    if let Some(at) = super::diag::deeper_than(logic, super::diag::MAX_DEPTH) {
        return Err(format!(
            "logic nests deeper than the limit of {} levels (at `{at}`)",
            super::diag::MAX_DEPTH
        ));
    }
    let compiled = engine()
        .compile(&for_engine(logic))
        .map_err(|e| e.to_string())?;
    let arena = Bump::new();
    let data = DataValue::from_serde_value_in(data, &arena);
    let result = engine()
        .evaluate(&compiled, data, &arena)
        .map_err(|e| e.to_string())?;
    // JSON has no NaN or Infinity: such a result (JavaScript would return it) is an
    // error here; inside a rule it is simply falsy.
    if let DataValue::Number(n) = result
        && !n.as_f64().is_finite()
    {
        return Err(format!(
            "the result is {} (JavaScript's value for a number that cannot be computed)",
            super::jsops::number_to_string(n.as_f64())
        ));
    }
    Ok(to_json(result))
}

/// A constant part of a rule (no field read), evaluated as the engine would: its JSON
/// value, or `Err(number)` for a number JSON cannot hold (NaN, ±Infinity). The outer
/// error is the engine's own.
pub fn evaluate_constant(logic: &Value) -> Result<Result<Value, f64>, String> {
    let compiled = engine()
        .compile(&for_engine(logic))
        .map_err(|e| e.to_string())?;
    let arena = Bump::new();
    let data = DataValue::from_serde_value_in(&serde_json::json!({}), &arena);
    let result = engine()
        .evaluate(&compiled, data, &arena)
        .map_err(|e| e.to_string())?;
    if let DataValue::Number(n) = result
        && !n.as_f64().is_finite()
    {
        return Ok(Err(n.as_f64()));
    }
    Ok(Ok(to_json(result)))
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
        // reduce's initial value and sort's direction are read from the pair.
        let rule = json!({"reduce": [{"var": "target.tags"}, {"+": [{"var": "accumulator"}, 1]}, {"var": "source.start"}]});
        assert_eq!(Reads::of(&rule).source, paths(&["start"]));
        let rule = json!({"sort": [{"var": "target.s"}, {"var": "source.asc"}, {"var": "k"}]});
        assert_eq!(Reads::of(&rule).source, paths(&["asc"]));
        assert_eq!(Reads::of(&rule).target, paths(&["s"]));
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
    fn equality_is_javascripts() {
        let eq = |a: Value, b: Value| apply(&json!({"==": [a, b]}), &json!(null)).unwrap();
        assert_eq!(eq(json!(null), json!(0)), json!(false));
        assert_eq!(eq(json!(null), json!(false)), json!(false));
        assert_eq!(eq(json!(null), json!("")), json!(false));
        assert_eq!(eq(json!(null), json!(null)), json!(true));
        assert_eq!(eq(json!(1), json!("1")), json!(true));
        assert_eq!(eq(json!(0), json!("")), json!(true));
        assert_eq!(eq(json!(true), json!("1")), json!(true));
        assert_eq!(eq(json!(false), json!("0")), json!(true));
        assert_eq!(eq(json!([1, 2]), json!("1,2")), json!(true));
        assert_eq!(eq(json!("abc"), json!(0)), json!(false));
        assert_eq!(
            apply(&json!({"!=": [{"var": "x"}, 0]}), &json!({})).unwrap(),
            json!(true)
        );
        // Relational comparisons keep JavaScript's null → 0.
        assert_eq!(
            apply(&json!({">=": [null, 0]}), &json!(null)).unwrap(),
            json!(true)
        );
    }

    #[test]
    fn apply_prints_whole_numbers_as_integers() {
        assert_eq!(
            apply(&json!({"+": [1, 2]}), &json!(null)).unwrap(),
            json!(3)
        );
        assert_eq!(
            apply(&json!({"/": [1, 4]}), &json!(null)).unwrap(),
            json!(0.25)
        );
    }
}

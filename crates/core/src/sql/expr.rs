//! JSONLogic to SQL expressions, typed by the datasets' fields.
//!
//! Each part of a rule compiles to an [`Ex`]: a constant the engine itself computed, a SQL
//! expression of one JSON type (whose SQL `NULL` is JavaScript's `null`, or `NaN` for
//! arithmetic), or a condition whose truth alone translates (the value of `and`, `or`,
//! `if` over mixed types, `missing`). Operators take their operands' `NULL` apart first
//! ([`Compiler::split`]): each operator is written once for non-null operands and once
//! with the constant `null` (or `NaN`) in place, so SQL's three-valued logic never decides
//! what JavaScript decides otherwise.

use datalogic_rs::DataValue;
use datalogic_rs::bumpalo::Bump;
use serde_json::Value;

use super::super::engine;
use super::super::jsops;
use super::super::model::{Page, Side};
use super::dialect::Dialect;
use super::types::{Kind, Schema, SqlError};

/// A SQL expression's JSON type.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ty {
    Bool,
    Num,
    Text,
    TextArray,
}

/// What a SQL `NULL` of an expression stands for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Nulls {
    /// It is never null.
    No,
    /// JavaScript's `null` (an absent or null field).
    JsNull,
    /// `NaN` (arithmetic over a null or a NaN).
    NaN,
}

#[derive(Debug, Clone)]
enum Ex {
    /// A constant, as the engine computed it.
    Lit(Value),
    /// The constant NaN.
    NaN,
    Sql {
        sql: String,
        ty: Ty,
        nulls: Nulls,
    },
    /// Only the truth translates (a SQL boolean, never null): the value of `missing`.
    Cond(String),
    /// One of two values by a SQL condition that is never null: the value of `and`,
    /// `or` and `if` over operands of different types. An operator applies to each
    /// value, and the condition picks the result.
    Choice {
        when: String,
        then: Box<Ex>,
        other: Box<Ex>,
    },
}

impl Ex {
    fn sql(sql: String, ty: Ty, nulls: Nulls) -> Ex {
        Ex::Sql { sql, ty, nulls }
    }

    fn boolean(sql: String) -> Ex {
        Ex::Sql {
            sql,
            ty: Ty::Bool,
            nulls: Nulls::No,
        }
    }

    fn constant(b: bool) -> Ex {
        Ex::Lit(Value::Bool(b))
    }
}

type R<T> = Result<T, SqlError>;

/// The most SQL one rule may compile to.
const MAX_RULE_SQL: usize = 64 * 1024;

/// Compiles the rules of one page.
pub struct Compiler<'a> {
    d: Dialect,
    source: &'a Schema,
    target: &'a Schema,
    /// The page, for the strings its rows hold (a string field made a number translates
    /// where the dialect's cast reads every one of them as JavaScript does).
    page: &'a Page,
    /// Fields read, per side, in first-read order.
    used: [Vec<String>; 2],
    /// The items of the arrays being walked by `some`, `all`, `none`, innermost last
    /// (`{"var": ""}` is the last one).
    items: Vec<Ex>,
    /// The text of array fields (their items joined by commas), by its SQL: a string
    /// made a number reads what the page's arrays join to.
    joined: Vec<(String, Side, String)>,
}

fn err(pointer: &str, op: &str, why: impl Into<String>, hint: Option<&str>) -> SqlError {
    SqlError {
        rule: None,
        pointer: pointer.to_owned(),
        operator: (!op.is_empty()).then(|| op.to_owned()),
        why: why.into(),
        hint: hint.map(str::to_owned),
    }
}

/// Whether a part of a rule reads no data (so the engine can compute it once, here).
fn constant(logic: &Value) -> bool {
    match logic {
        Value::Object(map) => map.iter().all(|(k, v)| {
            !matches!(
                k.as_str(),
                "var" | "missing" | "missing_some" | "val" | "exists"
            ) && constant(v)
        }),
        Value::Array(items) => items.iter().all(constant),
        _ => true,
    }
}

fn with_data<T>(v: &Value, f: impl FnOnce(&DataValue<'_>) -> T) -> T {
    let arena = Bump::new();
    let dv = DataValue::from_serde_value_in(v, &arena);
    f(&dv)
}

fn js_number(v: &Value) -> f64 {
    with_data(v, jsops::to_number)
}

fn js_parse_float(v: &Value) -> f64 {
    with_data(v, jsops::parse_float)
}

fn js_string(v: &Value) -> String {
    with_data(v, jsops::to_string)
}

fn js_truthy(v: &Value) -> bool {
    with_data(v, jsops::truthy)
}

/// A constant of a column's type, in a dialect (a dataset default or a patch value).
pub fn literal(d: Dialect, v: &Value, kind: &Kind) -> String {
    match (v, kind) {
        (Value::Null, _) => "NULL".into(),
        (Value::Bool(b), _) => d.bool(*b).into(),
        (Value::Number(n), _) => d.double(n.as_f64().unwrap_or(f64::NAN)),
        (Value::String(s), _) => d.string(s),
        (Value::Array(items), Kind::TextArray) => text_array(d, items),
        (other, _) => d.string(&other.to_string()),
    }
}

/// A value as a table stores it (the data script's rows).
pub fn stored(d: Dialect, v: &Value, kind: &Kind) -> String {
    match (v, kind) {
        (Value::Bool(b), Kind::Bool) => d.bool(*b).into(),
        (Value::Number(n), Kind::Int) => n.to_string(),
        (Value::Number(n), Kind::Num) => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            match d {
                Dialect::Sqlite | Dialect::Postgres => format!("{f:?}"),
                // A decimal literal would be a DECIMAL first; an exponent makes a DOUBLE.
                Dialect::Duckdb | Dialect::Spark => format!("{f:e}"),
            }
        }
        (Value::String(s), Kind::Text) => d.string(s),
        (Value::Array(items), Kind::TextArray) => text_array(d, items),
        // Anything else is kept as its JSON text.
        (other, _) => d.string(&other.to_string()),
    }
}

fn text_array(d: Dialect, items: &[Value]) -> String {
    let strings: Vec<String> = items
        .iter()
        .map(|i| d.string(i.as_str().unwrap_or_default()))
        .collect();
    match d {
        Dialect::Sqlite => d.string(&Value::Array(items.to_vec()).to_string()),
        Dialect::Duckdb => format!("CAST([{}] AS VARCHAR[])", strings.join(", ")),
        Dialect::Postgres => format!("CAST(ARRAY[{}] AS TEXT[])", strings.join(", ")),
        Dialect::Spark => format!("CAST(array({}) AS ARRAY<STRING>)", strings.join(", ")),
    }
}

impl<'a> Compiler<'a> {
    pub fn new(d: Dialect, source: &'a Schema, target: &'a Schema, page: &'a Page) -> Compiler<'a> {
        Compiler {
            d,
            source,
            target,
            page,
            used: [vec![], vec![]],
            items: Vec::new(),
            joined: Vec::new(),
        }
    }

    /// The fields rules read on one side (each a column of the rows' CTE).
    pub fn fields(&self, side: Side) -> Vec<String> {
        self.used[usize::from(side == Side::Target)].clone()
    }

    /// A rule: its pass as a SQL boolean that is never null.
    pub fn rule(&mut self, logic: &Value, pointer: &str) -> R<String> {
        let ex = self.ex(logic, pointer)?;
        let sql = self.truth(&ex);
        // Values of several types are taken apart operator by operator, and each part
        // repeats what it reads: a rule nesting many of them grows past what a planner
        // takes in reasonable time.
        if sql.len() > MAX_RULE_SQL {
            return Err(err(
                pointer,
                "",
                format!(
                    "translates to {} KB of SQL, past the {} KB a rule may take (operators over values of several types, or divisions, nest copies of their operands)",
                    sql.len() / 1024,
                    MAX_RULE_SQL / 1024
                ),
                Some("split the rule, or give the fields it reads one type"),
            ));
        }
        Ok(sql)
    }

    fn ex(&mut self, logic: &Value, p: &str) -> R<Ex> {
        if constant(logic) {
            return match engine::evaluate_constant(logic) {
                Ok(Ok(v)) => Ok(Ex::Lit(v)),
                Ok(Err(f)) if f.is_nan() => Ok(Ex::NaN),
                Ok(Err(_)) => Err(err(
                    p,
                    "",
                    "this constant part is infinite, which SQL dialects spell differently",
                    None,
                )),
                Err(e) => Err(err(
                    p,
                    "",
                    format!("this constant part fails in the engine ({e})"),
                    None,
                )),
            };
        }
        let Value::Object(map) = logic else {
            return Err(err(
                p,
                "",
                "an array built from fields has no SQL translation",
                None,
            ));
        };
        if map.len() != 1 {
            return Err(err(
                p,
                "",
                "an object of several keys is not an operation",
                None,
            ));
        }
        let (op, raw) = map.iter().next().expect("one key");
        let op = op.as_str();
        let args: Vec<&Value> = match raw {
            Value::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        let at = |i: usize| format!("{p}/{}/{i}", escape_pointer(op));
        let arg_pointer = |i: usize| match raw {
            Value::Array(_) => at(i),
            _ => format!("{p}/{}", escape_pointer(op)),
        };
        let p_op = format!("{p}/{}", escape_pointer(op));
        match op {
            "var" => self.var(&args, &p_op),
            "==" | "!=" | "===" | "!==" | "<" | "<=" | ">" | ">=" | "in" => {
                let mut xs = Vec::new();
                for (i, a) in args.iter().enumerate() {
                    xs.push(self.ex(a, &arg_pointer(i))?);
                }
                let negate = matches!(op, "!=" | "!==");
                let text_field = |x: &Ex| matches!(x, Ex::Sql { ty: Ty::Text, .. });
                if matches!(op, "<" | "<=" | ">" | ">=")
                    && xs
                        .windows(2)
                        .take(2)
                        .any(|w| text_field(&w[0]) && text_field(&w[1]))
                {
                    return Err(err(
                        &p_op,
                        op,
                        "orders two string fields: JavaScript orders strings by UTF-16 code units, SQL by code points, and they differ past U+E000",
                        Some("compare a string field with a constant string"),
                    ));
                }
                let result = match op {
                    "<" | "<=" if xs.len() >= 3 => {
                        let eq = op == "<=";
                        let first = self.binary(&xs[0], &xs[1], &p_op, op, &mut |c, a, b, p| {
                            c.less(a, b, eq, p, op)
                        })?;
                        let second =
                            self.binary(&xs[1], &xs[2], &p_op, op, &mut |c, a, b, p| {
                                c.less(a, b, eq, p, op)
                            })?;
                        self.and_bool(&first, &second)
                    }
                    _ if xs.len() < 2 && matches!(op, "<" | "<=" | ">" | ">=") => {
                        Ex::constant(false)
                    }
                    _ => {
                        let null = Ex::Lit(Value::Null);
                        let a = xs.first().unwrap_or(&null).clone();
                        let b = xs.get(1).unwrap_or(&null).clone();
                        let (a, b) = if matches!(op, ">" | ">=") {
                            (b, a)
                        } else {
                            (a, b)
                        };
                        self.binary(&a, &b, &p_op, op, &mut |c, a, b, p| match op {
                            "==" | "!=" => c.loose_eq(a, b, p, op),
                            "===" | "!==" => c.strict_eq(a, b, p),
                            "<" | ">" => c.less(a, b, false, p, op),
                            "<=" | ">=" => c.less(a, b, true, p, op),
                            _ => c.contains(a, b, p),
                        })?
                    }
                };
                Ok(if negate { self.not(&result) } else { result })
            }
            "!" | "!!" => {
                let a = match args.first() {
                    Some(a) => self.ex(a, &arg_pointer(0))?,
                    None => Ex::Lit(Value::Null),
                };
                let t = self.truth(&a);
                Ok(if op == "!" {
                    Ex::boolean(format!("NOT ({t})"))
                } else {
                    Ex::boolean(t)
                })
            }
            "and" | "or" => {
                let mut xs = Vec::new();
                for (i, a) in args.iter().enumerate() {
                    xs.push(self.ex(a, &arg_pointer(i))?);
                }
                if xs.len() == 1 {
                    return Ok(xs.remove(0));
                }
                let all_bool = xs.iter().all(|x| {
                    matches!(
                        x,
                        Ex::Lit(Value::Bool(_))
                            | Ex::Sql {
                                ty: Ty::Bool,
                                nulls: Nulls::No,
                                ..
                            }
                    )
                });
                let joiner = if op == "and" { " AND " } else { " OR " };
                let parts: Vec<String> = xs.iter().map(|x| self.truth(x)).collect();
                let sql = format!("({})", parts.join(joiner));
                if all_bool {
                    return Ok(Ex::boolean(sql));
                }
                // The value: JavaScript's `a && b` is `b` where `a` is truthy, else
                // `a` (`||` the other way round), typed where the operands share a
                // type; a few operands (each step repeats the last).
                if xs.len() <= 4 {
                    let mut acc = xs[0].clone();
                    for x in &xs[1..] {
                        let t = self.truth(&acc);
                        acc = if op == "and" {
                            self.choose(&[t], &[x.clone(), acc])
                        } else {
                            self.choose(&[t], &[acc.clone(), x.clone()])
                        };
                        if matches!(acc, Ex::Cond(_)) {
                            break;
                        }
                    }
                    if !matches!(acc, Ex::Cond(_)) {
                        return Ok(acc);
                    }
                }
                Ok(Ex::Cond(sql))
            }
            "if" | "?:" => self.if_(&args, &arg_pointer),
            "missing" => self.missing(&args, &p_op, None),
            "missing_some" => {
                let need = match args.first() {
                    Some(v) if constant(v) => match self.ex(v, &arg_pointer(0))? {
                        Ex::Lit(v) => js_number(&v),
                        _ => f64::NAN,
                    },
                    _ => {
                        return Err(err(
                            &p_op,
                            op,
                            "the count of missing_some must be a constant",
                            None,
                        ));
                    }
                };
                let keys: Vec<&Value> = args.get(1).copied().into_iter().collect();
                self.missing(&keys, &p_op, Some(need))
            }
            "+" | "*" | "-" | "/" | "min" | "max" => self.arithmetic(op, &args, &arg_pointer),
            "cat" => {
                let mut pieces = Vec::new();
                for (i, a) in args.iter().enumerate() {
                    let x = self.ex(a, &arg_pointer(i))?;
                    // Its text, null as "".
                    pieces.push(self.text_of(&x, a, "''", &arg_pointer(i), "cat")?);
                }
                Ok(match pieces.len() {
                    0 => Ex::Lit(Value::String(String::new())),
                    1 => Ex::sql(pieces.remove(0), Ty::Text, Nulls::No),
                    _ => Ex::sql(format!("({})", self.d.concat(&pieces)), Ty::Text, Nulls::No),
                })
            }
            "some" | "all" | "none" => self.quantifier(op, &args, &arg_pointer, &p_op),
            "substr" => self.substr(&args, &arg_pointer, &p_op),
            "%" if self.remainder_of_integers(&args) => {
                // Integers: JavaScript's remainder is the integer one (the dividend's
                // sign), exact in 64 bits; `null` is 0 to `Number()`.
                let a = self.ex(args[0], &arg_pointer(0))?;
                let b = args[1].as_i64().expect("an integer constant");
                let a = match a {
                    Ex::Lit(v) => self.d.double(js_number(&v)),
                    Ex::Sql { sql, .. } => format!("COALESCE({sql}, {})", self.d.double(0.0)),
                    _ => unreachable!("an integer field or constant"),
                };
                Ok(Ex::sql(
                    self.d
                        .to_double(&format!("({} % {b})", self.d.to_bigint(&a))),
                    Ty::Num,
                    Nulls::No,
                ))
            }
            "%" => self.arithmetic(op, &args, &arg_pointer),
            _ => Err(err(
                &p_op,
                op,
                "this operator has no SQL translation",
                Some(
                    "SQL translates var, ==, !=, ===, !==, <, <=, >, >=, !, !!, and, or, if, ?:, in, missing, missing_some, +, -, *, /, %, min, max, cat, substr, and some, all, none (over arrays of strings)",
                ),
            )),
        }
    }

    fn var(&mut self, args: &[&Value], p: &str) -> R<Ex> {
        // Inside a quantifier, `{"var": ""}` is the item walked.
        if let (Some(Value::String(path)), Some(item)) = (args.first(), self.items.last())
            && path.is_empty()
            && args.get(1).is_none_or(|d| d.is_null())
        {
            return Ok(item.clone());
        }
        let path = match args.first() {
            Some(Value::String(s)) => s.as_str(),
            _ => {
                return Err(err(
                    p,
                    "var",
                    "only a constant field path translates",
                    Some("write the path as a string: {\"var\": \"source.field\"}"),
                ));
            }
        };
        if args.get(1).is_some_and(|d| !d.is_null()) {
            return Err(err(
                p,
                "var",
                "a default for an absent field: a SQL table cannot tell an absent field from a null one",
                Some("give the dataset a default for the field instead"),
            ));
        }
        let (side, field) = match path.split_once('.') {
            Some(("source", f)) if !f.is_empty() && !f.contains('.') => (Side::Source, f),
            Some(("target", f)) if !f.is_empty() && !f.contains('.') => (Side::Target, f),
            _ => {
                return Err(err(
                    p,
                    "var",
                    format!(
                        "reads `{path}`: only a field of the source row or the target row (`source.name`, `target.name`) translates"
                    ),
                    None,
                ));
            }
        };
        let schema = match side {
            Side::Source => self.source,
            Side::Target => self.target,
        };
        let ty = match schema.kind(field) {
            Kind::Null => return Ok(Ex::Lit(Value::Null)),
            Kind::Text => Ty::Text,
            Kind::Int | Kind::Num => Ty::Num,
            Kind::Bool => Ty::Bool,
            Kind::TextArray => Ty::TextArray,
            other => {
                // The hint for what the field holds: several types, or one SQL lacks.
                let hint = match &other {
                    Kind::Mixed(_) => "give the field one type in every row",
                    Kind::Other("objects") => {
                        "put the value a rule reads in a field of its own (a string, number or boolean)"
                    }
                    _ => "arrays translate when every item is a string",
                };
                return Err(err(
                    p,
                    "var",
                    format!(
                        "field `{path}` holds {}: no one SQL type keeps its meaning",
                        other.describe()
                    ),
                    Some(hint),
                ));
            }
        };
        let i = usize::from(side == Side::Target);
        if !self.used[i].iter().any(|f| f == field) {
            self.used[i].push(field.to_owned());
        }
        let alias = if side == Side::Source { "s" } else { "t" };
        Ok(Ex::sql(
            format!("{alias}.{}", self.d.ident(field)),
            ty,
            Nulls::JsNull,
        ))
    }

    /// The truth of a value (JavaScript's): a SQL boolean, never null.
    fn truth(&self, x: &Ex) -> String {
        let d = self.d;
        match x {
            Ex::Lit(v) => d.bool(js_truthy(v)).into(),
            Ex::NaN => "FALSE".into(),
            Ex::Cond(s) => s.clone(),
            Ex::Choice { when, then, other } => {
                case_when(when, &self.truth(then), &self.truth(other))
            }
            Ex::Sql { sql, ty, nulls } => {
                let nullable = *nulls != Nulls::No;
                match ty {
                    Ty::Bool if !nullable => sql.clone(),
                    Ty::Bool => format!("COALESCE({sql}, FALSE)"),
                    Ty::Num if !nullable => format!("({sql} <> 0)"),
                    Ty::Num => format!("COALESCE({sql} <> 0, FALSE)"),
                    Ty::Text => format!("COALESCE({sql} <> '', FALSE)"),
                    Ty::TextArray if !nullable => format!("({})", d.array_nonempty(sql)),
                    Ty::TextArray => {
                        format!("({sql} IS NOT NULL AND {})", d.array_nonempty(sql))
                    }
                }
            }
        }
    }

    fn not(&self, x: &Ex) -> Ex {
        match x {
            Ex::Lit(Value::Bool(b)) => Ex::constant(!b),
            other => Ex::boolean(format!("NOT ({})", self.truth(other))),
        }
    }

    fn and_bool(&self, a: &Ex, b: &Ex) -> Ex {
        match (a, b) {
            (Ex::Lit(Value::Bool(false)), _) | (_, Ex::Lit(Value::Bool(false))) => {
                Ex::constant(false)
            }
            (Ex::Lit(Value::Bool(true)), x) | (x, Ex::Lit(Value::Bool(true))) => x.clone(),
            _ => Ex::boolean(format!("({} AND {})", self.truth(a), self.truth(b))),
        }
    }

    /// A boolean operator over two operands, with their nulls taken apart: `f` sees only
    /// constants and non-null SQL.
    fn binary(
        &mut self,
        a: &Ex,
        b: &Ex,
        p: &str,
        op: &str,
        f: &mut dyn FnMut(&mut Self, &Ex, &Ex, &str) -> R<Ex>,
    ) -> R<Ex> {
        if let (Ex::Lit(x), Ex::Lit(y)) = (a, b) {
            // Constants fold by the operator that is computed: `>` is `<` with its
            // operands swapped, and a negation comes after.
            let computed = match op {
                ">" => "<",
                ">=" => "<=",
                "!=" => "==",
                "!==" => "===",
                other => other,
            };
            return fold(computed, &[x.clone(), y.clone()], p);
        }
        if let Some((sql, null_case, rest)) = split(a) {
            let when_null = self.binary(&null_case, b, p, op, f)?;
            let otherwise = self.binary(&rest, b, p, op, f)?;
            return Ok(self.when_null(&sql, &when_null, &otherwise));
        }
        if let Some((sql, null_case, rest)) = split(b) {
            let when_null = self.binary(a, &null_case, p, op, f)?;
            let otherwise = self.binary(a, &rest, p, op, f)?;
            return Ok(self.when_null(&sql, &when_null, &otherwise));
        }
        // A choice of values: the operator over each, picked by the condition.
        if let Ex::Choice { when, then, other } = a {
            let x = self.binary(then, b, p, op, f)?;
            let y = self.binary(other, b, p, op, f)?;
            return Ok(Ex::boolean(case_when(
                when,
                &self.truth(&x),
                &self.truth(&y),
            )));
        }
        if let Ex::Choice { when, then, other } = b {
            let x = self.binary(a, then, p, op, f)?;
            let y = self.binary(a, other, p, op, f)?;
            return Ok(Ex::boolean(case_when(
                when,
                &self.truth(&x),
                &self.truth(&y),
            )));
        }
        if matches!(a, Ex::Cond(_)) || matches!(b, Ex::Cond(_)) {
            return Err(err(
                p,
                op,
                "uses the value of missing over more than three keys, or of and/or over more than four operands of several types; only their truth translates",
                Some("compare each operand, then combine the comparisons with and/or"),
            ));
        }
        f(self, a, b, p)
    }

    /// `CASE WHEN sql IS NULL THEN when_null ELSE otherwise END` over booleans, simplified.
    fn when_null(&self, sql: &str, when_null: &Ex, otherwise: &Ex) -> Ex {
        let (n, o) = (self.truth(when_null), self.truth(otherwise));
        Ex::boolean(match (n.as_str(), o.as_str()) {
            (x, y) if x == y => x.to_owned(),
            ("TRUE", "FALSE") => format!("({sql} IS NULL)"),
            ("FALSE", "TRUE") => format!("({sql} IS NOT NULL)"),
            ("FALSE", y) => format!("({sql} IS NOT NULL AND {y})"),
            ("TRUE", y) => format!("({sql} IS NULL OR {y})"),
            (x, "FALSE") => format!("({sql} IS NULL AND {x})"),
            (x, "TRUE") => format!("({sql} IS NOT NULL OR {x})"),
            (x, y) => format!("CASE WHEN {sql} IS NULL THEN {x} ELSE {y} END"),
        })
    }

    /// JavaScript's `==` of two operands that are not null SQL.
    fn loose_eq(&mut self, a: &Ex, b: &Ex, p: &str, op: &str) -> R<Ex> {
        use Ex::{Lit, NaN, Sql};
        Ok(match (a, b) {
            (Lit(x), Lit(y)) => fold("==", &[x.clone(), y.clone()], p)?,
            (NaN, _) | (_, NaN) => Ex::constant(false),
            (Lit(Value::Null), _) | (_, Lit(Value::Null)) => Ex::constant(false),
            (Lit(v @ (Value::Array(_) | Value::Object(_))), other)
            | (other, Lit(v @ (Value::Array(_) | Value::Object(_)))) => {
                if let Sql {
                    sql,
                    ty: Ty::TextArray,
                    ..
                } = other
                {
                    // Two arrays are equal item by item (the engine's `==`).
                    return match v {
                        Value::Array(items) if items.iter().all(Value::is_string) => {
                            Ok(Ex::boolean(format!(
                                "({})",
                                self.d.array_eq(sql, &text_array(self.d, items))
                            )))
                        }
                        _ => Err(self.array_compare(p, op)),
                    };
                }
                self.loose_eq(&Lit(Value::String(js_string(v))), other, p, op)?
            }
            (
                Sql {
                    sql: x,
                    ty: Ty::TextArray,
                    ..
                },
                Sql {
                    sql: y,
                    ty: Ty::TextArray,
                    ..
                },
            ) => Ex::boolean(format!("({})", self.d.array_eq(x, y))),
            // An array and anything else: its text, as JavaScript compares it.
            (
                Sql {
                    sql,
                    ty: Ty::TextArray,
                    nulls,
                },
                other,
            )
            | (
                other,
                Sql {
                    sql,
                    ty: Ty::TextArray,
                    nulls,
                },
            ) => {
                let text = self.joined(sql, *nulls);
                self.loose_eq(&text, other, p, op)?
            }
            (
                Sql { sql: x, ty: tx, .. },
                Sql {
                    sql: y, ty: ty_, ..
                },
            ) => match (tx, ty_) {
                (a, b) if a == b => Ex::boolean(format!("({x} = {y})")),
                (Ty::Bool, Ty::Num) => Ex::boolean(format!("({} = {y})", self.bool_number(x))),
                (Ty::Num, Ty::Bool) => Ex::boolean(format!("({x} = {})", self.bool_number(y))),
                // A string and a number or boolean: the string's Number().
                (Ty::Text, kind) | (kind, Ty::Text) if *kind != Ty::TextArray => {
                    let (text, other) = if *tx == Ty::Text { (x, y) } else { (y, x) };
                    let (n, _) = self.text_number(text, false, false, p, op)?;
                    let other = if *kind == Ty::Bool {
                        self.bool_number(other)
                    } else {
                        other.clone()
                    };
                    Ex::boolean(format!("COALESCE({n} = {other}, FALSE)"))
                }
                _ => return Err(self.text_to_number(p, op)),
            },
            (Lit(v), Sql { sql, ty, .. }) | (Sql { sql, ty, .. }, Lit(v)) => match (ty, v) {
                (Ty::Text, Value::String(s)) => {
                    Ex::boolean(format!("({sql} = {})", self.d.string(s)))
                }
                (Ty::Text, v) => {
                    // A string and a constant that is no string: the string's Number().
                    let c = js_number(v);
                    if c.is_nan() {
                        Ex::constant(false)
                    } else {
                        let (n, _) = self.text_number(sql, false, false, p, op)?;
                        Ex::boolean(format!("COALESCE({n} = {}, FALSE)", self.d.double(c)))
                    }
                }
                (Ty::Num, v) => {
                    let n = js_number(v);
                    if n.is_nan() {
                        Ex::constant(false)
                    } else {
                        Ex::boolean(format!("({sql} = {})", self.d.double(n)))
                    }
                }
                (Ty::Bool, Value::Bool(b)) => Ex::boolean(if *b {
                    sql.clone()
                } else {
                    format!("NOT ({sql})")
                }),
                (Ty::Bool, v) => {
                    let n = js_number(v);
                    if n == 1.0 {
                        Ex::boolean(sql.clone())
                    } else if n == 0.0 {
                        Ex::boolean(format!("NOT ({sql})"))
                    } else {
                        Ex::constant(false)
                    }
                }
                (Ty::TextArray, _) => unreachable!("an array's text"),
            },
            (Ex::Cond(_) | Ex::Choice { .. }, _) | (_, Ex::Cond(_) | Ex::Choice { .. }) => {
                unreachable!("refused or taken apart by binary")
            }
        })
    }

    /// JavaScript's `===` of two operands that are not null SQL.
    fn strict_eq(&mut self, a: &Ex, b: &Ex, p: &str) -> R<Ex> {
        use Ex::{Lit, NaN, Sql};
        Ok(match (a, b) {
            (Lit(x), Lit(y)) => fold("===", &[x.clone(), y.clone()], p)?,
            (NaN, _) | (_, NaN) => Ex::constant(false),
            (
                Sql { sql: x, ty: tx, .. },
                Sql {
                    sql: y, ty: ty_, ..
                },
            ) => {
                if tx == ty_ && *tx != Ty::TextArray {
                    Ex::boolean(format!("({x} = {y})"))
                } else {
                    Ex::constant(false)
                }
            }
            (Lit(v), Sql { sql, ty, .. }) | (Sql { sql, ty, .. }, Lit(v)) => match (ty, v) {
                (Ty::Text, Value::String(s)) => {
                    Ex::boolean(format!("({sql} = {})", self.d.string(s)))
                }
                (Ty::Num, Value::Number(n)) => Ex::boolean(format!(
                    "({sql} = {})",
                    self.d.double(n.as_f64().unwrap_or(f64::NAN))
                )),
                (Ty::Bool, Value::Bool(b)) => Ex::boolean(if *b {
                    sql.clone()
                } else {
                    format!("NOT ({sql})")
                }),
                _ => Ex::constant(false),
            },
            (Ex::Cond(_) | Ex::Choice { .. }, _) | (_, Ex::Cond(_) | Ex::Choice { .. }) => {
                unreachable!("refused or taken apart by binary")
            }
        })
    }

    /// JavaScript's `a < b` (`a <= b` with `or_equal`) of operands that are not null SQL.
    fn less(&mut self, a: &Ex, b: &Ex, or_equal: bool, p: &str, shown: &str) -> R<Ex> {
        let op = if or_equal { "<=" } else { "<" };
        let d = self.d;
        // An array compares as its text.
        let (a, b) = (&self.primitive(a), &self.primitive(b));
        if let (Ex::Lit(x), Ex::Lit(y)) = (a, b) {
            return fold(op, &[x.clone(), y.clone()], p);
        }
        if matches!(a, Ex::NaN) || matches!(b, Ex::NaN) {
            return Ok(Ex::constant(false));
        }
        // JavaScript compares two strings as strings (arrays and objects become strings).
        let stringish = |x: &Ex| -> Option<Result<String, String>> {
            match x {
                Ex::Sql {
                    sql, ty: Ty::Text, ..
                } => Some(Err(sql.clone())),
                Ex::Lit(Value::String(s)) => Some(Ok(s.clone())),
                Ex::Lit(v @ (Value::Array(_) | Value::Object(_))) => Some(Ok(js_string(v))),
                _ => None,
            }
        };
        if let (Some(x), Some(y)) = (stringish(a), stringish(b)) {
            let (x, y) = match (x, y) {
                (Err(_), Err(_)) => {
                    return Err(err(
                        p,
                        shown,
                        "orders two string fields: JavaScript orders strings by UTF-16 code units, SQL by code points, and they differ past U+E000",
                        Some("compare a string field with a constant string"),
                    ));
                }
                (Ok(lit), Err(sql)) | (Err(sql), Ok(lit))
                    if lit.chars().any(|c| c >= '\u{e000}') =>
                {
                    let _ = sql;
                    return Err(err(
                        p,
                        shown,
                        "the constant string has characters at or past U+E000, where UTF-16 order (JavaScript's) and code point order (SQL's) differ",
                        None,
                    ));
                }
                (x, y) => (x, y),
            };
            let side = |s: Result<String, String>| match s {
                Ok(lit) => d.string(&lit),
                Err(sql) => d.binary_order(&sql),
            };
            return Ok(Ex::boolean(format!("({} {op} {})", side(x), side(y))));
        }
        let (x, y) = (self.number(a, p, shown)?, self.number(b, p, shown)?);
        Ok(match (x, y) {
            (None, _) | (_, None) => Ex::constant(false),
            (Some((x, nx)), Some((y, ny))) => {
                let cmp = format!("{x} {op} {y}");
                if nx || ny {
                    Ex::boolean(format!("COALESCE({cmp}, FALSE)"))
                } else {
                    Ex::boolean(format!("({cmp})"))
                }
            }
        })
    }

    /// An array field's text (JavaScript's ToPrimitive), anything else as it is.
    fn primitive(&mut self, x: &Ex) -> Ex {
        match x {
            Ex::Sql {
                sql,
                ty: Ty::TextArray,
                nulls,
            } => self.joined(sql, *nulls),
            other => other.clone(),
        }
    }

    /// JavaScript's `in`: `a` in the string or array `b` (neither null SQL).
    fn contains(&mut self, a: &Ex, b: &Ex, p: &str) -> R<Ex> {
        let d = self.d;
        // A needle that is an array is looked for as its text in a string; an array
        // holds no array.
        // A number in a string: its text, where the dialect spells it as JavaScript does.
        let number_text = match a {
            Ex::Sql {
                sql,
                ty: Ty::Num,
                nulls: Nulls::No,
            } => d.number_text(sql),
            _ => None,
        };
        let a = &match b {
            Ex::Lit(Value::String(_)) | Ex::Sql { ty: Ty::Text, .. } => match a {
                _ if number_text.is_some() => {
                    Ex::sql(number_text.expect("a number's text"), Ty::Text, Nulls::No)
                }
                Ex::Sql {
                    sql,
                    ty: Ty::Bool,
                    nulls: Nulls::No,
                } if matches!(b, Ex::Sql { .. }) => Ex::sql(
                    format!("CASE WHEN {sql} THEN 'true' ELSE 'false' END"),
                    Ty::Text,
                    Nulls::No,
                ),
                _ => self.primitive(a),
            },
            _ => a.clone(),
        };
        Ok(match (a, b) {
            (Ex::Lit(x), Ex::Lit(y)) => fold("in", &[x.clone(), y.clone()], p)?,
            (_, Ex::NaN) => Ex::constant(false),
            // In a string NaN is its text; in an array nothing is `===` to it.
            (Ex::NaN, b @ (Ex::Lit(Value::String(_)) | Ex::Sql { ty: Ty::Text, .. })) => {
                self.contains(&Ex::Lit(Value::String("NaN".into())), b, p)?
            }
            (Ex::NaN, _) => Ex::constant(false),
            (_, Ex::Lit(Value::String(s))) if s.is_empty() => Ex::constant(false),
            (a, Ex::Lit(Value::String(s))) => match a {
                Ex::Sql {
                    sql, ty: Ty::Text, ..
                } => Ex::boolean(format!("({})", d.contains(&d.string(s), sql))),
                Ex::Sql {
                    sql, ty: Ty::Bool, ..
                } => {
                    let (t, f) = (s.contains("true"), s.contains("false"));
                    match (t, f) {
                        (true, true) => Ex::constant(true),
                        (false, false) => Ex::constant(false),
                        (true, false) => Ex::boolean(sql.clone()),
                        (false, true) => Ex::boolean(format!("NOT ({sql})")),
                    }
                }
                _ => {
                    return Err(err(
                        p,
                        "in",
                        "looks for a number or an array field in a string: JavaScript spells the value as text, which SQL spells differently",
                        None,
                    ));
                }
            },
            (a, Ex::Lit(Value::Array(items))) => match a {
                Ex::Sql { sql, ty, .. } => {
                    let same: Vec<String> = items
                        .iter()
                        .filter_map(|i| match (ty, i) {
                            (Ty::Text, Value::String(s)) => Some(d.string(s)),
                            (Ty::Num, Value::Number(n)) => {
                                Some(d.double(n.as_f64().unwrap_or(f64::NAN)))
                            }
                            (Ty::Bool, Value::Bool(b)) => Some(d.bool(*b).to_owned()),
                            _ => None,
                        })
                        .collect();
                    if same.is_empty() {
                        Ex::constant(false)
                    } else {
                        Ex::boolean(format!("({sql} IN ({}))", same.join(", ")))
                    }
                }
                _ => unreachable!("literal pairs fold"),
            },
            (_, Ex::Lit(_)) => Ex::constant(false),
            (
                a,
                Ex::Sql {
                    sql: hay,
                    ty: Ty::Text,
                    ..
                },
            ) => {
                let needle = match a {
                    Ex::Lit(v) => d.string(&js_string(v)),
                    Ex::Sql {
                        sql, ty: Ty::Text, ..
                    } => sql.clone(),
                    _ => {
                        return Err(err(
                            p,
                            "in",
                            "looks for a number, boolean or array field in a string field: JavaScript spells the value as text, which SQL spells differently",
                            None,
                        ));
                    }
                };
                Ex::boolean(format!("({hay} <> '' AND {})", d.contains(hay, &needle)))
            }
            (
                a,
                Ex::Sql {
                    sql: array,
                    ty: Ty::TextArray,
                    ..
                },
            ) => match a {
                Ex::Lit(Value::String(s)) => {
                    Ex::boolean(format!("({})", d.array_contains(array, &d.string(s))))
                }
                Ex::Sql {
                    sql, ty: Ty::Text, ..
                } => Ex::boolean(format!("({})", d.array_contains(array, sql))),
                // An array of strings holds nothing else (`===`).
                _ => Ex::constant(false),
            },
            // A number or a boolean holds nothing.
            (_, Ex::Sql { .. }) => Ex::constant(false),
            (Ex::Cond(_) | Ex::Choice { .. }, _) | (_, Ex::Cond(_) | Ex::Choice { .. }) => {
                unreachable!("refused or taken apart by binary")
            }
        })
    }

    /// JavaScript's `Number(x)` of an operand that is not null SQL: the SQL and whether
    /// it may be null (NaN); `None` for the constant NaN.
    fn number(&mut self, x: &Ex, p: &str, op: &str) -> R<Option<(String, bool)>> {
        self.numeric(x, false, p, op)
    }

    /// JavaScript's `parseFloat(x)`, as `+` and `*` read their operands (null and
    /// booleans are NaN); as [`Compiler::number`] otherwise.
    fn float_of(&mut self, x: &Ex, p: &str, op: &str) -> R<Option<(String, bool)>> {
        self.numeric(x, true, p, op)
    }

    /// `Number(x)`, or `parseFloat(x)` with `parse_float`.
    fn numeric(
        &mut self,
        x: &Ex,
        parse_float: bool,
        p: &str,
        op: &str,
    ) -> R<Option<(String, bool)>> {
        Ok(match x {
            Ex::Lit(v) => {
                let n = if parse_float {
                    js_parse_float(v)
                } else {
                    js_number(v)
                };
                (!n.is_nan()).then(|| (self.d.double(n), false))
            }
            Ex::NaN => None,
            // parseFloat(null) is NaN (NULL), Number(null) 0.
            Ex::Sql {
                sql,
                ty: Ty::Num,
                nulls,
            } => Some(match nulls {
                Nulls::JsNull if !parse_float => {
                    (format!("COALESCE({sql}, {})", self.d.double(0.0)), false)
                }
                Nulls::No => (sql.clone(), false),
                Nulls::JsNull | Nulls::NaN => (sql.clone(), true),
            }),
            Ex::Sql { ty: Ty::Bool, .. } if parse_float => None,
            Ex::Sql {
                sql, ty: Ty::Bool, ..
            } => Some((self.bool_number(sql), false)),
            Ex::Sql {
                sql,
                ty: Ty::Text,
                nulls,
            } => Some(self.text_number(sql, *nulls != Nulls::No, parse_float, p, op)?),
            Ex::Sql {
                sql,
                ty: Ty::TextArray,
                nulls,
            } => {
                let text = self.joined(sql, *nulls);
                self.numeric(&text, parse_float, p, op)?
            }
            Ex::Choice { when, then, other } => {
                let x = self.numeric(then, parse_float, p, op)?;
                let y = self.numeric(other, parse_float, p, op)?;
                either(when, x, y)
            }
            Ex::Cond(_) => {
                return Err(err(
                    p,
                    op,
                    "uses the value of missing as a number; only its truth translates",
                    None,
                ));
            }
        })
    }

    fn bool_number(&self, sql: &str) -> String {
        format!(
            "CASE WHEN {sql} THEN {} ELSE {} END",
            self.d.double(1.0),
            self.d.double(0.0)
        )
    }

    /// An array's text (JavaScript's `String()` of it: its items joined by commas), as a
    /// string of the same nulls.
    fn joined(&mut self, sql: &str, nulls: Nulls) -> Ex {
        let text = self.d.array_join(sql);
        if let Some((side, field)) = self.field_of(sql)
            && !self.joined.iter().any(|(j, _, _)| *j == text)
        {
            self.joined.push((text.clone(), side, field));
        }
        Ex::sql(text, Ty::Text, nulls)
    }

    /// The field a SQL expression reads, when it is one (`t."version"`).
    fn field_of(&self, sql: &str) -> Option<(Side, String)> {
        for (side, alias) in [(Side::Source, "s"), (Side::Target, "t")] {
            for field in &self.used[usize::from(side == Side::Target)] {
                if sql == format!("{alias}.{}", self.d.ident(field)) {
                    return Some((side, field.clone()));
                }
            }
        }
        None
    }

    /// A string field made a number — JavaScript's `Number()`, or `parseFloat()` with
    /// `parse_float` — as (SQL, may be NULL for NaN): a plain decimal as the dialect
    /// reads one ([`Dialect::plain_number`]), `""` and null as `Number()` or
    /// `parseFloat()` say, anything else NaN. It translates where that is what
    /// JavaScript makes of every string the page's rows hold in the field (defaults and
    /// patches too); else it is refused, naming one. A negative zero (`"-0"`) is
    /// refused too: a division by it is `-Infinity` where the query's is by the
    /// dividend's sign.
    fn text_number(
        &self,
        sql: &str,
        nullable: bool,
        parse_float: bool,
        p: &str,
        op: &str,
    ) -> R<(String, bool)> {
        let d = self.d;
        let joined = self
            .joined
            .iter()
            .find(|(j, _, _)| j == sql)
            .map(|(_, side, field)| (*side, field.clone()));
        let is_array = joined.is_some();
        let Some((side, field)) = joined.or_else(|| self.field_of(sql)) else {
            return Err(self.text_to_number(p, op));
        };
        // What the SQL makes of a string, computed here as the dialect reads it.
        let emulated = |s: &str| -> f64 {
            if d.reads_decimal(s) {
                s.parse::<f64>().unwrap_or(f64::NAN)
            } else if s.is_empty() && !parse_float {
                0.0
            } else {
                f64::NAN
            }
        };
        let js = |s: &str| {
            let v = Value::String(s.to_owned());
            if parse_float {
                js_parse_float(&v)
            } else {
                js_number(&v)
            }
        };
        let ds = self.page.dataset(side);
        let strings = ds
            .rows
            .iter()
            .filter_map(|r| ds.effective_row(r).get(&field).cloned())
            .chain(ds.defaults.get(&field).cloned())
            .chain(
                ds.patches
                    .iter()
                    .filter_map(|pa| pa.set.get(&field).cloned()),
            );
        for v in strings {
            let s = match v {
                Value::String(s) => s,
                // An array reads as its items joined by commas.
                v @ Value::Array(_) if is_array => js_string(&v),
                _ => continue,
            };
            let (want, got) = (js(&s), emulated(&s));
            // A cast that underflows to 0 fails in PostgreSQL: only a true zero is 0.
            let underflow = got == 0.0
                && s.bytes()
                    .take_while(|c| !matches!(c, b'e' | b'E'))
                    .any(|c| (b'1'..=b'9').contains(&c));
            let negative_zero = want == 0.0 && want.is_sign_negative();
            let same = !underflow
                && !negative_zero
                && ((want.is_nan() && got.is_nan()) || (want == got && got.is_finite()));
            if !same {
                return Err(err(
                    p,
                    op,
                    format!(
                        "makes a number of {} field `{}.{field}`, which holds {}: JavaScript's {} makes it {want}, and {} cannot say so",
                        if is_array { "array" } else { "string" },
                        side.name(),
                        serde_json::to_string(&s).unwrap_or_default(),
                        if parse_float {
                            "parseFloat()"
                        } else {
                            "Number()"
                        },
                        match d {
                            Dialect::Sqlite =>
                                "SQLite's reading of decimals (15 digits at most, exponents within ±22)",
                            _ => "SQL's cast of plain decimals",
                        }
                    ),
                    Some(match d {
                        Dialect::Sqlite => {
                            "store the field as numbers, or its text as plain decimals of 15 digits at most"
                        }
                        _ => "store the field as numbers, or its text as plain decimals",
                    }),
                ));
            }
        }
        let (null, empty) = if parse_float {
            ("NULL".to_owned(), "NULL".to_owned())
        } else {
            (d.double(0.0), d.double(0.0))
        };
        let null_case = if nullable {
            format!("WHEN {sql} IS NULL THEN {null} ")
        } else {
            String::new()
        };
        Ok((
            format!(
                "(CASE {null_case}WHEN {sql} = '' THEN {empty} ELSE {} END)",
                d.plain_number(sql)
            ),
            true,
        ))
    }

    fn text_to_number(&self, p: &str, op: &str) -> SqlError {
        err(
            p,
            op,
            "makes a number of a string field: JavaScript's Number() accepts forms (hex, Infinity, white space) that SQL's casts treat differently",
            Some("store the field as numbers, or compare it with a constant string"),
        )
    }

    fn array_compare(&self, p: &str, op: &str) -> SqlError {
        err(
            p,
            op,
            "compares an array field with an array of other items than strings, or an object",
            Some("compare with an array of strings, or test membership with in"),
        )
    }

    fn if_(&mut self, args: &[&Value], arg_pointer: &dyn Fn(usize) -> String) -> R<Ex> {
        let mut conds = Vec::new();
        let mut values = Vec::new();
        let mut i = 0;
        while i + 1 < args.len() {
            let c = self.ex(args[i], &arg_pointer(i))?;
            conds.push(self.truth(&c));
            values.push(self.ex(args[i + 1], &arg_pointer(i + 1))?);
            i += 2;
        }
        let otherwise = if i < args.len() {
            self.ex(args[i], &arg_pointer(i))?
        } else {
            Ex::Lit(Value::Null)
        };
        if conds.is_empty() {
            return Ok(otherwise);
        }
        values.push(otherwise);
        Ok(self.choose(&conds, &values))
    }

    /// `CASE WHEN conds[i] THEN values[i] … ELSE values[last] END`: typed where every
    /// value has one type (and one meaning of NULL), else only its truth.
    fn choose(&self, conds: &[String], values: &[Ex]) -> Ex {
        // One type for every branch keeps the value; else only the truth translates.
        let mut ty: Option<Ty> = None;
        let mut nulls = Nulls::No;
        let mut typed = true;
        for v in values {
            let (t, n) = match v {
                Ex::Lit(Value::Null) => (None, Nulls::JsNull),
                Ex::Lit(Value::Bool(_)) => (Some(Ty::Bool), Nulls::No),
                Ex::Lit(Value::Number(_)) => (Some(Ty::Num), Nulls::No),
                Ex::Lit(Value::String(_)) => (Some(Ty::Text), Nulls::No),
                Ex::NaN => (Some(Ty::Num), Nulls::NaN),
                Ex::Sql { ty, nulls, .. } if *ty != Ty::TextArray => (Some(*ty), *nulls),
                _ => {
                    typed = false;
                    break;
                }
            };
            if let Some(t) = t {
                if ty.is_some_and(|x| x != t) {
                    typed = false;
                    break;
                }
                ty = Some(t);
            }
            nulls = match (nulls, n) {
                (Nulls::No, n) | (n, Nulls::No) => n,
                (a, b) if a == b => a,
                _ => {
                    typed = false;
                    break;
                }
            };
        }
        let mut sql = String::from("CASE");
        match (typed, ty) {
            (true, Some(ty)) => {
                for (c, v) in conds.iter().zip(values) {
                    sql.push_str(&format!(" WHEN {c} THEN {}", self.value_sql(v, ty)));
                }
                sql.push_str(&format!(
                    " ELSE {} END",
                    self.value_sql(values.last().expect("else"), ty)
                ));
                Ex::sql(sql, ty, nulls)
            }
            _ if !values.iter().any(|v| matches!(v, Ex::Cond(_))) => {
                // Values of several types: a choice, which operators take apart.
                let mut acc = values.last().expect("else").clone();
                for (c, v) in conds.iter().zip(values).rev() {
                    acc = Ex::Choice {
                        when: c.clone(),
                        then: Box::new(v.clone()),
                        other: Box::new(acc),
                    };
                }
                acc
            }
            _ => {
                for (c, v) in conds.iter().zip(values) {
                    sql.push_str(&format!(" WHEN {c} THEN {}", self.truth(v)));
                }
                sql.push_str(&format!(
                    " ELSE {} END",
                    self.truth(values.last().expect("else"))
                ));
                Ex::Cond(sql)
            }
        }
    }

    /// A typed value's SQL (constants of the branch's type, or null).
    fn value_sql(&self, v: &Ex, ty: Ty) -> String {
        match v {
            // A NULL of the branch's type (a CASE of NULLs alone has none).
            Ex::Lit(Value::Null) | Ex::NaN => match ty {
                Ty::Num => self.d.to_double("NULL"),
                Ty::Bool => self.d.null_bool().into(),
                Ty::Text | Ty::TextArray => self.d.text_null(),
            },
            Ex::Lit(Value::Bool(b)) => self.d.bool(*b).into(),
            Ex::Lit(Value::Number(n)) => self.d.double(n.as_f64().unwrap_or(f64::NAN)),
            Ex::Lit(Value::String(s)) => self.d.string(s),
            Ex::Sql { sql, .. } => sql.clone(),
            _ => unreachable!("only typed values"),
        }
    }

    /// `missing` (and `missing_some` with `need`): truthy when some key is absent, null or
    /// `""`; only the truth translates.
    fn missing(&mut self, args: &[&Value], p: &str, need: Option<f64>) -> R<Ex> {
        let op = if need.is_some() {
            "missing_some"
        } else {
            "missing"
        };
        let mut keys: Vec<Value> = Vec::new();
        let lits: Vec<Value> = args
            .iter()
            .map(|a| {
                if constant(a) {
                    match engine::evaluate_constant(a) {
                        Ok(Ok(v)) => Ok(v),
                        _ => Err(()),
                    }
                } else {
                    Err(())
                }
            })
            .collect::<Result<_, _>>()
            .map_err(|_| err(p, op, "only constant keys translate", None))?;
        match lits.as_slice() {
            [Value::Array(items), ..] => keys.extend(items.iter().cloned()),
            _ if need.is_some() => {}
            other => keys.extend(other.iter().cloned()),
        }
        let mut conds = Vec::new();
        for k in &keys {
            let path = match k {
                // null and "" name the data itself, which is never missing.
                Value::Null => {
                    conds.push("FALSE".into());
                    continue;
                }
                Value::String(s) if s.is_empty() => {
                    conds.push("FALSE".into());
                    continue;
                }
                Value::String(s) => s.clone(),
                other => js_string(other),
            };
            conds.push(self.is_missing(&path, p, op)?);
        }
        let count = |conds: &[String]| -> String {
            if conds.is_empty() {
                "0".into()
            } else {
                conds
                    .iter()
                    .map(|c| format!("CASE WHEN {c} THEN 1 ELSE 0 END"))
                    .collect::<Vec<_>>()
                    .join(" + ")
            }
        };
        // A few keys: the value itself, a choice among the lists of missing keys.
        if conds.len() <= 3 {
            let need = need.map(|n| if n.is_nan() { f64::INFINITY } else { n });
            return Ok(missing_value(&keys, &conds, need, &mut Vec::new()));
        }
        Ok(match need {
            None if conds.is_empty() => Ex::constant(false),
            None => Ex::Cond(format!("({})", conds.join(" OR "))),
            Some(need) => {
                // Truthy when fewer than `need` are present and some is missing.
                let n = conds.len();
                if conds.is_empty() || need <= 0.0 {
                    Ex::constant(false)
                } else if need.is_nan() {
                    // `present >= NaN` is false: the missing keys are the result.
                    Ex::Cond(format!("({}) > 0", count(&conds)))
                } else {
                    let m = count(&conds);
                    Ex::Cond(format!(
                        "({n} - ({m}) < {} AND ({m}) > 0)",
                        self.d.double(need)
                    ))
                }
            }
        })
    }

    fn is_missing(&mut self, path: &str, p: &str, op: &str) -> R<String> {
        match path.split_once('.') {
            None if path == "source" || path == "target" => Ok("FALSE".into()),
            None => Ok("TRUE".into()),
            Some(("source" | "target", f)) if !f.is_empty() && !f.contains('.') => {
                let x = self.var(&[&Value::String(path.to_owned())], p)?;
                Ok(match x {
                    Ex::Lit(_) => "TRUE".into(),
                    Ex::Sql {
                        sql, ty: Ty::Text, ..
                    } => format!("({sql} IS NULL OR {sql} = '')"),
                    Ex::Sql { sql, .. } => format!("({sql} IS NULL)"),
                    _ => unreachable!("a field"),
                })
            }
            Some(("source" | "target", _)) => Err(err(
                p,
                op,
                format!("asks for `{path}`: only a field of the source or target row translates"),
                None,
            )),
            Some(_) => Ok("TRUE".into()),
        }
    }

    fn arithmetic(
        &mut self,
        op: &str,
        args: &[&Value],
        arg_pointer: &dyn Fn(usize) -> String,
    ) -> R<Ex> {
        let p = arg_pointer(0);
        let p = p.rsplit_once('/').map_or(p.clone(), |(a, _)| a.to_owned());
        let mut xs = Vec::new();
        for (i, a) in args.iter().enumerate() {
            xs.push(self.ex(a, &arg_pointer(i))?);
        }
        if xs.iter().all(|x| matches!(x, Ex::Lit(_))) {
            let lits: Vec<Value> = xs
                .iter()
                .map(|x| match x {
                    Ex::Lit(v) => v.clone(),
                    _ => unreachable!(),
                })
                .collect();
            return fold(op, &lits, &p);
        }
        let d = self.d;
        // Each operand as a number: (SQL, may be null = NaN), None for NaN.
        let mut nums: Vec<Option<(String, bool)>> = Vec::new();
        match op {
            // parseFloat: null and booleans are NaN.
            "+" | "*" => {
                if op == "*" && xs.len() == 1 {
                    return Ok(xs.remove(0));
                }
                for x in &xs {
                    nums.push(self.float_of(x, &p, op)?);
                }
            }
            _ => {
                let take = if matches!(op, "-" | "/" | "%") {
                    xs.len().min(2)
                } else {
                    xs.len()
                };
                // (A null boolean is 0, as a null number: `bool_number`.)
                for x in &xs[..take] {
                    nums.push(self.number(x, &p, op)?);
                }
            }
        }
        if nums.iter().any(Option::is_none) {
            return Ok(Ex::NaN);
        }
        let nums: Vec<(String, bool)> = nums.into_iter().map(Option::unwrap).collect();
        let nullable = nums.iter().any(|(_, n)| *n);
        let nulls = if nullable { Nulls::NaN } else { Nulls::No };
        let sql = match op {
            "+" | "*" => {
                let mut acc = nums[0].0.clone();
                for (x, _) in &nums[1..] {
                    acc = format!("({acc} {op} {x})");
                }
                acc
            }
            "-" if nums.len() == 1 => format!("(-{})", nums[0].0),
            "-" => format!("({} - {})", nums[0].0, nums[1].0),
            "/" | "%" => {
                let divisor = match xs.get(1) {
                    Some(Ex::Lit(v)) => js_number(v),
                    _ => f64::NAN,
                };
                if nums.len() < 2 {
                    // A missing divisor is `undefined`: NaN.
                    return Ok(Ex::NaN);
                }
                let (a, b) = (&nums[0].0, &nums[1].0);
                let exact = if op == "/" {
                    format!("({a} / {b})")
                } else {
                    d.fmod(a, b)
                };
                if divisor != 0.0 && divisor.is_finite() {
                    exact
                } else if op == "%" {
                    // JavaScript's remainder by 0 is NaN.
                    format!("CASE WHEN {b} = 0 THEN NULL ELSE {exact} END")
                } else {
                    // JavaScript's division by 0: ±Infinity by the dividend's sign, NaN
                    // for 0 (SQL gives NULL or fails).
                    format!(
                        "CASE WHEN {b} = 0 THEN CASE WHEN {a} > 0 THEN {} WHEN {a} < 0 THEN {} END ELSE {exact} END",
                        d.infinity(false),
                        d.infinity(true)
                    )
                }
            }
            "min" | "max" => {
                if nums.len() == 1 {
                    nums[0].0.clone()
                } else {
                    let list = nums
                        .iter()
                        .map(|(x, _)| x.as_str())
                        .collect::<Vec<_>>()
                        .join(", ");
                    let min = op == "min";
                    // SQLite's scalar min/max are null when an argument is; the others'
                    // LEAST/GREATEST skip nulls.
                    let (f, skips_nulls) = match d {
                        Dialect::Sqlite => (if min { "min" } else { "max" }, false),
                        Dialect::Duckdb | Dialect::Postgres | Dialect::Spark => {
                            (if min { "LEAST" } else { "GREATEST" }, true)
                        }
                    };
                    if nullable && skips_nulls {
                        // LEAST/GREATEST skip nulls; JavaScript's NaN wins.
                        let any_null = nums
                            .iter()
                            .filter(|(_, n)| *n)
                            .map(|(x, _)| format!("{x} IS NULL"))
                            .collect::<Vec<_>>()
                            .join(" OR ");
                        format!("CASE WHEN {any_null} THEN NULL ELSE {f}({list}) END")
                    } else {
                        format!("{f}({list})")
                    }
                }
            }
            _ => unreachable!("arithmetic operators"),
        };
        // Over an infinity (a division by 0), arithmetic can make NaN, which is NULL here.
        let (inf, minus_inf) = (d.infinity(false), d.infinity(true));
        if nums
            .iter()
            .any(|(x, _)| x.contains(&inf) || x.contains(&minus_inf))
        {
            return Ok(Ex::sql(d.nan_to_null(&sql), Ty::Num, Nulls::NaN));
        }
        // A remainder or a division by 0 may be NaN.
        if sql.contains(&inf) || op == "%" {
            return Ok(Ex::sql(sql, Ty::Num, Nulls::NaN));
        }
        Ok(Ex::sql(sql, Ty::Num, nulls))
    }

    /// Whether `logic` reads a field every row of which holds an integer (or null).
    fn integer_field(&self, logic: &Value) -> bool {
        let Some((side, field)) = field_read(logic) else {
            return false;
        };
        let schema = match side {
            Side::Source => self.source,
            Side::Target => self.target,
        };
        schema.kind(field) == Kind::Int
    }

    /// Whether `logic` reads an integer field whose every value on the page is below 2^53
    /// (where a 64-bit integer's digits are JavaScript's text of the double; past it
    /// JavaScript writes the shortest digits padded with zeros).
    fn small_integer_field(&self, logic: &Value) -> bool {
        if !self.integer_field(logic) {
            return false;
        }
        let Some((side, field)) = field_read(logic) else {
            return false;
        };
        let ds = self.page.dataset(side);
        let small = |v: &Value| v.as_f64().is_none_or(|f| f.abs() < 9007199254740992.0);
        ds.rows
            .iter()
            .all(|r| ds.effective_row(r).get(field).is_none_or(small))
            && ds.defaults.get(field).is_none_or(small)
            && ds
                .patches
                .iter()
                .all(|pa| pa.set.get(field).is_none_or(small))
    }

    /// `%` of an integer field or constant by an integer constant other than 0.
    fn remainder_of_integers(&self, args: &[&Value]) -> bool {
        let [a, b] = args else { return false };
        let dividend = a.as_i64().is_some() || self.integer_field(a);
        dividend && b.as_i64().is_some_and(|b| b != 0)
    }

    /// `some`, `all`, `none` over a field that holds arrays of strings, the condition
    /// reading the item alone (`{"var": ""}`): an absent or null array has no item.
    fn quantifier(
        &mut self,
        op: &str,
        args: &[&Value],
        arg_pointer: &dyn Fn(usize) -> String,
        p: &str,
    ) -> R<Ex> {
        let (Some(array), Some(condition)) = (args.first(), args.get(1)) else {
            return Err(err(
                p,
                op,
                "needs an array and a condition",
                Some(
                    "write it as {\"some\": [{\"var\": \"target.tags\"}, {\"==\": [{\"var\": \"\"}, \"x\"]}]}",
                ),
            ));
        };
        /// Whether a condition reads nothing but the item.
        fn item_only(v: &Value) -> bool {
            match v {
                Value::Object(m) => m.iter().all(|(k, a)| match k.as_str() {
                    "var" => {
                        matches!(a, Value::String(s) if s.is_empty())
                            || matches!(a, Value::Array(xs) if xs.len() == 1 && xs[0] == "")
                            || matches!(a, Value::Array(xs) if xs.is_empty())
                    }
                    "missing" | "missing_some" | "val" | "exists" => false,
                    _ => item_only(a),
                }),
                Value::Array(xs) => xs.iter().all(item_only),
                _ => true,
            }
        }
        if !item_only(condition) {
            return Err(err(
                &arg_pointer(1),
                op,
                "its condition reads a field: inside some, all and none the data is each item, and only the item itself ({\"var\": \"\"}) translates",
                Some("compare the item with a constant: {\"==\": [{\"var\": \"\"}, \"x\"]}"),
            ));
        }
        let walked = self.ex(array, &arg_pointer(0))?;
        let (sql, nullable) = match walked {
            Ex::Lit(v) => {
                // No array (an absent field) or a constant one: the engine decides.
                let mut m = serde_json::Map::new();
                m.insert(op.to_owned(), Value::Array(vec![v, (*condition).clone()]));
                return match engine::evaluate_constant(&Value::Object(m)) {
                    Ok(Ok(v)) => Ok(Ex::Lit(v)),
                    _ => Err(err(p, op, "the engine fails on this constant part", None)),
                };
            }
            Ex::Sql {
                sql,
                ty: Ty::TextArray,
                nulls,
            } => (sql, nulls != Nulls::No),
            _ => {
                return Err(err(
                    &arg_pointer(0),
                    op,
                    "walks something other than a field of arrays of strings",
                    None,
                ));
            }
        };
        let d = self.d;
        let alias = format!("rb_item{}", self.items.len());
        self.items
            .push(Ex::sql(d.array_item(&alias), Ty::Text, Nulls::No));
        let meets = self.ex(condition, &arg_pointer(1));
        self.items.pop();
        let meets = self.truth(&meets?);
        let (when_null, walk) = match op {
            "some" => ("FALSE", d.array_any(&sql, &alias, &meets)),
            "none" => ("TRUE", format!("NOT {}", d.array_any(&sql, &alias, &meets))),
            // JavaScript's `all` of no item is false.
            _ => (
                "FALSE",
                format!(
                    "({} AND NOT {})",
                    d.array_nonempty(&sql),
                    d.array_any(&sql, &alias, &format!("NOT ({meets})"))
                ),
            ),
        };
        Ok(Ex::boolean(if nullable {
            format!("CASE WHEN {sql} IS NULL THEN {when_null} ELSE {walk} END")
        } else {
            format!("({walk})")
        }))
    }

    /// `substr` of a value's text by a constant start (negative: from the end) and an
    /// optional constant length (negative: that many left off the end), in code points
    /// as the engine counts them.
    fn substr(&mut self, args: &[&Value], arg_pointer: &dyn Fn(usize) -> String, p: &str) -> R<Ex> {
        let mut bounds = Vec::new();
        for (i, a) in args.iter().enumerate().skip(1).take(2) {
            if !constant(a) {
                return Err(err(
                    p,
                    "substr",
                    "only a constant start and length translate",
                    None,
                ));
            }
            bounds.push(match self.ex(a, &arg_pointer(i))? {
                Ex::Lit(v) => js_number(&v),
                _ => f64::NAN,
            });
        }
        let null = Value::Null;
        let value = args.first().copied().unwrap_or(&null);
        let x = self.ex(value, &arg_pointer(0))?;
        let text = self.text_of(&x, value, "'null'", &arg_pointer(0), "substr")?;
        if let Ex::Lit(_) = x {
            // A constant: the engine computes it.
            let mut m = serde_json::Map::new();
            let mut all = vec![x_value(&x)];
            all.extend(args.iter().skip(1).map(|a| (*a).clone()));
            m.insert("substr".into(), Value::Array(all));
            return fold_logic(&Value::Object(m), p);
        }
        // JavaScript's ToIntegerOrInfinity, within what a SQL integer holds.
        let int = |f: f64| {
            let f = if f.is_nan() { 0.0 } else { f.trunc() };
            f.clamp(-1e9, 1e9) as i64
        };
        let start = int(bounds.first().copied().unwrap_or(f64::NAN));
        let len = |t: &str| format!("length({t})");
        let from = if start >= 0 {
            (start + 1).to_string()
        } else {
            format!(
                "CASE WHEN {l} + {start} > 0 THEN {l} + {} ELSE 1 END",
                start + 1,
                l = len(&text)
            )
        };
        let sql = match bounds.get(1).copied().map(int) {
            None => format!("substr({text}, {from})"),
            Some(n) if n >= 0 => format!("substr({text}, {from}, {n})"),
            Some(n) => {
                let rest = format!("substr({text}, {from})");
                format!(
                    "substr({rest}, 1, CASE WHEN {l} + {n} > 0 THEN {l} + {n} ELSE 0 END)",
                    l = len(&rest)
                )
            }
        };
        Ok(Ex::sql(sql, Ty::Text, Nulls::No))
    }

    /// A compiled value's text, as SQL text that is never null: JavaScript's
    /// `String(value)` with `null` written `null_text` (`'null'`; `cat` writes `''`).
    /// `logic` is the value's rule part: an integer field's digits translate in every
    /// dialect, other numbers where the dialect has [`Dialect::number_text`].
    fn text_of(&self, x: &Ex, logic: &Value, null_text: &str, p: &str, op: &str) -> R<String> {
        let d = self.d;
        Ok(match x {
            Ex::Lit(Value::Null) => null_text.to_owned(),
            Ex::Lit(v) => d.string(&js_string(v)),
            Ex::NaN => d.string("NaN"),
            Ex::Sql {
                sql, ty: Ty::Text, ..
            } => format!("COALESCE({sql}, {null_text})"),
            Ex::Sql {
                sql, ty: Ty::Bool, ..
            } => format!(
                "CASE WHEN {sql} IS NULL THEN {null_text} WHEN {sql} THEN 'true' ELSE 'false' END"
            ),
            Ex::Sql {
                sql,
                ty: Ty::TextArray,
                ..
            } => format!("COALESCE({}, {null_text})", d.array_join(sql)),
            Ex::Sql {
                sql, ty: Ty::Num, ..
            } if self.small_integer_field(logic) => format!(
                "COALESCE({}, {null_text})",
                d.int_to_text(&d.to_bigint(sql))
            ),
            Ex::Sql {
                sql,
                ty: Ty::Num,
                nulls,
            } => match d.number_text(sql) {
                Some(text) => {
                    let null = if *nulls == Nulls::NaN {
                        "'NaN'"
                    } else {
                        null_text
                    };
                    format!("CASE WHEN {sql} IS NULL THEN {null} ELSE {text} END")
                }
                None => return Err(self.number_text_refused(p, op)),
            },
            Ex::Choice { when, then, other } => format!(
                "CASE WHEN {when} THEN {} ELSE {} END",
                self.text_of(then, &Value::Null, null_text, p, op)?,
                self.text_of(other, &Value::Null, null_text, p, op)?
            ),
            Ex::Cond(_) => return Err(self.number_text_refused(p, op)),
        })
    }

    fn number_text_refused(&self, p: &str, op: &str) -> SqlError {
        err(
            p,
            op,
            "makes text of a number (other than an integer field's) or of the value of missing: JavaScript spells numbers differently from SQL (5 against 5.0), and only DuckDB's and PostgreSQL's text of a double has JavaScript's digits",
            None,
        )
    }
}

/// The value of `missing` (`missing_some` with `need`) over `keys`, whose conditions of
/// being missing are `conds`, given that the first of them are as `flags` say: a choice
/// among the constant lists of missing keys.
fn missing_value(keys: &[Value], conds: &[String], need: Option<f64>, flags: &mut Vec<bool>) -> Ex {
    let i = flags.len();
    if i == conds.len() {
        let missing: Vec<Value> = keys
            .iter()
            .zip(flags.iter())
            .filter(|(_, m)| **m)
            .map(|(k, _)| k.clone())
            .collect();
        let present = (keys.len() - missing.len()) as f64;
        return Ex::Lit(Value::Array(match need {
            Some(need) if present >= need => vec![],
            _ => missing,
        }));
    }
    let branch = |flag: bool, flags: &mut Vec<bool>| {
        flags.push(flag);
        let x = missing_value(keys, conds, need, flags);
        flags.pop();
        x
    };
    match conds[i].as_str() {
        "TRUE" => branch(true, flags),
        "FALSE" => branch(false, flags),
        when => {
            let then = branch(true, flags);
            let other = branch(false, flags);
            Ex::Choice {
                when: when.to_owned(),
                then: Box::new(then),
                other: Box::new(other),
            }
        }
    }
}

/// A number of a choice: `CASE WHEN when THEN x ELSE y END`, NULL (NaN) for a `None`
/// side; `None` where both are NaN.
fn either(
    when: &str,
    x: Option<(String, bool)>,
    y: Option<(String, bool)>,
) -> Option<(String, bool)> {
    if x.is_none() && y.is_none() {
        return None;
    }
    let side = |v: Option<(String, bool)>| v.unwrap_or_else(|| ("NULL".into(), true));
    let ((x, nx), (y, ny)) = (side(x), side(y));
    Some((format!("CASE WHEN {when} THEN {x} ELSE {y} END"), nx || ny))
}

/// `CASE WHEN when THEN a ELSE b END` over SQL booleans that are never null, simplified.
fn case_when(when: &str, a: &str, b: &str) -> String {
    match (a, b) {
        (x, y) if x == y => x.to_owned(),
        ("TRUE", "FALSE") => format!("({when})"),
        ("FALSE", "TRUE") => format!("NOT ({when})"),
        ("FALSE", y) => format!("(NOT ({when}) AND {y})"),
        ("TRUE", y) => format!("({when} OR {y})"),
        (x, "FALSE") => format!("({when} AND {x})"),
        (x, "TRUE") => format!("(NOT ({when}) OR {x})"),
        (x, y) => format!("CASE WHEN {when} THEN {x} ELSE {y} END"),
    }
}

/// A nullable operand taken apart: its SQL, the constant its null stands for, and the
/// operand known not to be null.
fn split(x: &Ex) -> Option<(String, Ex, Ex)> {
    match x {
        Ex::Sql { sql, ty, nulls } if *nulls != Nulls::No => Some((
            sql.clone(),
            if *nulls == Nulls::NaN {
                Ex::NaN
            } else {
                Ex::Lit(Value::Null)
            },
            Ex::sql(sql.clone(), *ty, Nulls::No),
        )),
        _ => None,
    }
}

/// The field a part of a rule reads when it is only a `var` of one
/// (`{"var": "source.n"}`).
fn field_read(logic: &Value) -> Option<(Side, &str)> {
    let Some(Value::String(path)) = logic.get("var").map(|v| match v {
        Value::Array(items) if items.len() == 1 => &items[0],
        other => other,
    }) else {
        return None;
    };
    match path.split_once('.') {
        Some(("source", f)) => Some((Side::Source, f)),
        Some(("target", f)) => Some((Side::Target, f)),
        _ => None,
    }
}

/// A constant's value.
fn x_value(x: &Ex) -> Value {
    match x {
        Ex::Lit(v) => v.clone(),
        _ => Value::Null,
    }
}

/// A part of a rule over constants, computed by the engine.
fn fold_logic(logic: &Value, p: &str) -> R<Ex> {
    match engine::evaluate_constant(logic) {
        Ok(Ok(v)) => Ok(Ex::Lit(v)),
        Ok(Err(f)) if f.is_nan() => Ok(Ex::NaN),
        Ok(Err(_)) => Err(err(p, "", "this part is infinite", None)),
        Err(e) => Err(err(p, "", format!("the engine fails on it ({e})"), None)),
    }
}

/// An operator over constants, computed by the engine.
fn fold(op: &str, args: &[Value], p: &str) -> R<Ex> {
    let mut m = serde_json::Map::new();
    m.insert(op.to_owned(), Value::Array(args.to_vec()));
    // Arguments are values, not logic: `{"preserve": …}`-free constants are the same
    // JSON either way except objects, which the engine would read as operations.
    if args.iter().any(|a| matches!(a, Value::Object(_))) {
        return Err(err(
            p,
            op,
            "an object constant has no SQL translation",
            None,
        ));
    }
    fold_logic(&Value::Object(m), p).map_err(|e| SqlError {
        operator: Some(op.to_owned()),
        ..e
    })
}

fn escape_pointer(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

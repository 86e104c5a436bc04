//! Type-aware lint: traps of JSONLogic's coercions, found from the dataset schema
//! (each field's inferred types and how many rows have it). Warnings with a location
//! and, where there is one, a suggested rewrite:
//!
//! - `null-as-zero`: a field that is null or absent in some rows, in `<` `<=` `>` `>=`:
//!   null reads as 0, so `target.maxTokens < 5` passes where the field is missing.
//! - `string-vs-number`: a field holding strings compared with a number or a field of
//!   numbers (`"abc"` is NaN, `""` is 0, `"10" < "9"` between two strings).
//! - `bool-vs-string`: a boolean field compared with a string (`true == "true"` is false).
//! - `bool-or-null-order`: `<` `<=` `>` `>=` with `true`, `false` or `null` (read as 1
//!   and 0: `95 >= false` holds).
//! - `text-order`: a number-like or version-like string ordered against a string
//!   (`"9" >= "10"` holds: strings order as text).
//! - `in-mixed`: `in` over a field that is a string in some rows and an array in others
//!   (a substring test in one, an element test in the other).
//! - `one-sided`: a rule that reads only one side: every target (or every selection)
//!   gets the same outcome from it.
//! - `constant-over-data`: a rule that reads fields but, over the page's current rows,
//!   passes for every pair (it decides nothing) or fails for every pair (no target can
//!   pass it) — found by evaluating every source ([`constant_over_data`]).

use serde_json::{Value, json};

use super::diag::{Code, Diagnostic, pointer_token};
use super::model::Side;
use super::schema::Schema;

/// A `{"var": "side.field"}` (or `[path, default]`) argument: its side, field, path and
/// whether it has a default.
fn field_of(v: &Value) -> Option<(Side, &str, &str, bool)> {
    let args = v.as_object().filter(|o| o.len() == 1)?.get("var")?;
    let (path, default) = match args {
        Value::String(p) => (p.as_str(), false),
        Value::Array(a) => (a.first()?.as_str()?, a.get(1).is_some_and(|d| !d.is_null())),
        _ => return None,
    };
    let (head, field) = path.split_once('.')?;
    let side = match head {
        "source" => Side::Source,
        "target" => Side::Target,
        _ => return None,
    };
    // The schema knows top-level fields only: a nested path (`target.limits.max`) is
    // not linted rather than judged by its first segment.
    if field.is_empty() || field.contains('.') {
        return None;
    }
    Some((side, field, path, default))
}

struct Lint<'a> {
    schema: &'a Schema,
    out: Vec<Diagnostic>,
    /// Paths known not to be null here: tested by an earlier argument of an enclosing
    /// `and` (`{"!=": [P, null]}`, `{"!!": P}`, `P`) or `or` (`{"==": [P, null]}`).
    guarded: Vec<String>,
}

/// The path an `and` argument proves non-null (`{"!=": [P, null]}`, `{"!==": …}`,
/// `{"!!": P}`, `P`), or an `or` argument proves null for the arguments after it
/// (`{"==": [P, null]}`, `{"===": …}`, `{"!": P}`).
fn guard(arg: &Value, in_and: bool) -> Option<String> {
    if in_and && let Some((_, _, p, _)) = field_of(arg) {
        return Some(p.to_owned());
    }
    let o = arg.as_object().filter(|o| o.len() == 1)?;
    let (op, args) = o.iter().next()?;
    let pair = |a: &Value| -> Option<String> {
        let a = a.as_array()?;
        match (a.first(), a.get(1)) {
            (Some(x), Some(Value::Null)) | (Some(Value::Null), Some(x)) => {
                field_of(x).map(|(_, _, p, _)| p.to_owned())
            }
            _ => None,
        }
    };
    let single = |a: &Value| -> Option<String> {
        let v = a.as_array().and_then(|a| a.first()).unwrap_or(a);
        field_of(v).map(|(_, _, p, _)| p.to_owned())
    };
    // A comparison with a number that null (read as 0) fails: `{">": [P, 0]}`.
    let null_fails = |op: &str, a: &Value| -> Option<String> {
        let a = a.as_array()?;
        match (a.first(), a.get(1), a.len()) {
            (Some(x), Some(Value::Number(n)), 2) => {
                let p = field_of(x)?.2;
                (!holds(op, 0.0, n.as_f64()?)).then(|| p.to_owned())
            }
            (Some(Value::Number(n)), Some(x), 2) => {
                let p = field_of(x)?.2;
                (!holds(op, n.as_f64()?, 0.0)).then(|| p.to_owned())
            }
            _ => None,
        }
    };
    match (in_and, op.as_str()) {
        (true, "!=" | "!==") | (false, "==" | "===") => pair(args),
        (true, "!!") | (false, "!") => single(args),
        (true, "<" | "<=" | ">" | ">=") => null_fails(op, args),
        _ => None,
    }
}

impl Lint<'_> {
    fn types(&self, side: Side, field: &str) -> Option<&super::dataset::FieldSchema> {
        self.schema.side(side).fields.get(field)
    }

    fn rows(&self, side: Side) -> usize {
        self.schema.side(side).rows
    }

    /// Rows where the field reads null (absent or null, no default).
    fn null_rows(&self, side: Side, field: &str) -> usize {
        match self.types(side, field) {
            Some(f) if f.default.is_some() => 0,
            Some(f) => self.rows(side) - f.present + f.nulls,
            None => 0,
        }
    }

    fn has_type(&self, side: Side, field: &str, ty: &str) -> usize {
        self.types(side, field)
            .and_then(|f| f.types.get(ty).copied())
            .unwrap_or(0)
    }

    fn compare(&mut self, op: &str, args: &[Value], ptr: &str, logic: &Value) {
        for (i, a) in args.iter().enumerate() {
            let Some((side, field, path, default)) = field_of(a) else {
                continue;
            };
            let others: Vec<&Value> = args
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, v)| v)
                .collect();
            // A number, or a field holding numbers (`target.price` against
            // `source.maxPrice`).
            let number_other = others.iter().any(|o| {
                o.is_number()
                    || field_of(o).is_some_and(|(s, f, _, _)| {
                        self.has_type(s, f, "integer") + self.has_type(s, f, "number") > 0
                    })
            });
            let nulls = self.null_rows(side, field);
            if !default
                && nulls > 0
                && matches!(op, "<" | "<=" | ">" | ">=")
                && !self.guarded.iter().any(|g| g == path)
            {
                // Only where reading null as 0 makes the comparison pass.
                let passes_as_zero = match (args.len(), i, others.first()) {
                    (2, 0, Some(Value::Number(n))) => {
                        holds(op, 0.0, n.as_f64().unwrap_or(f64::NAN))
                    }
                    (2, 1, Some(Value::Number(n))) => {
                        holds(op, n.as_f64().unwrap_or(f64::NAN), 0.0)
                    }
                    // Against another field, null as 0 passes only for some values
                    // of it: not reported.
                    _ => false,
                };
                if passes_as_zero {
                    let guarded = json!({"and": [{"!=": [{"var": path}, null]}, logic]});
                    self.out.push(
                        Diagnostic::warning(
                            Code::NullAsZero,
                            format!("{ptr}/{i}"),
                            format!(
                                "`{path}` is null or absent in {nulls} of {} {} rows; JSONLogic reads null as 0 in `{op}`, so those rows pass it",
                                self.rows(side),
                                side.name()
                            ),
                        )
                        .with_hint(Some(format!("to fail them, write {guarded}"))),
                    );
                }
            }
            let strings = self.has_type(side, field, "string");
            if strings > 0 && number_other {
                self.out.push(
                    Diagnostic::warning(
                        Code::StringVsNumber,
                        format!("{ptr}/{i}"),
                        format!(
                            "`{path}` holds a string in {strings} {} rows, compared here with a number: JSONLogic converts it (\"\" is 0, \"abc\" is NaN and never compares true)",
                            side.name()
                        ),
                    )
                    .with_hint(Some(
                        "store the field as numbers, or compare it with a string".into(),
                    )),
                );
            }
            let bools = self.has_type(side, field, "boolean");
            if bools > 0
                && matches!(op, "==" | "!=" | "===" | "!==")
                && let Some(s) = others.iter().find_map(|o| o.as_str())
            {
                let literal = match s.trim().to_ascii_lowercase().as_str() {
                    "true" => "true",
                    "false" => "false",
                    _ => "true or false",
                };
                self.out.push(
                    Diagnostic::warning(
                        Code::BoolVsString,
                        format!("{ptr}/{i}"),
                        format!(
                            "`{path}` is a boolean in {bools} {} rows, compared here with the string \"{s}\": `true == \"true\"` is false in JSONLogic",
                            side.name()
                        ),
                    )
                    .with_hint(Some(format!("compare with {literal}, without quotes"))),
                );
            }
        }
    }

    /// Ordering traps whatever the fields hold: `true`, `false` or `null` ordered (read
    /// as 1 and 0), and a number-like or version-like string ordered against a string
    /// (as text).
    fn order(&mut self, op: &str, args: &[Value], ptr: &str) {
        if !matches!(op, "<" | "<=" | ">" | ">=") {
            return;
        }
        for (i, a) in args.iter().enumerate() {
            if matches!(a, Value::Bool(_) | Value::Null) {
                self.out.push(
                    Diagnostic::warning(
                        Code::BoolOrNullOrder,
                        format!("{ptr}/{i}"),
                        format!(
                            "`{op}` with {a}: JSONLogic reads true as 1 and false and null as 0, so `95 {op} {a}` is {}",
                            holds(op, 95.0, if *a == Value::Bool(true) { 1.0 } else { 0.0 })
                        ),
                    )
                    .with_hint(Some(
                        "compare with == (or !=), or with the number you mean".into(),
                    )),
                );
            }
        }
        let version = |s: &str| crate::dataset::numeric_text(s);
        let stringy = |v: &Value| match v {
            Value::String(_) => true,
            other => field_of(other).is_some_and(|(s, f, _, _)| {
                self.has_type(s, f, "string") > 0
                    && self.has_type(s, f, "integer") + self.has_type(s, f, "number") == 0
            }),
        };
        if let Some((i, text)) = args
            .iter()
            .enumerate()
            .find_map(|(i, a)| a.as_str().filter(|s| version(s)).map(|s| (i, s)))
            && args.iter().enumerate().any(|(j, o)| j != i && stringy(o))
        {
            self.out.push(
                Diagnostic::warning(
                    Code::TextOrder,
                    format!("{ptr}/{i}"),
                    format!(
                        "\"{text}\" is ordered against a string here: strings order as text, so \"9\" >= \"10\" holds and \"16.10\" < \"16.9\""
                    ),
                )
                .with_hint(Some(
                    "store the field as numbers (`--type FIELD=number`), or compare numbers; a version needs a comparison of its parts".into(),
                )),
            );
            return;
        }
        // Two string fields, one holding number- or version-like strings.
        fn numeric_strings<'v>(
            lint: &Lint<'_>,
            v: &'v Value,
            stringy: &dyn Fn(&Value) -> bool,
        ) -> Option<(&'v str, usize, Side)> {
            field_of(v).and_then(|(s, f, path, _)| {
                let n = lint.types(s, f).map_or(0, |t| t.numeric_text);
                (n > 0 && stringy(v)).then_some((path, n, s))
            })
        }
        if let Some((i, (path, n, side))) = args
            .iter()
            .enumerate()
            .find_map(|(i, a)| numeric_strings(self, a, &stringy).map(|x| (i, x)))
            && args
                .iter()
                .enumerate()
                .any(|(j, o)| j != i && field_of(o).is_some() && stringy(o))
        {
            self.out.push(
                Diagnostic::warning(
                    Code::TextOrder,
                    format!("{ptr}/{i}"),
                    format!(
                        "`{path}` holds number- or version-like strings in {n} {} rows, ordered against a string field here: strings order as text, so \"9\" >= \"10\" holds and \"16.10\" < \"16.9\"",
                        side.name()
                    ),
                )
                .with_hint(Some(
                    "store both fields as numbers (`--type FIELD=number`); a version needs a comparison of its parts".into(),
                )),
            );
        }
    }

    fn walk(&mut self, node: &Value, ptr: &str, item_scope: bool) {
        match node {
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    self.walk(v, &format!("{ptr}/{i}"), item_scope);
                }
            }
            Value::Object(map) if map.len() == 1 => {
                let (op, args) = map.iter().next().expect("one entry");
                let op_ptr = format!("{ptr}/{}", pointer_token(op));
                if !item_scope && let Value::Array(a) = args {
                    match op.as_str() {
                        "<" | "<=" | ">" | ">=" | "==" | "!=" | "===" | "!==" => {
                            self.compare(op, a, &op_ptr, node);
                            self.order(op, a, &op_ptr);
                        }
                        "in" => {
                            if let Some((side, field, path, _)) = a.get(1).and_then(field_of) {
                                let (s, arr) = (
                                    self.has_type(side, field, "string"),
                                    self.has_type(side, field, "array"),
                                );
                                if s > 0 && arr > 0 {
                                    self.out.push(Diagnostic::warning(
                                            Code::InMixed,
                                            format!("{op_ptr}/1"),
                                            format!(
                                                "`{path}` is a string in {s} {side} rows and an array in {arr}: `in` tests a substring in one and an element in the other",
                                                side = side.name()
                                            ),
                                        ).with_hint(Some("store it as an array in every row".into())));
                                }
                            }
                        }
                        _ => {}
                    }
                }
                let depth = self.guarded.len();
                match args {
                    Value::Array(items) => {
                        for (i, v) in items.iter().enumerate() {
                            let scope = item_scope || super::engine::item_scoped(op, i);
                            self.walk(v, &format!("{op_ptr}/{i}"), scope);
                            // Later arguments of `and` / `or` run only after this one.
                            if matches!(op.as_str(), "and" | "or")
                                && let Some(p) = guard(v, op == "and")
                            {
                                self.guarded.push(p);
                            }
                        }
                    }
                    other => self.walk(other, &op_ptr, item_scope),
                }
                self.guarded.truncate(depth);
            }
            Value::Object(map) => {
                for (k, v) in map {
                    self.walk(v, &format!("{ptr}/{}", pointer_token(k)), item_scope);
                }
            }
            _ => {}
        }
    }
}

fn holds(op: &str, a: f64, b: f64) -> bool {
    match op {
        "<" => a < b,
        "<=" => a <= b,
        ">" => a > b,
        ">=" => a >= b,
        _ => false,
    }
}

/// The lint's warnings for one rule's logic (pointers relative to the logic). Only
/// for logic that validates; a rule that reads no field is `constant-logic`'s.
/// Rules that read fields yet have one outcome for every (source, target) pair of the
/// page's current rows: every source evaluated with `matrix` (the page's).
pub fn constant_over_data(
    page: &super::model::Page,
    matrix: &mut super::matrix::Matrix,
) -> Vec<Diagnostic> {
    let (ns, nt) = (page.source.rows.len(), page.target.rows.len());
    if ns == 0 || nt == 0 {
        return Vec::new();
    }
    // Per rule: seen a pass, seen a fail (an error counts as a fail).
    let mut seen = vec![(false, false); page.rules.len()];
    for s in 0..ns {
        let eval = matrix.evaluate(s);
        for (r, col) in eval.columns.iter().enumerate() {
            let (pass, fail) = &mut seen[r];
            *pass |= col.passes > 0;
            // A target the rule does not apply to neither passes nor fails.
            *fail |= col.passes + col.not_applicable < nt;
        }
        if seen.iter().all(|&(p, f)| p && f) {
            break;
        }
    }
    let reads = |logic: &Value| {
        let r = super::engine::Reads::of(logic);
        let any =
            |s: &Option<Vec<super::engine::FieldPath>>| s.as_ref().is_none_or(|p| !p.is_empty());
        any(&r.source) || any(&r.target)
    };
    let pairs = format!("{ns} sources × {nt} targets");
    let constant: Vec<usize> = (0..page.rules.len())
        .filter(|&r| seen[r].0 != seen[r].1 && reads(&page.rules[r].logic))
        .collect();
    let mut out = Vec::new();
    for passes in [true, false] {
        let hint = if passes {
            "check its thresholds and the fields it reads; it may only matter for rows not here yet"
        } else {
            "check the values it compares with (a typo, a unit, a string against a number?)"
        };
        let these: Vec<usize> = constant
            .iter()
            .copied()
            .filter(|&r| seen[r].0 == passes)
            .collect();
        // A family's members are said once, together, at the family.
        let mut said: Vec<&str> = Vec::new();
        for &r in &these {
            let rule = &page.rules[r];
            match &rule.family {
                None => {
                    let message = if passes {
                        format!(
                            "over the current data this rule passes for every pair ({pairs}): it decides nothing here"
                        )
                    } else {
                        format!(
                            "over the current data this rule fails for every pair ({pairs}): no target can pass it"
                        )
                    };
                    out.push(
                        Diagnostic::warning(
                            Code::ConstantOverData,
                            format!("/rules/{r}/logic"),
                            message,
                        )
                        .with_hint(Some(hint.into())),
                    );
                }
                Some(m) if said.contains(&m.family.id.as_str()) => {}
                Some(m) => {
                    said.push(&m.family.id);
                    let members: Vec<&str> = these
                        .iter()
                        .filter_map(|&o| {
                            let other = page.rules[o].family.as_ref()?;
                            std::sync::Arc::ptr_eq(&other.family, &m.family)
                                .then(|| page.rules[o].id.as_str())
                        })
                        .collect();
                    let listed = if members.len() > 12 {
                        format!("{}, …", members[..12].join(", "))
                    } else {
                        members.join(", ")
                    };
                    out.push(
                        Diagnostic::warning(
                            Code::ConstantOverData,
                            format!("/rules/{r}"),
                            format!(
                                "over the current data {} of the {} members of the rule family `{}` {} ({pairs}): {listed}",
                                members.len(),
                                m.family.members,
                                m.family.id,
                                if passes { "pass for every pair" } else { "fail for every pair" }
                            ),
                        )
                        .with_hint(Some(hint.into())),
                    );
                }
            }
        }
    }
    // In page order (pointers by the page's rules; a page file's reader points them at
    // its own: `family::at_written`).
    out.sort_by_key(|d| {
        d.pointer
            .strip_prefix("/rules/")
            .and_then(|p| p.split('/').next())
            .and_then(|i| i.parse::<usize>().ok())
    });
    out
}

pub fn lint(logic: &Value, schema: &Schema) -> Vec<Diagnostic> {
    lint_rule(logic, None, schema)
}

/// [`lint`] of a rule's logic whose rule carries the `appliesWhen` condition
/// `condition`: the rule reads what both read, so a logic that reads the targets only
/// under a condition on the source is not one-sided.
pub fn lint_rule(logic: &Value, condition: Option<&Value>, schema: &Schema) -> Vec<Diagnostic> {
    let mut l = Lint {
        schema,
        out: Vec::new(),
        guarded: Vec::new(),
    };
    l.walk(logic, "", false);
    // What the rule reads, as the engine works it out (`var`, `val`, `missing`, …).
    let mut reads = super::engine::Reads::of(logic);
    if let Some(c) = condition {
        reads = reads.union(&super::engine::Reads::of(c));
    }
    let reads_side = |s: &Option<Vec<super::engine::FieldPath>>| match s {
        None => true,
        Some(paths) => !paths.is_empty(),
    };
    match [reads_side(&reads.source), reads_side(&reads.target)] {
        [true, false] => l.out.push(Diagnostic::warning(
            Code::OneSided,
            "",
            "this rule reads no target field: every target gets the same outcome for a selection",
        )),
        [false, true] => l.out.push(Diagnostic::warning(
            Code::OneSided,
            "",
            "this rule reads no source field: every selection gets the same outcome for a target (a filter on targets)",
        )),
        _ => {}
    }
    l.out
}

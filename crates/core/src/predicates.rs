//! Predicate-list rules: a rule may be written as a list of
//! `field operator value` predicates joined by AND or OR instead of JSONLogic:
//!
//! ```json
//! {"name": "Adult in the product's country",
//!  "predicates": [{"field": "source.age", "operator": ">=", "value": 18},
//!                 {"field": "source.country", "operator": "==", "value": {"field": "target.country"}}],
//!  "logical_operator": "AND"}
//! ```
//!
//! It is stored as the JSONLogic it stands for (the rule's `logic`) and shown as a
//! predicate list again while the logic still fits one: [`from_logic`] of
//! [`to_logic`] gives the list back.
//!
//! | operator | JSONLogic |
//! |---|---|
//! | `==` `!=` `<` `<=` `>` `>=` | `{op: [{"var": field}, value]}` |
//! | `in` | `{"in": [{"var": field}, value]}` (the field's value is in the array or string) |
//! | `not in` | `{"!": [{"in": [{"var": field}, value]}]}` |
//! | `contains` | `{"in": [value, {"var": field}]}` (the field's array or string holds the value) |
//! | `not contains` | `{"!": [{"in": [value, {"var": field}]}]}` |
//!
//! Several predicates are joined as `{"and": [...]}` / `{"or": [...]}`; a single AND
//! predicate is stored as the bare comparison. A `value` of `{"field": "target.x"}`
//! compares two fields. `contains` with a field value is the same JSONLogic as `in`
//! with the two fields swapped, and reads back as that `in`
//! ([`Predicate::canonical`]).
//!
//! Pure: no I/O.

use serde::{Serialize, Serializer};
use serde_json::{Map, Value, json};

use super::diag::{Code, Diagnostic, did_you_mean, pointer_token};

/// A predicate's comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
    Contains,
    NotContains,
}

impl Operator {
    pub const ALL: [Operator; 10] = [
        Operator::Eq,
        Operator::Ne,
        Operator::Lt,
        Operator::Le,
        Operator::Gt,
        Operator::Ge,
        Operator::In,
        Operator::NotIn,
        Operator::Contains,
        Operator::NotContains,
    ];

    /// As page files write it: `==`, `not in`, `contains`…
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::Eq => "==",
            Operator::Ne => "!=",
            Operator::Lt => "<",
            Operator::Le => "<=",
            Operator::Gt => ">",
            Operator::Ge => ">=",
            Operator::In => "in",
            Operator::NotIn => "not in",
            Operator::Contains => "contains",
            Operator::NotContains => "not contains",
        }
    }

    /// Reads an operator; words in any case, `_` as a space (`NOT_IN`, `Not In`).
    pub fn parse(text: &str) -> Option<Operator> {
        let words: Vec<String> = text
            .replace('_', " ")
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        let norm = words.join(" ");
        Operator::ALL.into_iter().find(|o| o.as_str() == norm)
    }
}

/// What a predicate compares its field with.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A literal: a string, number, boolean, null or an array of those.
    Literal(Value),
    /// Another field of the pair (`{"field": "target.country"}`).
    Field(String),
}

/// One condition: `field operator value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Predicate {
    /// `source.x` / `target.y`.
    pub field: String,
    pub operator: Operator,
    pub value: Operand,
}

impl Predicate {
    /// The form [`from_logic`] reads back: `contains` / `not contains` with a field
    /// value become `in` / `not in` with the fields swapped (the same JSONLogic).
    pub fn canonical(&self) -> Predicate {
        match (&self.operator, &self.value) {
            (Operator::Contains | Operator::NotContains, Operand::Field(other)) => Predicate {
                field: other.clone(),
                operator: if self.operator == Operator::Contains {
                    Operator::In
                } else {
                    Operator::NotIn
                },
                value: Operand::Field(self.field.clone()),
            },
            _ => self.clone(),
        }
    }
}

/// How the predicates combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogicalOperator {
    /// Every predicate must hold (the default).
    #[default]
    And,
    /// Some predicate must hold.
    Or,
}

impl LogicalOperator {
    pub fn as_str(self) -> &'static str {
        match self {
            LogicalOperator::And => "AND",
            LogicalOperator::Or => "OR",
        }
    }

    fn op(self) -> &'static str {
        match self {
            LogicalOperator::And => "and",
            LogicalOperator::Or => "or",
        }
    }
}

/// A predicate-list rule body: at least one predicate.
#[derive(Debug, Clone, PartialEq)]
pub struct PredicateList {
    pub predicates: Vec<Predicate>,
    pub logical_operator: LogicalOperator,
}

impl PredicateList {
    /// The list as a page file writes it: `{"predicates": [...], "logical_operator": "AND"}`.
    pub fn to_json(&self) -> Value {
        let predicates: Vec<Value> = self
            .predicates
            .iter()
            .map(|p| {
                json!({
                    "field": p.field,
                    "operator": p.operator.as_str(),
                    "value": match &p.value {
                        Operand::Literal(v) => v.clone(),
                        Operand::Field(f) => json!({"field": f}),
                    },
                })
            })
            .collect();
        json!({"predicates": predicates, "logical_operator": self.logical_operator.as_str()})
    }

    /// [`Predicate::canonical`] of every predicate.
    pub fn canonical(&self) -> PredicateList {
        PredicateList {
            predicates: self.predicates.iter().map(Predicate::canonical).collect(),
            logical_operator: self.logical_operator,
        }
    }
}

impl Serialize for PredicateList {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

fn var(field: &str) -> Value {
    json!({ "var": field })
}

fn comparison(p: &Predicate) -> Value {
    let field = var(&p.field);
    let value = match &p.value {
        Operand::Literal(v) => v.clone(),
        Operand::Field(f) => var(f),
    };
    match p.operator {
        Operator::In => json!({"in": [field, value]}),
        Operator::NotIn => json!({"!": [{"in": [field, value]}]}),
        Operator::Contains => json!({"in": [value, field]}),
        Operator::NotContains => json!({"!": [{"in": [value, field]}]}),
        op => json!({ op.as_str(): [field, value] }),
    }
}

/// The JSONLogic a predicate list stands for.
pub fn to_logic(list: &PredicateList) -> Value {
    match (list.predicates.as_slice(), list.logical_operator) {
        ([one], LogicalOperator::And) => comparison(one),
        (all, op) => json!({ op.op(): all.iter().map(comparison).collect::<Vec<_>>() }),
    }
}

/// The predicate list a rule's logic still is, if it is one: `to_logic` of the answer
/// gives `logic` back exactly.
pub fn from_logic(logic: &Value) -> Option<PredicateList> {
    let candidate = match one_entry(logic) {
        Some((op @ ("and" | "or"), Value::Array(items))) if !items.is_empty() => PredicateList {
            predicates: items.iter().map(predicate_of).collect::<Option<Vec<_>>>()?,
            logical_operator: if op == "and" {
                LogicalOperator::And
            } else {
                LogicalOperator::Or
            },
        },
        _ => PredicateList {
            predicates: vec![predicate_of(logic)?],
            logical_operator: LogicalOperator::And,
        },
    };
    (to_logic(&candidate) == *logic).then_some(candidate)
}

/// `{op: args}` → (op, args).
fn one_entry(v: &Value) -> Option<(&str, &Value)> {
    match v {
        Value::Object(map) if map.len() == 1 => map.iter().next().map(|(k, v)| (k.as_str(), v)),
        _ => None,
    }
}

/// `{"var": "source.x"}` → `source.x`.
fn field_of(v: &Value) -> Option<&str> {
    match one_entry(v)? {
        ("var", Value::String(path)) if !path.is_empty() => Some(path),
        _ => None,
    }
}

/// A literal operand: no operation anywhere inside.
fn is_literal(v: &Value) -> bool {
    match v {
        Value::Object(_) => false,
        Value::Array(items) => items.iter().all(is_literal),
        _ => true,
    }
}

fn operand_of(v: &Value) -> Option<Operand> {
    match field_of(v) {
        Some(f) => Some(Operand::Field(f.to_owned())),
        None if is_literal(v) => Some(Operand::Literal(v.clone())),
        None => None,
    }
}

fn predicate_of(v: &Value) -> Option<Predicate> {
    let (op, args) = one_entry(v)?;
    let pair = |args: &Value| -> Option<(Value, Value)> {
        match args {
            Value::Array(a) if a.len() == 2 => Some((a[0].clone(), a[1].clone())),
            _ => None,
        }
    };
    let membership = |args: &Value, negated: bool| -> Option<Predicate> {
        let (a, b) = pair(args)?;
        if let Some(field) = field_of(&a) {
            return Some(Predicate {
                field: field.to_owned(),
                operator: if negated {
                    Operator::NotIn
                } else {
                    Operator::In
                },
                value: operand_of(&b)?,
            });
        }
        let field = field_of(&b)?;
        is_literal(&a).then_some(())?;
        Some(Predicate {
            field: field.to_owned(),
            operator: if negated {
                Operator::NotContains
            } else {
                Operator::Contains
            },
            value: Operand::Literal(a),
        })
    };
    match op {
        "in" => membership(args, false),
        "!" => {
            let inner = match args {
                Value::Array(a) if a.len() == 1 => &a[0],
                _ => return None,
            };
            match one_entry(inner)? {
                ("in", args) => membership(args, true),
                _ => None,
            }
        }
        _ => {
            let operator = Operator::ALL
                .into_iter()
                .find(|o| o.as_str() == op && !matches!(o, Operator::In | Operator::NotIn))
                .filter(|o| !matches!(o, Operator::Contains | Operator::NotContains))?;
            let (a, b) = pair(args)?;
            Some(Predicate {
                field: field_of(&a)?.to_owned(),
                operator,
                value: operand_of(&b)?,
            })
        }
    }
}

// ---------------------------------------------------------------------------------------
// Reading rule input
// ---------------------------------------------------------------------------------------

/// The keys a predicate may have.
const PREDICATE_KEYS: &[&str] = &["field", "operator", "value"];

/// A rule's logic as written: `logic` as is, or the JSONLogic of `predicates`
/// (joined by `logical_operator`, default AND). Every error is reported, each with a
/// JSON pointer relative to the rule object (`/predicates/1/operator`).
///
/// `logical_operator` is the key the rule used for it (`logical_operator` or
/// `logicalOperator`) with its value.
pub fn rule_logic(
    logic: Option<&Value>,
    predicates: Option<&Value>,
    logical_operator: Option<(&str, &Value)>,
) -> Result<(Value, Option<PredicateList>), Vec<Diagnostic>> {
    match (logic, predicates) {
        (Some(_), Some(_)) => Err(vec![
            Diagnostic::error(
                Code::LogicOrPredicates,
                "/predicates",
                "a rule takes `logic` or `predicates`, not both",
            )
            .with_hint(Some(
                "keep one: `logic` is JSONLogic, `predicates` a predicate list".into(),
            )),
        ]),
        (None, None) => Err(vec![Diagnostic::error(
            Code::LogicOrPredicates,
            "",
            "a rule needs `logic` (JSONLogic) or `predicates` (a predicate list)",
        )]),
        (Some(logic), None) => match logical_operator {
            Some((key, _)) => Err(vec![Diagnostic::error(
                Code::LogicOrPredicates,
                format!("/{}", pointer_token(key)),
                format!("`{key}` joins `predicates`; this rule has `logic`"),
            )]),
            None => Ok((logic.clone(), None)),
        },
        (None, Some(predicates)) => {
            let list = read_list(predicates, logical_operator)?;
            Ok((to_logic(&list), Some(list)))
        }
    }
}

/// Reads a predicate list; every error, with pointers relative to the rule.
pub fn read_list(
    predicates: &Value,
    logical_operator: Option<(&str, &Value)>,
) -> Result<PredicateList, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let op = match logical_operator {
        None => LogicalOperator::And,
        Some((key, value)) => {
            let at = format!("/{}", pointer_token(key));
            match value.as_str().map(|s| s.trim().to_uppercase()).as_deref() {
                Some("AND") => LogicalOperator::And,
                Some("OR") => LogicalOperator::Or,
                _ => {
                    let hint = value
                        .as_str()
                        .and_then(|s| did_you_mean(s, ["AND", "OR"]))
                        .map(|s| format!("did you mean `{s}`?"));
                    errors.push(
                        Diagnostic::error(
                            Code::LogicalOperator,
                            at,
                            format!("`{key}` must be \"AND\" or \"OR\", got {value}"),
                        )
                        .with_hint(hint),
                    );
                    LogicalOperator::And
                }
            }
        }
    };
    let items = match predicates {
        Value::Array(items) if !items.is_empty() => items,
        Value::Array(_) => {
            errors.push(Diagnostic::error(
                Code::Predicate,
                "/predicates",
                "`predicates` is empty; a rule needs at least one predicate",
            ));
            return Err(errors);
        }
        other => {
            errors.push(
                Diagnostic::error(
                    Code::Predicate,
                    "/predicates",
                    format!(
                        "`predicates` must be an array of predicates, got {}",
                        kind(other)
                    ),
                )
                .with_hint(Some(
                    r#"[{"field": "source.age", "operator": ">=", "value": 18}]"#.into(),
                )),
            );
            return Err(errors);
        }
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match read_predicate(item, &format!("/predicates/{i}"), &mut errors) {
            Some(p) => out.push(p),
            None => continue,
        }
    }
    if errors.is_empty() {
        Ok(PredicateList {
            predicates: out,
            logical_operator: op,
        })
    } else {
        Err(errors)
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn read_predicate(item: &Value, at: &str, errors: &mut Vec<Diagnostic>) -> Option<Predicate> {
    let Value::Object(map) = item else {
        errors.push(
            Diagnostic::error(
                Code::Predicate,
                at,
                format!(
                    "a predicate must be an object {{field, operator, value}}, got {}",
                    kind(item)
                ),
            )
            .with_hint(Some(
                r#"{"field": "source.age", "operator": ">=", "value": 18}"#.into(),
            )),
        );
        return None;
    };
    let before = errors.len();
    for key in map.keys() {
        if !PREDICATE_KEYS.contains(&key.as_str()) {
            let hint = did_you_mean(key, PREDICATE_KEYS.iter().copied())
                .map(|s| format!("did you mean `{s}`?"))
                .or_else(|| Some("a predicate has `field`, `operator` and `value`".into()));
            errors.push(
                Diagnostic::error(
                    Code::Predicate,
                    format!("{at}/{}", pointer_token(key)),
                    format!("unknown key `{key}` in a predicate"),
                )
                .with_hint(hint),
            );
        }
    }
    let field = match map.get("field") {
        Some(Value::String(f)) if !f.trim().is_empty() => Some(f.clone()),
        Some(other) => {
            errors.push(Diagnostic::error(
                Code::Predicate,
                format!("{at}/field"),
                format!(
                    "`field` must name a field (`source.x` or `target.y`), got {}",
                    if other.as_str().is_some() {
                        "an empty string"
                    } else {
                        kind(other)
                    }
                ),
            ));
            None
        }
        None => {
            errors.push(
                Diagnostic::error(Code::Predicate, at, "the predicate has no `field`")
                    .with_hint(Some("add `\"field\": \"source.x\"`".into())),
            );
            None
        }
    };
    let names = || {
        Operator::ALL
            .iter()
            .map(|o| format!("`{}`", o.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let operator = match map.get("operator") {
        Some(Value::String(s)) => match Operator::parse(s) {
            Some(o) => Some(o),
            None => {
                let hint = known_slip(s)
                    .or_else(|| did_you_mean(s, Operator::ALL.iter().map(|o| o.as_str())))
                    .map(|o| format!("did you mean `{o}`?"))
                    .unwrap_or_else(|| format!("operators: {}", names()));
                errors.push(
                    Diagnostic::error(
                        Code::PredicateOperator,
                        format!("{at}/operator"),
                        format!("unknown operator `{s}`"),
                    )
                    .with_hint(Some(hint)),
                );
                None
            }
        },
        Some(other) => {
            errors.push(
                Diagnostic::error(
                    Code::PredicateOperator,
                    format!("{at}/operator"),
                    format!("`operator` must be a string, got {}", kind(other)),
                )
                .with_hint(Some(format!("operators: {}", names()))),
            );
            None
        }
        None => {
            errors.push(
                Diagnostic::error(Code::Predicate, at, "the predicate has no `operator`")
                    .with_hint(Some(format!("operators: {}", names()))),
            );
            None
        }
    };
    let value = match map.get("value") {
        None => {
            errors.push(
                Diagnostic::error(Code::Predicate, at, "the predicate has no `value`").with_hint(
                    Some(
                        "a literal (`18`, `\"USA\"`, `[\"a\", \"b\"]`) or another field \
                         (`{\"field\": \"target.x\"}`)"
                            .into(),
                    ),
                ),
            );
            None
        }
        Some(Value::Object(m)) => match (m.len(), m.get("field")) {
            (1, Some(Value::String(f))) if !f.trim().is_empty() => Some(Operand::Field(f.clone())),
            (1, Some(other)) => {
                errors.push(Diagnostic::error(
                    Code::Predicate,
                    format!("{at}/value/field"),
                    format!("`field` must name a field, got {}", kind(other)),
                ));
                None
            }
            _ => {
                errors.push(
                    Diagnostic::error(
                        Code::Predicate,
                        format!("{at}/value"),
                        "an object `value` must be {\"field\": \"…\"} (another field)",
                    )
                    .with_hint(Some(
                        "literals are strings, numbers, booleans, null or arrays of them".into(),
                    )),
                );
                None
            }
        },
        Some(v) if is_literal(v) => Some(Operand::Literal(v.clone())),
        Some(_) => {
            errors.push(Diagnostic::error(
                Code::Predicate,
                format!("{at}/value"),
                "an array `value` may hold only literals (strings, numbers, booleans, null)",
            ));
            None
        }
    };
    if errors.len() > before {
        return None;
    }
    Some(Predicate {
        field: field?,
        operator: operator?,
        value: value?,
    })
}

/// What other languages write for one of our operators (`=`, `<>`, `=>`, `===`).
fn known_slip(op: &str) -> Option<String> {
    let reversed: String = op.trim().chars().rev().collect();
    let to = match op.trim() {
        "=" | "===" | "eq" => "==",
        "<>" | "!==" | "ne" => "!=",
        "=>" | "=<" => return Operator::parse(&reversed).map(|o| o.as_str().to_owned()),
        _ => return None,
    };
    Some(to.to_owned())
}

/// The rule-object fields of a page document's or a rule document's rule:
/// (`logic`, `predicates`, (key, `logical_operator`)).
fn rule_parts(
    rule: &Map<String, Value>,
) -> (Option<&Value>, Option<&Value>, Option<(&str, &Value)>) {
    let op = ["logical_operator", "logicalOperator"]
        .into_iter()
        .find_map(|k| rule.get(k).map(|v| (k, v)));
    (rule.get("logic"), rule.get("predicates"), op)
}

/// Reads one rule document (`rule add`): its predicate list, if it has one. Errors
/// point into the document.
pub fn read_rule(doc: &Value) -> Result<Option<PredicateList>, Vec<Diagnostic>> {
    match doc {
        // A family's texts name its parameters (`target.{feature}`): its members are
        // read, and said wrong, when it is expanded.
        Value::Object(rule) if rule.contains_key("each") => Ok(None),
        Value::Object(rule) => {
            if let Some(expression) = rule.get("expression") {
                return read_expression(rule, expression);
            }
            let (logic, predicates, op) = rule_parts(rule);
            rule_logic(logic, predicates, op).map(|(_, list)| list)
        }
        // Not an object: the rule's own parse says so.
        _ => Ok(None),
    }
}

/// A rule written as an infix `expression`: it parses (else the error, located in the
/// expression), and it is not also a predicate list. (Whether a `logic` given too agrees
/// is the rule's own parse's to say.)
fn read_expression(
    rule: &serde_json::Map<String, Value>,
    expression: &Value,
) -> Result<Option<PredicateList>, Vec<Diagnostic>> {
    if rule.contains_key("predicates") {
        return Err(vec![Diagnostic::error(
            Code::LogicOrPredicates,
            "/predicates",
            "a rule takes `expression` or `predicates`, not both",
        )]);
    }
    let Some(text) = expression.as_str() else {
        return Err(vec![Diagnostic::error(
            Code::InfixSyntax,
            "/expression",
            "`expression` is infix text, a string",
        )]);
    };
    if let Some(c) = text.chars().find(|&c| super::text::is_unsafe(c)) {
        return Err(vec![Diagnostic::error(
            Code::InfixSyntax,
            "/expression",
            format!(
                "`expression` holds the control character U+{:04X}",
                c as u32
            ),
        )]);
    }
    match super::infix::parse(text, &super::infix::Fields::default()) {
        Ok(_) => Ok(None),
        Err(e) => Err(vec![
            Diagnostic::error(
                Code::InfixSyntax,
                "/expression",
                format!("`expression` {}:{}: {}", e.line, e.column, e.message),
            )
            .with_hint(e.hint),
        ]),
    }
}

/// Reads the rules of a page document: the predicate list of each rule written as
/// one (by index). Errors point into the document (`/rules/3/predicates/1/operator`).
pub fn read_page(doc: &Value) -> Result<Vec<Option<PredicateList>>, Vec<Diagnostic>> {
    let Some(rules) = doc.get("rules").and_then(Value::as_array) else {
        return Ok(vec![]);
    };
    let mut lists = Vec::new();
    let mut errors = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        match read_rule(rule) {
            Ok(list) => lists.push(list),
            Err(e) => {
                lists.push(None);
                errors.extend(e.into_iter().map(|d| d.under(&format!("/rules/{i}"))));
            }
        }
    }
    if errors.is_empty() {
        Ok(lists)
    } else {
        Err(errors)
    }
}

/// Where predicate `p`'s field and value sit in its comparison's JSONLogic.
fn layout(p: &Predicate) -> (String, String) {
    let op = pointer_token(p.operator.as_str());
    match p.operator {
        Operator::NotIn => ("/!/0/in/0".into(), "/!/0/in/1".into()),
        Operator::Contains => ("/in/1".into(), "/in/0".into()),
        Operator::NotContains => ("/!/0/in/1".into(), "/!/0/in/0".into()),
        _ => (format!("/{op}/0"), format!("/{op}/1")),
    }
}

/// Maps a pointer into [`to_logic`]`(list)` (relative to the logic) to the place in
/// the predicate list it comes from, relative to the rule: `/and/1/==/0/var` →
/// `/predicates/1/field`.
pub fn source_pointer(list: &PredicateList, logic_pointer: &str) -> String {
    let (index, rest) = match (list.predicates.len(), list.logical_operator) {
        (1, LogicalOperator::And) => (0, logic_pointer),
        (_, op) => {
            let prefix = format!("/{}/", op.op());
            let Some(tail) = logic_pointer.strip_prefix(&prefix) else {
                return "/predicates".into();
            };
            let i = tail.split('/').next().unwrap_or_default();
            match i.parse::<usize>() {
                Ok(n) if n < list.predicates.len() => (n, &tail[i.len()..]),
                _ => return "/predicates".into(),
            }
        }
    };
    let p = &list.predicates[index];
    let (field, value) = layout(p);
    let at = format!("/predicates/{index}");
    let under = |prefix: &str| rest == prefix || rest.starts_with(&format!("{prefix}/"));
    if under(&field) {
        format!("{at}/field")
    } else if under(&value) {
        match &p.value {
            Operand::Field(_) => format!("{at}/value/field"),
            Operand::Literal(_) => format!("{at}/value{}", &rest[value.len()..]),
        }
    } else {
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(v: Value) -> PredicateList {
        let ops = v.get("logical_operator").map(|o| ("logical_operator", o));
        read_list(&v["predicates"], ops).unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn the_seed_example_becomes_jsonlogic_and_back() {
        let l = list(json!({"predicates": [
            {"field": "source.age", "operator": ">=", "value": 18},
            {"field": "source.country", "operator": "==", "value": {"field": "target.country"}}],
            "logical_operator": "and"}));
        let logic = to_logic(&l);
        assert_eq!(
            logic,
            json!({"and": [{">=": [{"var": "source.age"}, 18]},
                           {"==": [{"var": "source.country"}, {"var": "target.country"}]}]})
        );
        assert_eq!(from_logic(&logic), Some(l.clone()));
        assert_eq!(
            l.to_json(),
            json!({"predicates": [
                {"field": "source.age", "operator": ">=", "value": 18},
                {"field": "source.country", "operator": "==", "value": {"field": "target.country"}}],
                "logical_operator": "AND"})
        );
    }

    #[test]
    fn membership_operators_and_a_single_predicate() {
        let l = list(json!({"predicates": [
            {"field": "target.tags", "operator": "CONTAINS", "value": "gpu"},
            {"field": "target.tier", "operator": "not_in", "value": ["free"]},
            {"field": "target.tags", "operator": "Not Contains", "value": "beta"}],
            "logical_operator": "Or"}));
        assert_eq!(
            to_logic(&l),
            json!({"or": [{"in": ["gpu", {"var": "target.tags"}]},
                          {"!": [{"in": [{"var": "target.tier"}, ["free"]]}]},
                          {"!": [{"in": ["beta", {"var": "target.tags"}]}]}]})
        );
        assert_eq!(from_logic(&to_logic(&l)), Some(l));
        let one =
            list(json!({"predicates": [{"field": "source.age", "operator": "<", "value": 65}]}));
        assert_eq!(to_logic(&one), json!({"<": [{"var": "source.age"}, 65]}));
        assert_eq!(from_logic(&to_logic(&one)), Some(one));
    }

    #[test]
    fn logic_that_is_no_predicate_list() {
        for logic in [
            json!({"<=": [1, {"var": "source.x"}, 3]}),
            json!({"==": [18, {"var": "source.age"}]}),
            json!({"and": [{"==": [{"var": "source.a"}, 1]}, {"or": [{"var": "source.b"}]}]}),
            json!({"and": [{"==": [{"var": "source.a"}, 1]}]}),
            json!({"!": {"in": [{"var": "source.a"}, [1]]}}),
            json!({"==": [{"var": ["source.a", 0]}, 1]}),
            json!({"==": [{"var": "source.a"}, {"+": [1, 2]}]}),
            json!({"and": []}),
            json!(true),
        ] {
            assert_eq!(from_logic(&logic), None, "{logic}");
        }
    }

    #[test]
    fn errors_say_what_and_where() {
        let errors = read_list(
            &json!([
                {"field": "source.age", "operator": "=>", "value": 18},
                {"operator": "==", "value": 1},
                {"field": "source.x", "operater": "==", "value": 1},
                {"field": "source.x", "operator": "==", "value": {"+": [1]}},
                {"field": "source.x", "operator": "in"},
                "source.x == 1"
            ]),
            Some(("logical_operator", &json!("XOR"))),
        )
        .unwrap_err();
        let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            vec![
                "error[logical-operator] at /logical_operator: `logical_operator` must be \"AND\" or \"OR\", got \"XOR\" (hint: did you mean `OR`?)",
                "error[predicate-operator] at /predicates/0/operator: unknown operator `=>` (hint: did you mean `>=`?)",
                "error[predicate] at /predicates/1: the predicate has no `field` (hint: add `\"field\": \"source.x\"`)",
                "error[predicate] at /predicates/2/operater: unknown key `operater` in a predicate (hint: did you mean `operator`?)",
                "error[predicate] at /predicates/2: the predicate has no `operator` (hint: operators: `==`, `!=`, `<`, `<=`, `>`, `>=`, `in`, `not in`, `contains`, `not contains`)",
                "error[predicate] at /predicates/3/value: an object `value` must be {\"field\": \"…\"} (another field) (hint: literals are strings, numbers, booleans, null or arrays of them)",
                "error[predicate] at /predicates/4: the predicate has no `value` (hint: a literal (`18`, `\"USA\"`, `[\"a\", \"b\"]`) or another field (`{\"field\": \"target.x\"}`))",
                "error[predicate] at /predicates/5: a predicate must be an object {field, operator, value}, got a string (hint: {\"field\": \"source.age\", \"operator\": \">=\", \"value\": 18})",
            ]
        );
        let both = rule_logic(Some(&json!(true)), Some(&json!([])), None).unwrap_err();
        assert_eq!(both[0].pointer, "/predicates");
        let neither = rule_logic(None, None, None).unwrap_err();
        assert!(neither[0].message.contains("needs `logic`"));
        let stray = rule_logic(
            Some(&json!(true)),
            None,
            Some(("logicalOperator", &json!("OR"))),
        )
        .unwrap_err();
        assert_eq!(stray[0].pointer, "/logicalOperator");
    }

    #[test]
    fn logic_pointers_map_back_to_the_predicates() {
        let l = list(json!({"predicates": [
            {"field": "source.age", "operator": ">=", "value": 18},
            {"field": "source.country", "operator": "==", "value": {"field": "target.country"}},
            {"field": "target.tags", "operator": "not contains", "value": ["a", "b"]}]}));
        assert_eq!(source_pointer(&l, "/and/0/>=/0/var"), "/predicates/0/field");
        assert_eq!(
            source_pointer(&l, "/and/1/==/1/var"),
            "/predicates/1/value/field"
        );
        assert_eq!(
            source_pointer(&l, "/and/2/!/0/in/1/var"),
            "/predicates/2/field"
        );
        assert_eq!(
            source_pointer(&l, "/and/2/!/0/in/0/1"),
            "/predicates/2/value/1"
        );
        assert_eq!(source_pointer(&l, "/and/2"), "/predicates/2");
        assert_eq!(source_pointer(&l, ""), "/predicates");
        let one =
            list(json!({"predicates": [{"field": "source.agee", "operator": ">=", "value": 18}]}));
        assert_eq!(source_pointer(&one, "/>=/0/var"), "/predicates/0/field");
    }
}

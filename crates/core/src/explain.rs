//! Explanations: why a rule passed or failed for a pair, as a tree mirroring the rule
//! with every node's value, plus the fields read and a sentence; and why a target got
//! its verdict.
//!
//! Every value shown is computed by the engine itself: each sub-expression is compiled
//! and evaluated on the pair on its own, so a node's value is exactly what
//! `engine::apply(sub_expression, {"source": …, "target": …})` gives. Where JSONLogic
//! short-circuits (`and`, `or`, `if`), the skipped children are marked not evaluated
//! but still computed on the side, so that every failing condition can be reported,
//! not only the first one.
//!
//! Pure: no I/O.

use serde::Serialize;
use serde_json::{Value, json};

use super::engine::{self, Outcome};
use super::matrix::SelectionEval;
use super::model::{Override, Page, RequiredMode, Rule, key_hash};
use super::verdict::{Reason, RuleWeight, Scoring, Tally, Verdict, device_verdict};

/// What a node of the tree is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// An operation; its arguments are its children.
    Operation,
    /// A `var` reading a field of the pair (its default, if any, is its child).
    Field,
    /// A literal value.
    Literal,
    /// The body of `map`/`filter`/`all`/`some`/`none`/`reduce`…, evaluated once per
    /// array item: it has no value of its own.
    ItemScope,
}

/// One node of the explanation tree: an operation (or a literal) with its value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    /// The operator (`==`, `and`, `var source.x`…) or, for a literal, its JSON.
    pub label: String,
    /// The operator, for operations and fields.
    pub op: Option<String>,
    pub kind: Kind,
    /// The node's value as the engine computes it on the pair. Filled even when the
    /// node was not evaluated (computed on the side, see `evaluated`); `None` when the
    /// engine raised an error (see `error`) and for item-scope bodies.
    pub value: Option<Value>,
    /// JSONLogic truthiness of the value.
    pub pass: Option<bool>,
    /// Whether JSONLogic evaluates this node: `false` when an `and`, `or` or `if`
    /// above it short-circuited past it.
    pub evaluated: bool,
    /// The engine's error for this sub-expression.
    pub error: Option<String>,
    pub children: Vec<Node>,
    /// A human sentence for comparisons ("target.provider is 'meta', expected 'openai'").
    pub sentence: Option<String>,
    /// The sub-expression this node stands for.
    #[serde(skip)]
    pub logic: Value,
}

impl Node {
    /// The node and its descendants, depth first, with their depth.
    pub fn walk(&self) -> Vec<(usize, &Node)> {
        fn go<'a>(n: &'a Node, depth: usize, out: &mut Vec<(usize, &'a Node)>) {
            out.push((depth, n));
            for c in &n.children {
                go(c, depth + 1, out);
            }
        }
        let mut out = Vec::new();
        go(self, 0, &mut out);
        out
    }
}

/// Why a rule passed or failed for one pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    pub rule_id: String,
    pub passed: bool,
    /// The rule's value, or the engine's error.
    pub value: Option<Value>,
    pub error: Option<String>,
    pub tree: Node,
    /// Every field the rule reads, with its value in this pair (`null` when missing),
    /// in the order the rule first reads them.
    pub fields: Vec<(String, Value)>,
    /// The fields of `fields` that are absent from the pair (not merely `null`).
    pub missing: Vec<String>,
    /// One sentence on why: for a failing rule, every failing condition; for a rule
    /// that does not apply, why not.
    pub sentence: String,
    /// Whether the rule applies to the pair: `None` when it has no `appliesWhen`,
    /// `Some(false)` when its outcome is n/a (then `passed` is false).
    pub applies: Option<bool>,
    /// The `appliesWhen` condition's tree, when the rule has one.
    pub condition: Option<Node>,
}

/// Explains one rule for a (source, target) pair.
pub fn explain(rule: &Rule, source: &Value, target: &Value) -> Explanation {
    let pair = Pair { source, target };
    let tree = pair.build(&rule.logic, true);
    let passed = tree.pass == Some(true);
    let mut paths = Vec::new();
    collect_fields(&rule.logic, false, &mut paths);
    let fields: Vec<(String, Value)> = paths
        .iter()
        .map(|p| {
            let value = pair
                .eval(&json!({ "var": p }))
                .map_or(Value::Null, |(v, _)| v);
            (p.clone(), value)
        })
        .collect();
    let missing = paths
        .iter()
        .filter(|p| pair.lookup(p).is_none())
        .cloned()
        .collect();
    let condition = rule
        .applies_when
        .as_ref()
        .map(|c| pair.build(&c.logic, true));
    // A condition the engine raises an error on applies, and the rule fails with the
    // error (as the matrix counts it).
    let applies = condition
        .as_ref()
        .map(|c| c.error.is_some() || c.pass == Some(true));
    let (passed, sentence) = match &condition {
        Some(c) if c.error.is_some() => (
            false,
            format!("error in appliesWhen: {}", c.error.as_deref().unwrap_or("")),
        ),
        Some(c) if applies == Some(false) => (false, format!("does not apply: {}", summary(c))),
        _ => (passed, summary(&tree)),
    };
    Explanation {
        applies,
        condition,
        rule_id: rule.id.clone(),
        passed,
        value: tree.value.clone(),
        error: tree.error.clone(),
        fields,
        missing,
        sentence,
        tree,
    }
}

/// The top sentence: every failing condition of a failing rule; a short reason for a
/// passing one.
fn summary(tree: &Node) -> String {
    if let Some(e) = &tree.error {
        return format!("error: {e}");
    }
    let passed = tree.pass == Some(true);
    let mut out = Vec::new();
    reasons(tree, passed, &mut out);
    let mut seen = std::collections::HashSet::new();
    out.retain(|s| seen.insert(s.clone()));
    let value = tree.value.as_ref().map_or("null".to_owned(), fmt_value);
    if out.is_empty() {
        return if passed {
            format!("the rule's value is {value}")
        } else {
            format!("the rule's value is {value} (falsy)")
        };
    }
    if passed && out.len() > 3 {
        out.truncate(3);
        out.push("…".into());
    }
    let mut text = out.join("; ");
    // A passing rule whose `or` passed on one branch still says which conditions
    // failed: a reviewer sees every failing condition, passing rule or not.
    if passed {
        let mut failing = Vec::new();
        failed_alternatives(tree, &mut failing);
        let mut seen = std::collections::HashSet::new();
        failing.retain(|s| seen.insert(s.clone()));
        if !failing.is_empty() {
            text.push_str(&format!(" (failing: {})", failing.join("; ")));
        }
    }
    text
}

/// The failing conditions of the `or`s that passed under `node` (evaluated or not: an
/// `or` stops at its first passing branch, but the tree holds every branch's value).
fn failed_alternatives(node: &Node, out: &mut Vec<String>) {
    if node.pass != Some(true) {
        return;
    }
    if node.op.as_deref() == Some("or") {
        for c in node.children.iter().filter(|c| c.pass == Some(false)) {
            reasons(c, false, out);
        }
    }
    for c in &node.children {
        failed_alternatives(c, out);
    }
}

/// The sentences explaining why `node`'s truthiness is `want`.
fn reasons(node: &Node, want: bool, out: &mut Vec<String>) {
    if node.kind == Kind::Literal {
        return;
    }
    if let Some(e) = &node.error {
        out.push(format!("{} raised an error: {e}", node.label));
        return;
    }
    let op = node.op.as_deref().unwrap_or("");
    match op {
        "and" if !want => node
            .children
            .iter()
            .filter(|c| c.pass == Some(false))
            .for_each(|c| reasons(c, false, out)),
        "and" => node.children.iter().for_each(|c| reasons(c, true, out)),
        "or" if !want => node.children.iter().for_each(|c| reasons(c, false, out)),
        "or" => {
            if let Some(c) = node.children.iter().find(|c| c.pass == Some(true)) {
                reasons(c, true, out);
            }
        }
        "if" | "?:" => {
            let mut conds = Vec::new();
            let mut chosen = None;
            let mut i = 0;
            while i < node.children.len() {
                if i + 1 < node.children.len() {
                    let cond = &node.children[i];
                    conds.push(cond);
                    if cond.pass == Some(true) {
                        chosen = Some((&node.children[i + 1], Some(cond)));
                        break;
                    }
                    i += 2;
                } else {
                    chosen = Some((&node.children[i], None));
                    i += 1;
                }
            }
            let before = out.len();
            if let Some((branch, _)) = chosen {
                reasons(branch, want, out);
            }
            if out.len() == before {
                match chosen {
                    Some((_, Some(cond))) => reasons(cond, true, out),
                    _ => conds.iter().for_each(|c| reasons(c, false, out)),
                }
            }
        }
        "!" if node.sentence.is_none() && !node.children.is_empty() => {
            reasons(&node.children[0], !want, out)
        }
        "!!" if node.sentence.is_none() && !node.children.is_empty() => {
            reasons(&node.children[0], want, out)
        }
        _ => match &node.sentence {
            Some(s) => out.push(s.clone()),
            None => out.push(format!(
                "{} is {}",
                short(&node.logic, false),
                node.value.as_ref().map_or("null".to_owned(), fmt_value)
            )),
        },
    }
}

/// The pair a rule is explained for.
struct Pair<'a> {
    source: &'a Value,
    target: &'a Value,
}

/// An operand of a comparison, as sentences name it.
struct Operand {
    /// `source.x` when the operand reads a field.
    field: Option<String>,
    /// The field is absent from the pair.
    missing: bool,
    /// The field is absent and the `var`'s default gave the value.
    default_used: bool,
    literal: bool,
    /// The expression, shortened, when the operand is neither a field nor a literal.
    text: String,
    /// The operand's value (`None`: an error).
    value: Option<Value>,
}

impl Operand {
    fn value_text(&self) -> String {
        self.value.as_ref().map_or("an error".to_owned(), fmt_value)
    }

    /// `target.provider ('meta')`, `'openai'`, `source.x (missing)`.
    fn valued(&self) -> String {
        match &self.field {
            Some(f) if self.default_used => {
                format!("{f} (missing, default {})", self.value_text())
            }
            Some(f) if self.missing => format!("{f} (missing)"),
            Some(f) => format!("{f} ({})", self.value_text()),
            None if self.literal => self.value_text(),
            None => format!("{} ({})", self.text, self.value_text()),
        }
    }

    /// `target.provider is 'meta'`, `source.x is missing (null)`.
    fn is_desc(&self) -> String {
        match &self.field {
            Some(f) if self.default_used => {
                format!(
                    "{f} is missing, so the default {} applies",
                    self.value_text()
                )
            }
            Some(f) if self.missing => format!("{f} is missing (null)"),
            Some(f) => format!("{f} is {}", self.value_text()),
            None if self.literal => self.value_text(),
            None => format!("{} is {}", self.text, self.value_text()),
        }
    }

    /// `target.tier 'free'` (as membership sentences name a needle).
    fn named(&self) -> String {
        match &self.field {
            Some(f) if self.missing && !self.default_used => format!("{f} (missing)"),
            Some(f) => format!("{f} {}", self.value_text()),
            None => self.valued(),
        }
    }
}

/// The operators that get comparison sentences, and their negations.
fn negated(op: &str) -> Option<&'static str> {
    Some(match op {
        "==" => "!=",
        "!=" => "==",
        "===" => "!==",
        "!==" => "===",
        "<" => ">=",
        "<=" => ">",
        ">" => "<=",
        ">=" => "<",
        "in" => "not in",
        "not in" => "in",
        "!" => "!!",
        "!!" => "!",
        _ => return None,
    })
}

/// `<` ↔ `>`, as when the operands of a comparison are swapped.
fn flipped(op: &str) -> &str {
    match op {
        "<" => ">",
        "<=" => ">=",
        ">" => "<",
        ">=" => "<=",
        other => other,
    }
}

impl Pair<'_> {
    /// The engine's value and truthiness of `logic` on the pair.
    fn eval(&self, logic: &Value) -> Result<(Value, bool), String> {
        let compiled = engine::compile(logic)?;
        match engine::evaluate_rows(&compiled.logic, self.source, self.target) {
            Outcome::Value { value, pass } => Ok((value, pass)),
            Outcome::Error(e) => Err(e),
        }
    }

    /// The value at a dotted path of the pair (`target.provider`), if present.
    fn lookup(&self, path: &str) -> Option<&Value> {
        let mut segments = path.split('.');
        let mut at = match segments.next()? {
            "source" => self.source,
            "target" => self.target,
            _ => return None,
        };
        for seg in segments {
            at = match at {
                Value::Object(m) => m.get(seg)?,
                Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(at)
    }

    fn node(&self, logic: &Value, label: String, kind: Kind, evaluated: bool) -> Node {
        let (value, pass, error) = match self.eval(logic) {
            Ok((v, p)) => (Some(v), Some(p), None),
            Err(e) => (None, None, Some(e)),
        };
        Node {
            label,
            op: None,
            kind,
            value,
            pass,
            evaluated,
            error,
            children: vec![],
            sentence: None,
            logic: logic.clone(),
        }
    }

    /// The tree of `logic`; `evaluated` is false under a short-circuit.
    fn build(&self, logic: &Value, evaluated: bool) -> Node {
        match logic {
            Value::Object(map) if map.len() == 1 => {
                let (op, args) = map.iter().next().expect("one entry");
                self.operation(logic, op, args, evaluated)
            }
            Value::Array(items) if items.iter().any(is_operation) => {
                let mut n = self.node(logic, "array".into(), Kind::Operation, evaluated);
                n.children = items.iter().map(|i| self.build(i, evaluated)).collect();
                n
            }
            _ => self.node(logic, one_line(logic), Kind::Literal, evaluated),
        }
    }

    fn operation(&self, logic: &Value, op: &str, args: &Value, evaluated: bool) -> Node {
        let list: Vec<&Value> = match args {
            Value::Array(a) => a.iter().collect(),
            other => vec![other],
        };
        let (label, kind) = match op {
            "var" => (
                format!(
                    "var {}",
                    list.first().map_or(String::new(), |p| path_text(p))
                ),
                Kind::Field,
            ),
            "val" | "exists" | "missing" | "missing_some" => {
                (format!("{op} {}", one_line(args)), Kind::Operation)
            }
            _ => (op.to_owned(), Kind::Operation),
        };
        let mut node = self.node(logic, label, kind, evaluated);
        node.op = Some(op.to_owned());
        match op {
            "var" => {
                node.children = list
                    .iter()
                    .skip(1)
                    .map(|d| self.build(d, evaluated))
                    .collect();
            }
            // Their arguments are names, not expressions.
            "val" | "exists" => {}
            "missing" | "missing_some" => {
                node.sentence = self.missing_sentence(op, &list, &node);
                return node;
            }
            "and" | "or" => {
                let mut going = evaluated;
                for arg in &list {
                    let child = self.build(arg, going);
                    // `and` goes on while truthy, `or` while falsy; an error stops both.
                    let stops = child.pass != Some(op == "and");
                    node.children.push(child);
                    if stops {
                        going = false;
                    }
                }
            }
            "if" | "?:" => {
                let mut going = evaluated;
                let mut i = 0;
                while i < list.len() {
                    if i + 1 < list.len() {
                        let cond = self.build(list[i], going);
                        let take = going && cond.pass == Some(true);
                        let stops = cond.pass != Some(false);
                        node.children.push(cond);
                        node.children.push(self.build(list[i + 1], take));
                        if stops {
                            going = false;
                        }
                        i += 2;
                    } else {
                        node.children.push(self.build(list[i], going));
                        i += 1;
                    }
                }
            }
            _ if (0..list.len()).any(|i| engine::item_scoped(op, i)) => {
                for (i, arg) in list.iter().enumerate() {
                    if engine::item_scoped(op, i) {
                        node.children.push(Node {
                            label: format!("{op} per item: {}", one_line(arg)),
                            op: None,
                            kind: Kind::ItemScope,
                            value: None,
                            pass: None,
                            evaluated,
                            error: None,
                            children: vec![],
                            sentence: None,
                            logic: (*arg).clone(),
                        });
                    } else {
                        node.children.push(self.build(arg, evaluated));
                    }
                }
                node.sentence = self.items_sentence(op, &list, &node);
                return node;
            }
            _ => node.children = list.iter().map(|a| self.build(a, evaluated)).collect(),
        }
        node.sentence = match (op, node.pass) {
            (_, None) => None,
            ("var", Some(_)) => Some(self.operand(&node).is_desc()),
            (_, Some(pass)) => self.comparison(op, &node.children, pass),
        };
        node
    }

    /// How a comparison names an operand node.
    fn operand(&self, node: &Node) -> Operand {
        // Only a path written out names a field; a computed one (`{"var": {"cat": …}}`)
        // is described by its value, which the tree holds.
        let written = |v: &Value| match v {
            Value::String(_) | Value::Number(_) => Some(path_text(v)),
            _ => None,
        };
        let field = match (&node.kind, node.logic.get("var")) {
            (Kind::Field, Some(args)) => match args {
                Value::Array(a) => a.first().and_then(written),
                other => written(other),
            },
            _ => None,
        };
        let missing = field.as_deref().is_some_and(|f| self.lookup(f).is_none());
        Operand {
            missing,
            default_used: missing && !node.children.is_empty(),
            literal: node.kind == Kind::Literal,
            text: short(&node.logic, false),
            value: node.value.clone(),
            field,
        }
    }

    /// The sentence of a comparison node (`op` on `args`) whose truthiness is `pass`.
    fn comparison(&self, op: &str, args: &[Node], pass: bool) -> Option<String> {
        let o = |i: usize| self.operand(&args[i]);
        match (op, args.len()) {
            ("==" | "===", 2) => Some(equality(false, o(0), o(1), pass)),
            ("!=" | "!==", 2) => Some(equality(true, o(0), o(1), pass)),
            ("<" | "<=" | ">" | ">=", 2) => Some(relational(op, o(0), o(1), pass)),
            ("<" | "<=", 3) => Some(between(op == "<=", o(0), o(1), o(2), pass)),
            ("in", 2) => Some(membership(false, o(0), o(1), pass)),
            ("not in", 2) => Some(membership(true, o(0), o(1), pass)),
            ("!" | "!!", 1) => {
                let child = &args[0];
                // `!` of a comparison is the opposite comparison; `!!` the same one.
                if let Some(inner) = child.op.as_deref().filter(|o| negated(o).is_some()) {
                    let inner = if op == "!" {
                        negated(inner).unwrap_or(inner)
                    } else {
                        inner
                    };
                    return self.comparison(inner, &child.children, pass);
                }
                let x = self.operand(child);
                let f = x.field.as_ref()?;
                Some(match (op, pass) {
                    (_, true) => x.is_desc(),
                    ("!", false) => format!("{}, expected false or empty", x.is_desc()),
                    (_, false) if x.missing => format!("{f} is missing (null), expected a value"),
                    (_, false) if x.value == Some(Value::Bool(false)) => {
                        format!("{}, expected true", x.is_desc())
                    }
                    (_, false) => format!("{}, expected a value", x.is_desc()),
                })
            }
            _ => None,
        }
    }

    /// `missing` / `missing_some`: which of the named fields are missing (the engine's
    /// answer, which is the node's value), or that enough are present.
    fn missing_sentence(&self, op: &str, list: &[&Value], node: &Node) -> Option<String> {
        let missing: Vec<String> = node
            .value
            .as_ref()?
            .as_array()?
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<_>>()?;
        let names_in = |v: &Value| -> Option<Vec<String>> {
            match v {
                Value::Array(a) => a.iter().map(|n| n.as_str().map(str::to_owned)).collect(),
                Value::String(n) => Some(vec![n.clone()]),
                _ => None,
            }
        };
        let is_are = |n: usize| if n == 1 { "is" } else { "are" };
        if op == "missing" {
            let names: Vec<String> = list
                .iter()
                .map(|v| names_in(v))
                .collect::<Option<Vec<_>>>()?
                .concat();
            return Some(if missing.is_empty() {
                format!("{} {} present", and_list(&names), is_are(names.len()))
            } else {
                format!("{} {} missing", and_list(&missing), is_are(missing.len()))
            });
        }
        let need = list.first()?.as_f64()?;
        let names = names_in(list.get(1)?)?;
        let of = names.join(", ");
        if missing.is_empty() {
            return Some(format!(
                "at least {need} of {of} {} present",
                is_are(need as usize)
            ));
        }
        let present: Vec<&String> = names.iter().filter(|n| !missing.contains(n)).collect();
        Some(if present.is_empty() {
            format!("needs {need} of {of}; none is present")
        } else {
            let present: Vec<String> = present.into_iter().cloned().collect();
            format!(
                "needs {need} of {of}; only {} {} present",
                and_list(&present),
                is_are(present.len())
            )
        })
    }

    /// Names the items that failed an `all` / `some` / `none`, when the body can be
    /// evaluated on an item alone and agrees with the engine.
    fn items_sentence(&self, op: &str, list: &[&Value], node: &Node) -> Option<String> {
        if !matches!(op, "all" | "some" | "none") || list.len() != 2 {
            return None;
        }
        let array = node.children.first()?;
        let items = array.value.as_ref()?.as_array()?;
        let body = list[1];
        if reads_outer_scope(body) {
            return None;
        }
        let each: Vec<bool> = items
            .iter()
            .map(|item| {
                engine::apply(&json!({ "!!": [body] }), item)
                    .ok()?
                    .as_bool()
            })
            .collect::<Option<_>>()?;
        let any = each.iter().any(|&b| b);
        let every = !each.is_empty() && each.iter().all(|&b| b);
        let pass = node.pass?;
        let agrees = match op {
            "all" => every == pass,
            "some" => any == pass,
            _ => any != pass,
        };
        if !agrees {
            return None;
        }
        let what = self.operand(array).valued();
        let body = short(body, true);
        let listed = |want: bool| {
            let picked: Vec<String> = items
                .iter()
                .zip(&each)
                .filter(|(_, b)| **b == want)
                .map(|(i, _)| fmt_value(i))
                .collect();
            list_text(&picked)
        };
        Some(match (op, pass) {
            (_, false) if items.is_empty() && op != "none" => format!("{what} is empty"),
            ("all", false) => format!("items of {what} failing {body}: {}", listed(false)),
            ("all", true) => format!("every item of {what} passes {body}"),
            ("some", false) => format!("no item of {what} passes {body}"),
            ("some", true) => format!("items of {what} passing {body}: {}", listed(true)),
            (_, false) => format!("items of {what} passing {body}: {}", listed(true)),
            (_, true) => format!("no item of {what} passes {body}"),
        })
    }
}

/// `==` / `!=` (`neq`) sentences; fields first, and both fields named.
fn equality(neq: bool, a: Operand, b: Operand, pass: bool) -> String {
    let (a, b) = if a.field.is_none() && b.field.is_some() {
        (b, a)
    } else {
        (a, b)
    };
    let equal = pass != neq;
    if a.field.is_some() && b.field.is_some() || a.field.is_none() {
        let base = if equal {
            format!("{} equals {}", a.valued(), b.valued())
        } else {
            format!("{} differs from {}", a.valued(), b.valued())
        };
        return if neq && !pass {
            format!("{base}, expected them to differ")
        } else {
            base
        };
    }
    match (neq, pass) {
        (false, true) => a.is_desc(),
        (false, false) if b.literal && b.value == Some(Value::Null) => {
            format!("{}, not null", a.is_desc())
        }
        (false, false) => format!("{}, expected {}", a.is_desc(), b.valued()),
        (true, true) => format!("{}, not {}", a.is_desc(), b.valued()),
        (true, false) if b.value == Some(Value::Null) => {
            format!("{}, expected a value", a.is_desc())
        }
        (true, false) => format!("{}, expected anything but {}", a.is_desc(), b.valued()),
    }
}

/// `<` `<=` `>` `>=` with two operands (a field on the left when there is one).
fn relational(op: &str, a: Operand, b: Operand, pass: bool) -> String {
    let (op, a, b) = if a.field.is_none() && b.field.is_some() {
        (flipped(op), b, a)
    } else {
        (op, a, b)
    };
    let (l, r) = (a.valued(), b.valued());
    match (op, pass) {
        (">=", true) => format!("{l} meets the required {r}"),
        (">=", false) => format!("{l} is below the required {r}"),
        (">", true) => format!("{l} is above {r}"),
        (">", false) => format!("{l} is not above {r}"),
        ("<=", true) => format!("{l} is within the limit {r}"),
        ("<=", false) => format!("{l} exceeds the limit {r}"),
        ("<", true) => format!("{l} is below {r}"),
        (_, _) => format!("{l} is not below {r}"),
    }
}

/// `{"<": [a, b, c]}` / `{"<=": …}`: b between a and c.
fn between(inclusive: bool, a: Operand, b: Operand, c: Operand, pass: bool) -> String {
    let (lo, x, hi) = (a.valued(), b.valued(), c.valued());
    let kind = if inclusive { "" } else { " (exclusive)" };
    if pass {
        return format!("{x} is between {lo} and {hi}{kind}");
    }
    let num = |o: &Operand| o.value.as_ref().and_then(Value::as_f64);
    match (num(&a), num(&b), num(&c)) {
        (Some(l), Some(v), Some(_)) => {
            let low_ok = if inclusive { l <= v } else { l < v };
            match (low_ok, inclusive) {
                (false, true) => format!("{x} is below the lower bound {lo}"),
                (false, false) => format!("{x} is not above the lower bound {lo}"),
                (true, true) => format!("{x} is above the upper bound {hi}"),
                (true, false) => format!("{x} is not below the upper bound {hi}"),
            }
        }
        _ => format!("{x} is not between {lo} and {hi}{kind}"),
    }
}

/// `in` (and `!in`, `negated`): a needle in an array, or a substring.
fn membership(negated: bool, needle: Operand, hay: Operand, pass: bool) -> String {
    let is_in = pass != negated;
    let base = match &hay.value {
        Some(Value::Array(_)) if hay.field.is_some() && needle.field.is_none() => {
            if is_in {
                format!("{} contains {}", hay.valued(), needle.valued())
            } else {
                format!("{} does not contain {}", hay.valued(), needle.valued())
            }
        }
        Some(Value::Array(_)) => {
            if is_in {
                format!("{} is one of {}", needle.named(), hay.valued())
            } else {
                format!("{} is not one of {}", needle.named(), hay.valued())
            }
        }
        Some(Value::String(_)) => {
            if is_in {
                format!("{} occurs in {}", needle.valued(), hay.valued())
            } else {
                format!("{} does not occur in {}", needle.valued(), hay.valued())
            }
        }
        _ if is_in => format!("{} is in {}", needle.valued(), hay.valued()),
        _ => format!("{} is not in {}", needle.valued(), hay.valued()),
    };
    if negated && !pass {
        format!("{base}, which is excluded")
    } else {
        base
    }
}

/// Whether a value is an operation (or an array holding one).
fn is_operation(v: &Value) -> bool {
    match v {
        Value::Object(_) => true,
        Value::Array(items) => items.iter().any(is_operation),
        _ => false,
    }
}

/// Whether an item-scope body may read beyond its item (then it cannot be evaluated
/// on an item alone).
fn reads_outer_scope(body: &Value) -> bool {
    match body {
        Value::Object(map) => map.iter().any(|(k, v)| {
            matches!(k.as_str(), "val" | "exists" | "reduce" | "map" | "filter")
                || matches!(k.as_str(), "all" | "some" | "none")
                || reads_outer_scope(v)
        }),
        Value::Array(items) => items.iter().any(reads_outer_scope),
        _ => false,
    }
}

/// The fields of the pair a rule reads (`source.*` / `target.*`), in first-read order.
fn collect_fields(logic: &Value, in_item: bool, out: &mut Vec<String>) {
    fn add(p: String, in_item: bool, out: &mut Vec<String>) {
        let side = p.split('.').next().unwrap_or_default();
        if !in_item && matches!(side, "source" | "target") && !out.contains(&p) {
            out.push(p);
        }
    }
    match logic {
        Value::Array(items) => items.iter().for_each(|v| collect_fields(v, in_item, out)),
        Value::Object(map) if map.len() == 1 => {
            let (op, args) = map.iter().next().expect("one entry");
            let list: Vec<&Value> = match args {
                Value::Array(a) => a.iter().collect(),
                other => vec![other],
            };
            match op.as_str() {
                "var" => {
                    if let Some(Value::String(p)) = list.first() {
                        add(p.clone(), in_item, out);
                    }
                    list.iter()
                        .skip(1)
                        .for_each(|v| collect_fields(v, in_item, out));
                }
                "val" | "exists" => {
                    let segments: Option<Vec<&str>> = list.iter().map(|v| v.as_str()).collect();
                    if let Some(s) = segments.filter(|s| !s.is_empty()) {
                        add(s.join("."), in_item, out);
                    }
                }
                "missing" | "missing_some" => {
                    let names: Vec<&Value> = match (op.as_str(), list.get(1)) {
                        ("missing_some", Some(Value::Array(names))) => names.iter().collect(),
                        ("missing_some", _) => vec![],
                        _ => list.clone(),
                    };
                    for name in names {
                        match name {
                            Value::String(p) => add(p.clone(), in_item, out),
                            other => collect_fields(other, in_item, out),
                        }
                    }
                }
                op => list.iter().enumerate().for_each(|(i, v)| {
                    collect_fields(v, in_item || engine::item_scoped(op, i), out)
                }),
            }
        }
        Value::Object(map) => map.values().for_each(|v| collect_fields(v, in_item, out)),
        _ => {}
    }
}

/// A `var` path as text.
fn path_text(p: &Value) -> String {
    match p {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => one_line(other),
    }
}

/// Compact JSON.
fn one_line(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// An expression as sentences show it, infix where it reads naturally
/// (`source.annualIncome * target.incomeMultiple`), shortened. Inside an item scope
/// (`item`) `var` names the current item.
fn short(v: &Value, item: bool) -> String {
    let text = expr_text(v, item);
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(59).collect::<String>())
    } else {
        text
    }
}

fn expr_text(v: &Value, item: bool) -> String {
    const INFIX: &[&str] = &[
        "+", "-", "*", "/", "%", "==", "!=", "===", "!==", "<", "<=", ">", ">=", "and", "or", "in",
    ];
    let arg = |a: &Value| {
        let text = expr_text(a, item);
        match a.as_object().and_then(|m| m.keys().next()) {
            Some(op)
                if a.as_object().is_some_and(|m| m.len() == 1) && INFIX.contains(&op.as_str()) =>
            {
                format!("({text})")
            }
            _ => text,
        }
    };
    match v {
        Value::Object(map) if map.len() == 1 => {
            let (op, args) = map.iter().next().expect("one entry");
            let list: Vec<&Value> = match args {
                Value::Array(a) => a.iter().collect(),
                other => vec![other],
            };
            match op.as_str() {
                "var" => {
                    let path = list.first().map_or(String::new(), |p| path_text(p));
                    match (item, path.is_empty()) {
                        (true, true) => "item".into(),
                        (true, false) => format!("item.{path}"),
                        (false, _) => path,
                    }
                }
                "!" | "!!" if list.len() == 1 => format!("{op}{}", arg(list[0])),
                op if INFIX.contains(&op) && list.len() >= 2 => list
                    .iter()
                    .map(|a| arg(a))
                    .collect::<Vec<_>>()
                    .join(&format!(" {op} ")),
                op => format!(
                    "{op}({})",
                    list.iter()
                        .map(|a| expr_text(a, item))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }
        Value::Array(items) if items.iter().any(is_operation) => format!(
            "[{}]",
            items
                .iter()
                .map(|a| expr_text(a, item))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => fmt_value(other),
    }
}

/// A value as sentences show it: `'meta'`, `8192`, `['pro', 'max']`, `null`.
pub fn fmt_value(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{s}'"),
        Value::Array(items) => {
            let shown: Vec<String> = items.iter().map(fmt_value).collect();
            format!("[{}]", list_text(&shown))
        }
        Value::Object(_) => {
            let text = one_line(v);
            if text.chars().count() > 60 {
                format!("{}…", text.chars().take(59).collect::<String>())
            } else {
                text
            }
        }
        other => other.to_string(),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// At most eight items, comma-separated.
fn list_text(items: &[String]) -> String {
    if items.len() > 8 {
        format!("{}, … ({} in all)", items[..8].join(", "), items.len())
    } else {
        items.join(", ")
    }
}

/// Why a target got its verdict for a selection: the override and its note, the
/// required rules that failed, or the score against the thresholds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetWhy {
    pub verdict: Verdict,
    pub score: f64,
    pub reason: Reason,
    /// Weight of the scored rules that pass, and of all scored rules (the optional
    /// ones; every rule under `IGNORE_REQUIRED`).
    pub passed_weight: f64,
    pub total_weight: f64,
    /// Indexes of the required rules that fail, in page order.
    pub failed_required: Vec<usize>,
    /// The pair's override: its value and note.
    pub override_value: Option<bool>,
    pub override_note: Option<String>,
    /// The whole of it in words: `partial · score 0.60 = 6 / 10 optional weight
    /// (full ≥ 1, partial ≥ 0.4)`.
    pub text: String,
}

/// The override of (source row `source`, target row `target`), if any.
pub fn override_of(page: &Page, source: usize, target: usize) -> Option<&Override> {
    let sh = key_hash(&page.source.row_key(page.source.rows.get(source)?));
    let th = key_hash(&page.target.row_key(page.target.rows.get(target)?));
    page.overrides.iter().find(|o| {
        o.source_hash().as_deref() == Some(&sh) && o.target_hash().as_deref() == Some(&th)
    })
}

/// Why `target` got its verdict in `eval` (the evaluation of one selection of `page`).
pub fn target_why(page: &Page, eval: &SelectionEval, target: usize) -> TargetWhy {
    let d = &eval.devices[target];
    let p = &page.device_policy;
    let over = override_of(page, eval.selection, target);
    let failed_required: Vec<usize> = page
        .rules
        .iter()
        .zip(&eval.columns)
        .enumerate()
        .filter(|(_, (r, c))| r.required && c.outcome[target].counted() == Some(false))
        .map(|(i, _)| i)
        .collect();
    let weights = RuleWeight::of_rules(&page.rules);
    let scoring = Scoring::new(p, &weights);
    let mut tally = Tally::default();
    for (&w, c) in scoring.rules.iter().zip(&eval.columns) {
        tally.add(p, w, c.outcome[target].counted());
    }
    let (passed, total) = (
        scoring.weight_text(tally.passed_weight),
        scoring.weight_text(tally.total_weight),
    );
    let scored = match p.required_mode {
        RequiredMode::IgnoreRequired => "rule weight",
        RequiredMode::AnyRequiredFailIs0 | RequiredMode::AnyRequiredFailCapsAtPartial => {
            "optional weight"
        }
    };
    let score = if tally.total_weight > 0.0 {
        format!(
            "score {:.2} = {passed} / {total} {scored} (full ≥ {}, partial ≥ {})",
            d.score, p.full_threshold, p.partial_threshold
        )
    } else {
        format!(
            "score {:.2}: no {scored} to score (full ≥ {}, partial ≥ {})",
            d.score, p.full_threshold, p.partial_threshold
        )
    };
    let by_rules = |reason: Reason| match reason {
        Reason::RequiredFail => {
            let names: Vec<&str> = failed_required
                .iter()
                .map(|&i| page.rules[i].name.as_str())
                .collect();
            let capped = match p.required_mode {
                RequiredMode::AnyRequiredFailCapsAtPartial => " (capped at partial)",
                RequiredMode::AnyRequiredFailIs0 | RequiredMode::IgnoreRequired => "",
            };
            format!(
                "required rule failed{capped}: {} · {score}",
                names.join(", ")
            )
        }
        reason => format!("{} · {score}", reason.as_str()),
    };
    let text = match over {
        Some(o) => {
            // The rules are still evaluated: say what they alone would give.
            let alone = device_verdict(&scoring, &tally, None);
            format!(
                "override: forced {} ({}){}; without the override: {}, {}",
                if o.value {
                    "compatible"
                } else {
                    "incompatible"
                },
                d.verdict,
                o.note
                    .as_ref()
                    .map(|n| format!(" — {n}"))
                    .unwrap_or_default(),
                alone.verdict,
                by_rules(alone.reason)
            )
        }
        None => by_rules(d.reason),
    };
    TargetWhy {
        verdict: d.verdict,
        score: d.score,
        reason: d.reason,
        passed_weight: scoring.weight_of(tally.passed_weight),
        total_weight: scoring.weight_of(tally.total_weight),
        failed_required,
        override_value: over.map(|o| o.value),
        override_note: over.and_then(|o| o.note.clone()),
        text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Page;

    fn rule(logic: Value) -> Rule {
        Rule {
            expression: None,
            warning: None,
            applies_when: None,
            family: None,
            id: "r".into(),
            name: "R".into(),
            required: false,
            weight: 1.0,
            category: "General".into(),
            description: None,
            logic,
        }
    }

    fn ex(logic: Value, source: Value, target: Value) -> Explanation {
        let e = explain(&rule(logic), &source, &target);
        assert_values_match_engine(&e.tree, &source, &target);
        e
    }

    /// Every node's value is what the engine gives for that sub-expression.
    fn assert_values_match_engine(tree: &Node, source: &Value, target: &Value) {
        let data = json!({"source": source, "target": target});
        for (_, n) in tree.walk() {
            if n.kind == Kind::ItemScope {
                assert_eq!(n.value, None);
                continue;
            }
            let expected = engine::apply(&n.logic, &data);
            assert_eq!(n.value, expected.clone().ok(), "value of {}", n.logic);
            assert_eq!(n.error.is_some(), expected.is_err(), "error of {}", n.logic);
        }
    }

    fn sentence_of<'a>(e: &'a Explanation, label: &str) -> &'a str {
        e.tree
            .walk()
            .into_iter()
            .find(|(_, n)| n.label == label)
            .and_then(|(_, n)| n.sentence.as_deref())
            .unwrap_or_else(|| panic!("no sentence on `{label}` in {:#?}", e.tree))
    }

    #[test]
    fn equality_names_the_value_and_the_expectation() {
        let e = ex(
            json!({"==": [{"var": "target.provider"}, "openai"]}),
            json!({}),
            json!({"provider": "meta"}),
        );
        assert!(!e.passed);
        assert_eq!(e.sentence, "target.provider is 'meta', expected 'openai'");
        assert_eq!(e.fields, vec![("target.provider".into(), json!("meta"))]);
        // The literal on the left reads the same.
        let e = ex(
            json!({"===": ["openai", {"var": "target.provider"}]}),
            json!({}),
            json!({"provider": "openai"}),
        );
        assert!(e.passed);
        assert_eq!(e.sentence, "target.provider is 'openai'");
        let e = ex(
            json!({"!=": [{"var": "target.provider"}, "meta"]}),
            json!({}),
            json!({"provider": "meta"}),
        );
        assert_eq!(
            e.sentence,
            "target.provider is 'meta', expected anything but 'meta'"
        );
        let e = ex(
            json!({"!==": [{"var": "target.provider"}, "meta"]}),
            json!({}),
            json!({"provider": "openai"}),
        );
        assert_eq!(e.sentence, "target.provider is 'openai', not 'meta'");
    }

    #[test]
    fn field_to_field_comparisons_name_both_sides() {
        let logic = json!({"==": [{"var": "source.country"}, {"var": "target.country"}]});
        let e = ex(
            logic.clone(),
            json!({"country": "CA"}),
            json!({"country": "US"}),
        );
        assert_eq!(
            e.sentence,
            "source.country ('CA') differs from target.country ('US')"
        );
        let e = ex(logic, json!({"country": "US"}), json!({"country": "US"}));
        assert_eq!(
            e.sentence,
            "source.country ('US') equals target.country ('US')"
        );
        let e = ex(
            json!({">=": [{"var": "target.contextWindow"}, {"var": "source.minContextWindow"}]}),
            json!({"minContextWindow": 32000}),
            json!({"contextWindow": 8192}),
        );
        assert_eq!(
            e.sentence,
            "target.contextWindow (8192) is below the required source.minContextWindow (32000)"
        );
        assert_eq!(
            e.fields,
            vec![
                ("target.contextWindow".into(), json!(8192)),
                ("source.minContextWindow".into(), json!(32000))
            ]
        );
    }

    #[test]
    fn relational_and_between_sentences() {
        let t = json!({"contextWindow": 8192});
        let e = ex(
            json!({">=": [{"var": "target.contextWindow"}, 32000]}),
            json!({}),
            t.clone(),
        );
        assert_eq!(
            e.sentence,
            "target.contextWindow (8192) is below the required 32000"
        );
        // A literal on the left is turned around.
        let e = ex(
            json!({"<": [32000, {"var": "target.contextWindow"}]}),
            json!({}),
            t.clone(),
        );
        assert_eq!(e.sentence, "target.contextWindow (8192) is not above 32000");
        let e = ex(
            json!({"<=": [{"var": "target.contextWindow"}, 4096]}),
            json!({}),
            t.clone(),
        );
        assert_eq!(
            e.sentence,
            "target.contextWindow (8192) exceeds the limit 4096"
        );
        let e = ex(
            json!({">": [{"var": "target.contextWindow"}, 4096]}),
            json!({}),
            t.clone(),
        );
        assert!(e.passed);
        assert_eq!(e.sentence, "target.contextWindow (8192) is above 4096");
        // Between, inclusive and exclusive.
        let e = ex(
            json!({"<=": [1000, {"var": "target.contextWindow"}, 4096]}),
            json!({}),
            t.clone(),
        );
        assert_eq!(
            e.sentence,
            "target.contextWindow (8192) is above the upper bound 4096"
        );
        let e = ex(
            json!({"<": [8192, {"var": "target.contextWindow"}, 10000]}),
            json!({}),
            t.clone(),
        );
        assert_eq!(
            e.sentence,
            "target.contextWindow (8192) is not above the lower bound 8192"
        );
        let e = ex(
            json!({"<=": [8192, {"var": "target.contextWindow"}, 10000]}),
            json!({}),
            t,
        );
        assert!(e.passed);
        assert_eq!(
            e.sentence,
            "target.contextWindow (8192) is between 8192 and 10000"
        );
    }

    #[test]
    fn membership_sentences() {
        let e = ex(
            json!({"in": [{"var": "target.tier"}, ["pro", "max"]]}),
            json!({}),
            json!({"tier": "free"}),
        );
        assert_eq!(
            e.sentence,
            "target.tier 'free' is not one of ['pro', 'max']"
        );
        let e = ex(
            json!({"in": ["vision", {"var": "target.tags"}]}),
            json!({}),
            json!({"tags": ["chat", "tools"]}),
        );
        assert_eq!(
            e.sentence,
            "target.tags (['chat', 'tools']) does not contain 'vision'"
        );
        let e = ex(
            json!({"in": ["pro", {"var": "target.name"}]}),
            json!({}),
            json!({"name": "gemini-pro"}),
        );
        assert!(e.passed);
        assert_eq!(e.sentence, "'pro' occurs in target.name ('gemini-pro')");
        // `!in` reads as the opposite.
        let e = ex(
            json!({"!": {"in": [{"var": "target.tier"}, ["free"]]}}),
            json!({}),
            json!({"tier": "free"}),
        );
        assert_eq!(
            e.sentence,
            "target.tier 'free' is one of ['free'], which is excluded"
        );
    }

    #[test]
    fn negation_truthiness_missing_data_and_defaults() {
        let e = ex(
            json!({"!": {"var": "target.requiresCollateral"}}),
            json!({}),
            json!({"requiresCollateral": true}),
        );
        assert_eq!(
            e.sentence,
            "target.requiresCollateral is true, expected false or empty"
        );
        let e = ex(
            json!({"!!": [{"var": "target.supportsVision"}]}),
            json!({}),
            json!({"supportsVision": false}),
        );
        assert_eq!(e.sentence, "target.supportsVision is false, expected true");
        let e = ex(
            json!({"!!": [{"var": "source.maxLatencyMs"}]}),
            json!({}),
            json!({}),
        );
        assert_eq!(
            e.sentence,
            "source.maxLatencyMs is missing (null), expected a value"
        );
        assert_eq!(e.fields, vec![("source.maxLatencyMs".into(), Value::Null)]);
        assert_eq!(e.missing, vec!["source.maxLatencyMs".to_owned()]);
        // `!` of a comparison is the opposite comparison.
        let e = ex(
            json!({"!": [{"==": [{"var": "target.provider"}, "meta"]}]}),
            json!({}),
            json!({"provider": "meta"}),
        );
        assert_eq!(
            e.sentence,
            "target.provider is 'meta', expected anything but 'meta'"
        );
        // Missing data compared with null.
        let e = ex(
            json!({"==": [{"var": "source.maxLatencyMs"}, null]}),
            json!({}),
            json!({}),
        );
        assert!(e.passed);
        assert_eq!(e.sentence, "source.maxLatencyMs is missing (null)");
        // Explicit null is not missing.
        let e = ex(
            json!({"==": [{"var": "source.requiredProvider"}, null]}),
            json!({"requiredProvider": null}),
            json!({}),
        );
        assert_eq!(e.sentence, "source.requiredProvider is null");
        assert!(e.missing.is_empty());
        // A var with a default.
        let e = ex(
            json!({">=": [{"var": ["target.contextWindow", 0]}, 1000]}),
            json!({}),
            json!({}),
        );
        assert_eq!(
            e.sentence,
            "target.contextWindow (missing, default 0) is below the required 1000"
        );
        assert_eq!(
            sentence_of(&e, "var target.contextWindow"),
            "target.contextWindow is missing, so the default 0 applies"
        );
        // A bare var as the rule.
        let e = ex(
            json!({"var": "target.supportsVision"}),
            json!({}),
            json!({"supportsVision": false}),
        );
        assert_eq!(e.sentence, "target.supportsVision is false");
    }

    #[test]
    fn short_circuits_are_marked_and_every_failing_condition_reported() {
        let logic = json!({"or": [
            {"==": [{"var": "source.needsStreaming"}, false]},
            {"and": [
                {"==": [{"var": "source.needsStreaming"}, true]},
                {"==": [{"var": "target.supportsStreaming"}, true]}]}]});
        // Source does not need streaming: `or` stops at its first child.
        let e = ex(
            logic.clone(),
            json!({"needsStreaming": false}),
            json!({"supportsStreaming": false}),
        );
        assert!(e.passed);
        // The branch that passed, then the conditions of the other that failed.
        assert_eq!(
            e.sentence,
            "source.needsStreaming is false (failing: source.needsStreaming is false, expected true; target.supportsStreaming is false, expected true)"
        );
        let and = &e.tree.children[1];
        assert!(e.tree.children[0].evaluated);
        assert!(!and.evaluated && and.children.iter().all(|c| !c.evaluated));
        // Not evaluated, but computed on the side.
        assert_eq!(and.value, Some(json!(false)));
        assert_eq!(and.children[1].value, Some(json!(false)));
        // Needed and missing: every failing comparison is reported.
        let e = ex(
            logic,
            json!({"needsStreaming": true}),
            json!({"supportsStreaming": false}),
        );
        assert!(!e.passed);
        assert_eq!(
            e.sentence,
            "source.needsStreaming is true, expected false; \
             target.supportsStreaming is false, expected true"
        );
        assert!(e.tree.walk().iter().all(|(_, n)| n.evaluated));
        // `and` stops at the first falsy child, yet later failures are reported.
        let e = ex(
            json!({"and": [
                {">=": [{"var": "target.contextWindow"}, 32000]},
                {"==": [{"var": "target.provider"}, "openai"]}]}),
            json!({}),
            json!({"contextWindow": 8192, "provider": "meta"}),
        );
        assert!(!e.tree.children[1].evaluated);
        assert_eq!(
            e.sentence,
            "target.contextWindow (8192) is below the required 32000; \
             target.provider is 'meta', expected 'openai'"
        );
        // `if` evaluates one branch.
        let e = ex(
            json!({"if": [
                {"==": [{"var": "target.tier"}, "free"]}, false,
                {"==": [{"var": "target.tier"}, "pro"]}, true,
                false]}),
            json!({}),
            json!({"tier": "free"}),
        );
        let evaluated: Vec<bool> = e.tree.children.iter().map(|c| c.evaluated).collect();
        assert_eq!(evaluated, vec![true, true, false, false, false]);
        assert_eq!(e.sentence, "target.tier is 'free'");
        let e = ex(
            json!({"if": [{"==": [{"var": "target.tier"}, "free"]}, false, true]}),
            json!({}),
            json!({"tier": "pro"}),
        );
        let evaluated: Vec<bool> = e.tree.children.iter().map(|c| c.evaluated).collect();
        assert_eq!(evaluated, vec![true, false, true]);
        assert!(e.passed);
    }

    #[test]
    fn item_scopes_are_one_node_and_name_the_failing_items() {
        let e = ex(
            json!({"all": [{"var": "target.ports"}, {">": [{"var": ""}, 1024]}]}),
            json!({}),
            json!({"ports": [8080, 80, 443]}),
        );
        assert!(!e.passed);
        assert_eq!(e.tree.children[1].kind, Kind::ItemScope);
        assert_eq!(
            e.sentence,
            "items of target.ports ([8080, 80, 443]) failing item > 1024: 80, 443"
        );
        assert_eq!(
            e.fields,
            vec![("target.ports".into(), json!([8080, 80, 443]))]
        );
        let e = ex(
            json!({"some": [{"var": "target.tags"}, {"==": [{"var": ""}, "vision"]}]}),
            json!({}),
            json!({"tags": ["chat"]}),
        );
        assert_eq!(
            e.sentence,
            "no item of target.tags (['chat']) passes item == 'vision'"
        );
        let e = ex(
            json!({"none": [{"var": "target.tags"}, {"==": [{"var": ""}, "beta"]}]}),
            json!({}),
            json!({"tags": ["beta", "chat"]}),
        );
        assert!(e.sentence.ends_with(": 'beta'"), "{}", e.sentence);
        ex(
            json!({"reduce": [{"var": "target.ports"}, {"+": [{"var": "current"}, {"var": "accumulator"}]}, 0]}),
            json!({}),
            json!({"ports": [1, 2]}),
        );
    }

    #[test]
    fn errors_and_arithmetic_are_explained() {
        let e = ex(
            json!({"<=": [{"var": "source.requestedAmount"},
                          {"*": [{"var": "source.annualIncome"}, {"var": "target.incomeMultiple"}]}]}),
            json!({"requestedAmount": 500000, "annualIncome": 50000}),
            json!({"incomeMultiple": 4}),
        );
        assert_eq!(
            e.sentence,
            "source.requestedAmount (500000) exceeds the limit \
             source.annualIncome * target.incomeMultiple (200000)"
        );
        let e = ex(json!({"throw": "nope"}), json!({}), json!({}));
        assert!(!e.passed && e.error.is_some());
        assert!(e.sentence.starts_with("error: "), "{}", e.sentence);
        let e = ex(json!(true), json!({}), json!({}));
        assert!(e.passed);
        assert_eq!(e.tree.kind, Kind::Literal);
    }

    #[test]
    fn sample_pages_explain_every_pair_consistently_with_the_engine() {
        for text in [
            include_str!("../../../sample-pages/llm-chat-clients.json"),
            include_str!("../../../sample-pages/loan-eligibility.json"),
            include_str!("../../../sample-pages/provider-capabilities.json"),
        ] {
            let page: Page = serde_json::from_str(text).unwrap();
            for r in &page.rules {
                let compiled = engine::compile(&r.logic).unwrap();
                for s in page.source.rows.iter().take(4) {
                    for t in page.target.rows.iter().take(6) {
                        let (s, t) = (Value::Object(s.clone()), Value::Object(t.clone()));
                        let e = ex(r.logic.clone(), s.clone(), t.clone());
                        let outcome = engine::evaluate_rows(&compiled.logic, &s, &t);
                        assert_eq!(e.passed, outcome.passed(), "{}", r.id);
                        assert!(!e.sentence.is_empty());
                        if !e.passed {
                            assert!(!e.sentence.contains("falsy"), "{}: {}", r.id, e.sentence);
                        }
                    }
                }
            }
        }
    }
}

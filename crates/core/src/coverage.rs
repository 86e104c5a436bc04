//! Coverage of rules by tests (`rulebench test PAGE --coverage`): over the pairs the
//! page's assertions look at (every target of each source they select), which
//! conditions of each rule were evaluated, took both outcomes, and were decisive; then
//! mutation coverage — small mutants of each rule, and whether some assertion notices.
//!
//! **Conditions.** Each comparison or predicate of a rule, and each branch of `and`,
//! `or`, `if` and `!`: every node of the rule's logic that is an operation other than
//! `var` and arithmetic, and every argument of `and`/`or`/`if`/`!`/`!!`. Per condition and
//! pair: *evaluated* (reached: an `and` stops at its first falsy argument, an `or` at its
//! first truthy one, an `if` takes one branch), its *outcome* (truthy or falsy), and
//! *decisive* (negating the condition changes the rule's outcome on the pair). All three
//! come from columns the matrix computes: one rule per condition for its truthiness, one
//! per condition for the rule with that condition negated.
//!
//! **Mutants.** Per rule: each comparison flipped (`<` → `>=`, `==` → `!=`, …), each
//! bound moved (`<` ↔ `<=`, `>` ↔ `>=`), each constant compared with shifted to either
//! side of its boundary (`>= 8` → `>= 9`, `>= 7`), each argument of an `and`/`or`
//! dropped, and the rule negated. A mutant is *killed* when an assertion that passes on the page fails on
//! the page with the mutant; it *survives* otherwise, listed with a pair of the page
//! where it changes the rule's outcome (and the verdict, if it does) — the pair to pin;
//! it is *equivalent here* when it changes no outcome on any pair of the current rows
//! (left out of the score).

use serde::Serialize;

use crate::expect::RuleExpect;
use serde_json::{Value, json};

use crate::assertions::{self, Limits};
use crate::diag::{Code, Diagnostic};
use crate::matrix::Matrix;
use crate::model::{Page, Rule};
use crate::result::{Names, SelectionResult};

/// The most mutants made of one rule.
pub const MAX_MUTANTS_PER_RULE: usize = 24;
/// The most sources searched for a pair where a surviving mutant changes an outcome.
pub const MAX_SOURCES_SEARCHED: usize = 10_000;

const COMPARISONS: [&str; 8] = ["==", "!=", "===", "!==", "<", "<=", ">", ">="];
const BRANCHING: [&str; 6] = ["and", "or", "if", "?:", "!", "!!"];

/// One condition of a rule and how the pairs looked at exercised it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionCoverage {
    /// Where it is in the rule's logic (a JSON pointer: `/and/1`; `` for the whole).
    pub pointer: String,
    /// The condition as infix where it has one, else as JSON.
    pub text: String,
    /// Pairs (where the rule applies) that reached it.
    pub evaluated: usize,
    /// Of those, where it was truthy and where falsy.
    pub truthy: usize,
    pub falsy: usize,
    /// Pairs where negating it changes the rule's outcome.
    pub decisive: usize,
}

impl ConditionCoverage {
    /// Took both outcomes and decided at least one pair.
    pub fn covered(&self) -> bool {
        self.truthy > 0 && self.falsy > 0 && self.decisive > 0
    }

    /// What keeps it from being covered, in words (`None`: covered).
    pub fn gap(&self) -> Option<&'static str> {
        if self.evaluated == 0 {
            Some("never evaluated")
        } else if self.falsy == 0 {
            Some("never false")
        } else if self.truthy == 0 {
            Some("never true")
        } else if self.decisive == 0 {
            Some("never decisive")
        } else {
            None
        }
    }
}

/// One rule's conditions.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleCoverage {
    pub rule: String,
    /// Pairs looked at where the rule applies, and where it passes.
    pub applies: usize,
    pub passes: usize,
    pub conditions: Vec<ConditionCoverage>,
}

/// What happened to a mutant.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "status")]
pub enum Fate {
    /// An assertion that passes on the page fails with the mutant.
    Killed {
        #[serde(rename = "assertionId")]
        assertion_id: String,
    },
    /// No assertion notices; on this pair the mutant changes the rule's outcome (and
    /// the verdict from `verdict` to `mutant_verdict`, when it does).
    Survived {
        source: String,
        target: String,
        outcome: &'static str,
        #[serde(rename = "mutantOutcome")]
        mutant_outcome: &'static str,
        verdict: u8,
        #[serde(rename = "mutantVerdict")]
        mutant_verdict: u8,
    },
    /// It changes no rule outcome on any pair of the current rows.
    Equivalent,
    /// No assertion notices it, and no pair of the first `searched` sources (of a page
    /// with more) shows a change: counted as survived.
    Unshown { searched: usize },
}

/// A small change to a rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Mutant {
    pub rule: String,
    /// `flip`, `boundary`, `shift`, `drop`, `negate`.
    pub kind: &'static str,
    /// Where in the rule's logic.
    pub pointer: String,
    /// What changed, in words (`< → >=`, `dropped source.x == 1`).
    pub change: String,
    /// The mutant's logic.
    pub logic: Value,
    #[serde(flatten)]
    pub fate: Fate,
}

/// The coverage of a page's rules by its assertions.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    pub assertions: usize,
    /// Sources the assertions select, and the pairs looked at (those × every target).
    pub selections: usize,
    pub pairs: usize,
    pub rules: Vec<RuleCoverage>,
    /// Conditions that took both outcomes and decided a pair, of all conditions.
    pub conditions_covered: usize,
    pub conditions: usize,
    pub mutants: Vec<Mutant>,
    pub killed: usize,
    pub survived: usize,
    pub equivalent: usize,
    /// killed / (killed + survived), in percent (100 with no such mutant).
    pub mutation_score: f64,
    /// Assertions that fail on the page itself: they kill nothing.
    pub failing_assertions: usize,
}

/// A node of a rule's logic: where it is, its value, its parent's operation and its
/// index among the parent's arguments.
#[derive(Debug, Clone)]
struct Node {
    pointer: String,
    value: Value,
    parent: Option<usize>,
    /// (the parent's operation, this node's index among its arguments)
    slot: Option<(String, usize)>,
    condition: bool,
}

fn op_of(v: &Value) -> Option<(&str, &Value)> {
    let o = v.as_object().filter(|o| o.len() == 1)?;
    o.iter().next().map(|(k, v)| (k.as_str(), v))
}

/// Every operation node of a logic, parents before children.
fn nodes(logic: &Value) -> Vec<Node> {
    let mut out = vec![Node {
        pointer: String::new(),
        value: logic.clone(),
        parent: None,
        slot: None,
        condition: op_of(logic).is_some_and(|(op, _)| op != "var"),
    }];
    let mut i = 0;
    while i < out.len() {
        let Some((op, args)) = op_of(&out[i].value).map(|(o, a)| (o.to_owned(), a.clone())) else {
            i += 1;
            continue;
        };
        if op == "var" {
            i += 1;
            continue;
        }
        let token = crate::diag::pointer_token(&op);
        let (children, arrayed): (Vec<Value>, bool) = match &args {
            Value::Array(a) => (a.clone(), true),
            one => (vec![one.clone()], false),
        };
        for (k, child) in children.into_iter().enumerate() {
            // The per-item argument of `some`, `all`, `map`…: its `var`s name the item,
            // not the pair, so it is not measured on pairs.
            if crate::engine::item_scoped(&op, k) {
                continue;
            }
            let is_op = op_of(&child).is_some();
            let branching = BRANCHING.contains(&op.as_str());
            let child_op = op_of(&child).map(|(o, _)| o.to_owned());
            let condition = match &child_op {
                // A comparison, a predicate or a branch: a condition.
                Some(o) if o != "var" => {
                    branching
                        || COMPARISONS.contains(&o.as_str())
                        || BRANCHING.contains(&o.as_str())
                        || o == "in"
                }
                // A field tested for truthiness.
                Some(_) => branching,
                None => false,
            };
            // A literal argument exercises nothing; a field read by a comparison is
            // exercised by the comparison.
            if !is_op || (!condition && child_op.as_deref() == Some("var")) {
                continue;
            }
            out.push(Node {
                pointer: if arrayed {
                    format!("{}/{token}/{k}", out[i].pointer)
                } else {
                    format!("{}/{token}", out[i].pointer)
                },
                value: child,
                parent: Some(i),
                slot: Some((op.clone(), k)),
                condition,
            });
        }
        i += 1;
    }
    out
}

/// `logic` with the node at `pointer` replaced by `with`.
fn replaced(logic: &Value, pointer: &str, with: Value) -> Value {
    let mut out = logic.clone();
    match out.pointer_mut(pointer) {
        Some(slot) => *slot = with,
        None if pointer.is_empty() => out = with,
        None => {}
    }
    out
}

fn text_of(v: &Value) -> String {
    crate::infix::print(v).unwrap_or_else(|_| v.to_string())
}

/// Whether node `n` is reached, given whether its parent is and the truthiness of each
/// node (`truth[k]`: `None` where unknown).
fn reached(nodes: &[Node], n: usize, evaluated: &[bool], truth: &[Option<bool>]) -> bool {
    let Some(p) = nodes[n].parent else {
        return true;
    };
    if !evaluated[p] {
        return false;
    }
    let Some((op, k)) = &nodes[n].slot else {
        return true;
    };
    // The truthiness of the parent's argument `j`: by its node, or a literal's own.
    let arg = |j: usize| match nodes
        .iter()
        .position(|m| m.parent == Some(p) && m.slot.as_ref().is_some_and(|s| s.1 == j))
    {
        Some(m) => truth[m],
        None => op_of(&nodes[p].value)
            .and_then(|(_, args)| match args {
                Value::Array(a) => a.get(j),
                one if j == 0 => Some(one),
                _ => None,
            })
            .filter(|v| op_of(v).is_none())
            .map(literal_truthy),
    };
    match op.as_str() {
        "and" => (0..*k).all(|j| arg(j) != Some(false)),
        "or" => (0..*k).all(|j| arg(j) != Some(true)),
        "if" | "?:" => {
            // Conditions at even places, each followed by its branch; an odd count ends
            // with the else branch (at an even place too): reached when every condition
            // before it is falsy.
            let conds_before = |upto: usize| (0..upto).step_by(2).all(|j| arg(j) != Some(true));
            if k % 2 == 0 {
                conds_before(*k)
            } else {
                conds_before(k - 1) && arg(k - 1) != Some(false)
            }
        }
        _ => true,
    }
}

/// JSONLogic's truthiness of a literal: `null`, `false`, 0, `""` and `[]` are falsy.
fn literal_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0 && !x.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(_) => true,
    }
}

/// A rule made from another for coverage: its condition kept, its weight irrelevant.
fn made_rule(rule: &Rule, id: String, logic: Value) -> Rule {
    Rule {
        id,
        logic,
        expression: None,
        family: None,
        required: false,
        weight: 1.0,
        warning: None,
        ..rule.clone()
    }
}

/// The conditions of every rule over the pairs the assertions look at.
fn conditions(page: &Page, sources: &[usize]) -> Result<Vec<RuleCoverage>, Vec<Diagnostic>> {
    let trees: Vec<Vec<Node>> = page.rules.iter().map(|r| nodes(&r.logic)).collect();
    // The made page: per rule, the rule itself, then per condition its truthiness and
    // the rule with it negated.
    let mut made = page.clone();
    made.overrides.clear();
    made.assertions.clear();
    made.rules.clear();
    let mut at = Vec::new(); // per rule: index of the rule itself, then (truth, negated) per node
    for (r, rule) in page.rules.iter().enumerate() {
        let base = made.rules.len();
        made.rules
            .push(made_rule(rule, format!("\u{1}{r}"), rule.logic.clone()));
        let mut slots = Vec::new();
        for (k, n) in trees[r].iter().enumerate() {
            let t = made.rules.len();
            made.rules.push(made_rule(
                rule,
                format!("\u{1}{r}t{k}"),
                json!({"!!": [n.value]}),
            ));
            made.rules.push(made_rule(
                rule,
                format!("\u{1}{r}n{k}"),
                replaced(&rule.logic, &n.pointer, json!({"!": [n.value]})),
            ));
            slots.push(t);
        }
        at.push((base, slots));
    }
    let mut matrix = Matrix::new(&made)
        .map_err(|e| vec![Diagnostic::error(Code::Compile, "/rules", e.to_string())])?;
    let mut out: Vec<RuleCoverage> = page
        .rules
        .iter()
        .enumerate()
        .map(|(r, rule)| RuleCoverage {
            rule: rule.id.clone(),
            applies: 0,
            passes: 0,
            conditions: trees[r]
                .iter()
                .filter(|n| n.condition)
                .map(|n| ConditionCoverage {
                    pointer: n.pointer.clone(),
                    text: text_of(&n.value),
                    evaluated: 0,
                    truthy: 0,
                    falsy: 0,
                    decisive: 0,
                })
                .collect(),
        })
        .collect();
    let nt = page.target.rows.len();
    for &s in sources {
        let columns = matrix.columns(s);
        for (r, (base, slots)) in at.iter().enumerate() {
            let tree = &trees[r];
            for t in 0..nt {
                let outcome = columns[*base].outcome[t].counted();
                if outcome.is_none() {
                    continue; // the rule does not apply: its logic is not run
                }
                out[r].applies += 1;
                out[r].passes += usize::from(outcome == Some(true));
                let truth: Vec<Option<bool>> = slots
                    .iter()
                    .map(|&c| columns[c].outcome[t].counted())
                    .collect();
                let mut evaluated = vec![false; tree.len()];
                let mut shown = 0;
                for k in 0..tree.len() {
                    evaluated[k] = reached(tree, k, &evaluated, &truth);
                    if !tree[k].condition {
                        continue;
                    }
                    let c = &mut out[r].conditions[shown];
                    shown += 1;
                    if !evaluated[k] {
                        continue;
                    }
                    c.evaluated += 1;
                    match truth[k] {
                        Some(true) => c.truthy += 1,
                        _ => c.falsy += 1,
                    }
                    let negated = columns[slots[k] + 1].outcome[t].counted();
                    c.decisive += usize::from(negated != outcome);
                }
            }
        }
    }
    Ok(out)
}

/// The mutants of a rule: (kind, pointer, change in words, mutated logic).
fn mutants_of(rule: &Rule) -> Vec<(&'static str, String, String, Value)> {
    let mut out = Vec::new();
    for n in nodes(&rule.logic) {
        let Some((op, args)) = op_of(&n.value) else {
            continue;
        };
        let flip = match op {
            "==" => Some("!="),
            "!=" => Some("=="),
            "===" => Some("!=="),
            "!==" => Some("==="),
            "<" => Some(">="),
            "<=" => Some(">"),
            ">" => Some("<="),
            ">=" => Some("<"),
            _ => None,
        };
        let bound = match op {
            "<" => Some("<="),
            "<=" => Some("<"),
            ">" => Some(">="),
            ">=" => Some(">"),
            _ => None,
        };
        let arity = args.as_array().map_or(1, Vec::len);
        if arity == 2 {
            for (kind, to) in [("flip", flip), ("boundary", bound)] {
                if let Some(to) = to {
                    let logic = replaced(&rule.logic, &n.pointer, json!({to: args}));
                    out.push((
                        kind,
                        n.pointer.clone(),
                        format!("{op} → {to} in {}", text_of(&n.value)),
                        logic,
                    ));
                }
            }
        }
        // A constant compared with shifted to either side of its boundary (`>= 8`
        // becomes `>= 9` and `>= 7`; a fraction moves by 1% of itself).
        if matches!(op, "<" | "<=" | ">" | ">=")
            && let Value::Array(items) = args
        {
            for (k, item) in items.iter().enumerate() {
                let Some(c) = item.as_f64().filter(|_| item.is_number()) else {
                    continue;
                };
                let step = if c.fract() == 0.0 {
                    1.0
                } else {
                    (c.abs() * 0.01).max(f64::EPSILON)
                };
                for shifted in [c + step, c - step] {
                    let v = if shifted.fract() == 0.0 && shifted.abs() < 9e15 {
                        json!(shifted as i64)
                    } else {
                        json!(shifted)
                    };
                    let mut moved = items.clone();
                    moved[k] = v.clone();
                    let logic = replaced(&rule.logic, &n.pointer, json!({op: moved}));
                    out.push((
                        "shift",
                        n.pointer.clone(),
                        format!("{item} → {v} in {}", text_of(&n.value)),
                        logic,
                    ));
                }
            }
        }
        if matches!(op, "and" | "or")
            && let Value::Array(items) = args
            && items.len() >= 2
        {
            for k in 0..items.len() {
                let mut rest = items.clone();
                let gone = rest.remove(k);
                let logic = replaced(&rule.logic, &n.pointer, json!({op: rest}));
                out.push((
                    "drop",
                    n.pointer.clone(),
                    format!("dropped {}", text_of(&gone)),
                    logic,
                ));
            }
        }
    }
    out.push((
        "negate",
        String::new(),
        "the rule negated".to_owned(),
        json!({"!": [rule.logic]}),
    ));
    out.truncate(MAX_MUTANTS_PER_RULE);
    out
}

/// Rule `i`'s outcome on every target for source `s` (`None`: does not apply).
fn rule_outcomes(matrix: &mut Matrix, s: usize, i: usize) -> Vec<Option<bool>> {
    matrix.columns_of(s, &[i])[0]
        .outcome
        .iter()
        .map(|o| o.counted())
        .collect()
}

/// The coverage of a page's rules by its assertions.
pub fn coverage(page: &Page, limits: &Limits) -> Result<Coverage, Vec<Diagnostic>> {
    let compiled = assertions::compile_all(page, limits)?;
    let sources = assertions::selections(&compiled, page);
    let rules = conditions(page, &sources)?;
    let conditions: usize = rules.iter().map(|r| r.conditions.len()).sum();
    let conditions_covered = rules
        .iter()
        .flat_map(|r| &r.conditions)
        .filter(|c| c.covered())
        .count();
    // The assertions on the page itself: only those that pass can notice a mutant.
    let compile = |e: crate::matrix::CompileError| {
        vec![Diagnostic::error(Code::Compile, "/rules", e.to_string())]
    };
    let mut matrix = Matrix::new(page).map_err(compile)?;
    let names = std::sync::Arc::new(Names::of(page));
    let run = |matrix: &mut Matrix| {
        assertions::run_compiled(&compiled, page, limits, |s| {
            Ok::<_, ()>(SelectionResult::new(
                page,
                names.clone(),
                matrix.evaluate(s),
                0,
                "",
            ))
        })
        .unwrap_or_default()
    };
    let before = run(&mut matrix);
    let failing_assertions = before.iter().filter(|r| !r.passed).count();
    let mut mutants = Vec::new();
    let ns = page.source.rows.len().min(MAX_SOURCES_SEARCHED);
    for (i, rule) in page.rules.iter().enumerate() {
        // The rule's outcome on every pair searched, before any mutant, and on the
        // sources the assertions select.
        let original: Vec<Vec<Option<bool>>> =
            (0..ns).map(|s| rule_outcomes(&mut matrix, s, i)).collect();
        let selected: Vec<Vec<Option<bool>>> = sources
            .iter()
            .map(|&s| rule_outcomes(&mut matrix, s, i))
            .collect();
        for (kind, pointer, change, logic) in mutants_of(rule) {
            let mut m = rule.clone();
            m.logic = logic.clone();
            m.expression = None;
            if matrix.replace_rule(i, &m).is_err() {
                continue;
            }
            // The assertions read only the selected sources: a mutant that changes no
            // outcome there cannot fail one (and is not run against them).
            let changes_selected = sources
                .iter()
                .zip(&selected)
                .any(|(&s, was)| rule_outcomes(&mut matrix, s, i) != *was);
            let killer = if changes_selected {
                let after = run(&mut matrix);
                before
                    .iter()
                    .zip(&after)
                    .find(|(b, a)| b.passed && !a.passed)
                    .map(|(b, _)| b.assertion_id.clone())
            } else {
                None
            };
            let fate = match killer {
                Some(assertion_id) => Fate::Killed { assertion_id },
                None => {
                    let mut found = None;
                    for (s, was) in original.iter().enumerate() {
                        let now = rule_outcomes(&mut matrix, s, i);
                        if let Some(t) = (0..was.len()).find(|&t| now[t] != was[t]) {
                            found = Some((s, t, was[t], now[t]));
                            break;
                        }
                    }
                    match found {
                        None if page.source.rows.len() > ns => Fate::Unshown { searched: ns },
                        None => Fate::Equivalent,
                        Some((s, t, was, now)) => {
                            let mutant_verdict = matrix.evaluate(s).devices[t].verdict.number();
                            matrix
                                .replace_rule(i, rule)
                                .expect("the rule compiled before");
                            let verdict = matrix.evaluate(s).devices[t].verdict.number();
                            Fate::Survived {
                                source: page.source.row_key(&page.source.rows[s]),
                                target: page.target.row_id(&page.target.rows[t]),
                                outcome: RuleExpect::of(was).word(),
                                mutant_outcome: RuleExpect::of(now).word(),
                                verdict,
                                mutant_verdict,
                            }
                        }
                    }
                }
            };
            matrix
                .replace_rule(i, rule)
                .expect("the rule compiled before");
            mutants.push(Mutant {
                rule: rule.id.clone(),
                kind,
                pointer,
                change,
                logic,
                fate,
            });
        }
    }
    let count = |f: fn(&Fate) -> bool| mutants.iter().filter(|m| f(&m.fate)).count();
    let killed = count(|f| matches!(f, Fate::Killed { .. }));
    let survived = count(|f| matches!(f, Fate::Survived { .. } | Fate::Unshown { .. }));
    let equivalent = count(|f| matches!(f, Fate::Equivalent));
    Ok(Coverage {
        assertions: compiled.len(),
        selections: sources.len(),
        pairs: sources.len() * page.target.rows.len(),
        rules,
        conditions_covered,
        conditions,
        mutation_score: if killed + survived == 0 {
            100.0
        } else {
            killed as f64 * 100.0 / (killed + survived) as f64
        },
        killed,
        survived,
        equivalent,
        mutants,
        failing_assertions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_are_the_comparisons_and_the_branches() {
        let logic = json!({"and": [
            {">=": [{"var": "target.x"}, 1]},
            {"or": [{"var": "source.flag"}, {"==": [{"var": "target.y"}, "a"]}]}
        ]});
        let n = nodes(&logic);
        let conditions: Vec<&str> = n
            .iter()
            .filter(|n| n.condition)
            .map(|n| n.pointer.as_str())
            .collect();
        assert_eq!(
            conditions,
            ["", "/and/0", "/and/1", "/and/1/or/0", "/and/1/or/1"]
        );
        assert_eq!(
            replaced(&logic, "/and/1/or/0", json!(true))["and"][1]["or"][0],
            json!(true)
        );
    }
}

//! What changed between two versions of a page, and what the change does to outcomes:
//! rules, policies, overrides, assertions and rows that differ, then, per selection, every rule
//! cell that flips and every verdict, score and recommendation that moves. Rules are
//! matched by id, rows and overrides by key.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use serde_json::Value;

use super::matrix::{CompileError, Matrix, SelectionEval};
use super::model::{Page, Row, Side};
use super::verdict::Verdict;

/// A value before and after.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Moved<T> {
    pub old: T,
    pub new: T,
}

/// Rules, overrides or rows that differ, by id or key.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ItemChanges {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Each changed item with the names of the fields that differ.
    pub changed: Vec<(String, Vec<String>)>,
}

impl ItemChanges {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// One rule cell that flips for a target: `None` where the rule is absent on that side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flip {
    pub rule: String,
    pub old: Option<&'static str>,
    pub new: Option<&'static str>,
}

/// A target whose outcome moved for a selection.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetMove {
    pub target: String,
    pub verdict: Moved<Verdict>,
    pub score: Moved<f64>,
    pub flips: Vec<Flip>,
}

/// What moved for one selection (a source row on both sides).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectionMove {
    pub selection: String,
    pub selection_verdict: Moved<Verdict>,
    pub recommended: Moved<Option<String>>,
    /// Targets (on both sides) whose verdict, score or rule cells changed.
    pub targets: Vec<TargetMove>,
}

impl SelectionMove {
    /// A verdict, the selection verdict or the recommendation moved (not only cells
    /// or scores).
    pub fn verdicts_moved(&self) -> bool {
        self.selection_verdict.old != self.selection_verdict.new
            || self.recommended.old != self.recommended.new
            || self.targets.iter().any(|t| t.verdict.old != t.verdict.new)
    }
}

/// Everything that differs between two pages.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageDiff {
    pub rules: ItemChanges,
    /// Policy values that differ (`devicePolicy.fullThreshold`, …).
    pub policies: Vec<(String, Moved<Value>)>,
    pub overrides: ItemChanges,
    /// Verdict assertions, by id.
    pub assertions: ItemChanges,
    /// Linked tables of expected outcomes, by file.
    pub expectations: ItemChanges,
    pub source_rows: ItemChanges,
    pub target_rows: ItemChanges,
    /// The selections compared (on both sides), and those whose outcomes moved.
    pub selections_compared: usize,
    pub selections: Vec<SelectionMove>,
}

impl PageDiff {
    /// Whether any verdict, selection verdict or recommendation moved.
    pub fn verdicts_moved(&self) -> bool {
        self.selections.iter().any(SelectionMove::verdicts_moved)
    }

    /// Whether the pages differ at all (definition or outcomes).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
            && self.policies.is_empty()
            && self.overrides.is_empty()
            && self.assertions.is_empty()
            && self.expectations.is_empty()
            && self.source_rows.is_empty()
            && self.target_rows.is_empty()
            && self.selections.is_empty()
    }
}

/// Which selections to compare.
#[derive(Debug, Clone, PartialEq)]
pub enum Selections {
    /// Every source row present on both sides.
    All,
    /// The source rows with these keys.
    Keys(Vec<String>),
}

/// The fields of two JSON objects that differ, in order (keys of `a`, then new ones).
fn changed_fields(
    a: &serde_json::Map<String, Value>,
    b: &serde_json::Map<String, Value>,
) -> Vec<String> {
    let mut out: Vec<String> = a
        .iter()
        .filter(|(k, v)| b.get(*k) != Some(*v))
        .map(|(k, _)| k.clone())
        .collect();
    out.extend(b.keys().filter(|k| !a.contains_key(*k)).cloned());
    out
}

fn items(
    old: &[(String, serde_json::Map<String, Value>)],
    new: &[(String, serde_json::Map<String, Value>)],
) -> ItemChanges {
    let old_index: HashMap<&str, &serde_json::Map<String, Value>> =
        old.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let new_index: HashMap<&str, &serde_json::Map<String, Value>> =
        new.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let mut out = ItemChanges::default();
    for (k, v) in old {
        match new_index.get(k.as_str()) {
            None => out.removed.push(k.clone()),
            Some(w) => {
                let fields = changed_fields(v, w);
                if !fields.is_empty() {
                    out.changed.push((k.clone(), fields));
                }
            }
        }
    }
    out.added = new
        .iter()
        .filter(|(k, _)| !old_index.contains_key(k.as_str()))
        .map(|(k, _)| k.clone())
        .collect();
    out
}

fn object(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(o) => o,
        _ => serde_json::Map::new(),
    }
}

fn rows(page: &Page, side: Side) -> Vec<(String, serde_json::Map<String, Value>)> {
    let d = page.dataset(side);
    d.rows
        .iter()
        .map(|r: &Row| (d.row_key(r), r.clone()))
        .collect()
}

/// Flattens a policy object to `prefix.name` → value.
fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(o) => {
            for (k, v) in o {
                flatten(&format!("{prefix}.{k}"), v, out);
            }
        }
        v => {
            out.insert(prefix.to_owned(), v.clone());
        }
    }
}

fn policies(old: &Page, new: &Page) -> Vec<(String, Moved<Value>)> {
    let flat = |page: &Page| {
        let mut out = BTreeMap::new();
        flatten(
            "devicePolicy",
            &serde_json::to_value(&page.device_policy).expect("policies serialize"),
            &mut out,
        );
        flatten(
            "selectionPolicy",
            &serde_json::to_value(&page.selection_policy).expect("policies serialize"),
            &mut out,
        );
        out
    };
    let (a, b) = (flat(old), flat(new));
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|k| {
            let (x, y) = (
                a.get(k).cloned().unwrap_or(Value::Null),
                b.get(k).cloned().unwrap_or(Value::Null),
            );
            (x != y).then(|| (k.clone(), Moved { old: x, new: y }))
        })
        .collect()
}

fn overrides(page: &Page) -> Vec<(String, serde_json::Map<String, Value>)> {
    page.overrides
        .iter()
        .map(|o| {
            let pair = o.pair_label();
            let mut fields = serde_json::Map::new();
            fields.insert("value".into(), Value::Bool(o.value));
            fields.insert(
                "note".into(),
                o.note.clone().map_or(Value::Null, Value::String),
            );
            (pair, fields)
        })
        .collect()
}

fn assertions(page: &Page) -> Vec<(String, serde_json::Map<String, Value>)> {
    page.assertions
        .iter()
        .map(|a| {
            let mut fields = serde_json::to_value(a).map(object).unwrap_or_default();
            fields.remove("id");
            (a.id.clone(), fields)
        })
        .collect()
}

fn tables(page: &Page) -> Vec<(String, serde_json::Map<String, Value>)> {
    page.expectations
        .iter()
        .map(|t| {
            let mut fields = serde_json::to_value(t).map(object).unwrap_or_default();
            fields.remove("file");
            (t.file.clone(), fields)
        })
        .collect()
}

/// How the two versions line up: targets and rules of `old` by their index in `new`
/// (computed once, not per selection).
struct Alignment {
    targets: Vec<Option<usize>>,
    target_keys: Vec<String>,
    rules: Vec<Option<usize>>,
    /// Rules only in `new`.
    added_rules: Vec<usize>,
}

impl Alignment {
    fn of(old: &Page, new: &Page, new_targets: &HashMap<String, usize>) -> Alignment {
        let target_keys: Vec<String> = old
            .target
            .rows
            .iter()
            .map(|r| old.target.row_key(r))
            .collect();
        let targets = target_keys
            .iter()
            .map(|k| new_targets.get(k).copied())
            .collect();
        let new_rules: HashMap<&str, usize> = new
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id.as_str(), i))
            .collect();
        let rules = old
            .rules
            .iter()
            .map(|r| new_rules.get(r.id.as_str()).copied())
            .collect();
        let added_rules = (0..new.rules.len())
            .filter(|&j| old.rule(&new.rules[j].id).is_none())
            .collect();
        Alignment {
            targets,
            target_keys,
            rules,
            added_rules,
        }
    }
}

/// Compares one selection on both sides.
fn selection_move(
    key: &str,
    (old, old_eval): (&Page, &SelectionEval),
    (new, new_eval): (&Page, &SelectionEval),
    align: &Alignment,
) -> SelectionMove {
    let recommended = |page: &Page, e: &SelectionEval| {
        e.recommended
            .map(|t| page.target.row_key(&page.target.rows[t]))
    };
    let mut targets = Vec::new();
    for (t, u) in align.targets.iter().enumerate() {
        let Some(u) = *u else { continue };
        let mut flips = Vec::new();
        for (i, j) in align.rules.iter().enumerate() {
            let a = old_eval.columns[i].outcome[t];
            match j {
                Some(j) if new_eval.columns[*j].outcome[u] == a => {}
                Some(j) => flips.push(Flip {
                    rule: old.rules[i].id.clone(),
                    old: Some(a.word()),
                    new: Some(new_eval.columns[*j].outcome[u].word()),
                }),
                None => flips.push(Flip {
                    rule: old.rules[i].id.clone(),
                    old: Some(a.word()),
                    new: None,
                }),
            }
        }
        for &j in &align.added_rules {
            flips.push(Flip {
                rule: new.rules[j].id.clone(),
                old: None,
                new: Some(new_eval.columns[j].outcome[u].word()),
            });
        }
        let (a, b) = (&old_eval.devices[t], &new_eval.devices[u]);
        if !flips.is_empty() || a.verdict != b.verdict || a.score != b.score {
            targets.push(TargetMove {
                target: align.target_keys[t].clone(),
                verdict: Moved {
                    old: a.verdict,
                    new: b.verdict,
                },
                score: Moved {
                    old: a.score,
                    new: b.score,
                },
                flips,
            });
        }
    }
    SelectionMove {
        selection: key.to_owned(),
        selection_verdict: Moved {
            old: old_eval.selection_verdict,
            new: new_eval.selection_verdict,
        },
        recommended: Moved {
            old: recommended(old, old_eval),
            new: recommended(new, new_eval),
        },
        targets,
    }
}

/// Compares two versions of a page. Selections named by key must exist on both sides
/// (else the error names the first missing one).
pub fn diff(old: &Page, new: &Page, which: &Selections) -> Result<PageDiff, String> {
    let rule_fields = |p: &Page| -> Vec<(String, serde_json::Map<String, Value>)> {
        p.rules
            .iter()
            .map(|r| {
                (
                    r.id.clone(),
                    object(serde_json::to_value(r).expect("rules serialize")),
                )
            })
            .collect()
    };
    let compile = |e: CompileError| e.to_string();
    let mut old_matrix = Matrix::new(old).map_err(compile)?;
    let mut new_matrix = Matrix::new(new).map_err(compile)?;
    let new_sources: HashMap<String, usize> = new
        .source
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| (new.source.row_key(r), i))
        .collect();
    let new_targets: HashMap<String, usize> = new
        .target
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| (new.target.row_key(r), i))
        .collect();
    let old_sources: Vec<String> = old
        .source
        .rows
        .iter()
        .map(|r| old.source.row_key(r))
        .collect();
    let pairs: Vec<(usize, usize)> = match which {
        Selections::All => old_sources
            .iter()
            .enumerate()
            .filter_map(|(s, k)| new_sources.get(k).map(|&n| (s, n)))
            .collect(),
        Selections::Keys(keys) => keys
            .iter()
            .map(|k| {
                let s = old_sources.iter().position(|o| o == k);
                match (s, new_sources.get(k)) {
                    (Some(s), Some(&n)) => Ok((s, n)),
                    _ => Err(format!("source row `{k}` is not on both sides")),
                }
            })
            .collect::<Result<_, _>>()?,
    };
    let align = Alignment::of(old, new, &new_targets);
    let mut selections = Vec::new();
    for &(s, n) in &pairs {
        let (a, b) = (old_matrix.evaluate(s), new_matrix.evaluate(n));
        let m = selection_move(&old_sources[s], (old, &a), (new, &b), &align);
        if !m.targets.is_empty() || m.verdicts_moved() {
            selections.push(m);
        }
    }
    Ok(PageDiff {
        rules: items(&rule_fields(old), &rule_fields(new)),
        policies: policies(old, new),
        overrides: items(&overrides(old), &overrides(new)),
        assertions: items(&assertions(old), &assertions(new)),
        expectations: items(&tables(old), &tables(new)),
        source_rows: items(&rows(old, Side::Source), &rows(new, Side::Source)),
        target_rows: items(&rows(old, Side::Target), &rows(new, Side::Target)),
        selections_compared: pairs.len(),
        selections,
    })
}

//! The rule × target matrix for one selection, computed fast and kept current.
//!
//! A rule's outcome depends only on the values it reads ([`Reads`]). Each field path a
//! rule reads is dictionary-encoded over the rows once; targets that agree on every
//! path a rule reads form one *group*, and the rule is evaluated once per group and
//! the outcome copied to its members. Columns are cached per rule and per projection of
//! the selected source, so a rule that reads only `target.*` is evaluated once and
//! reused for every selection, and an edit recomputes only the edited rule's column.
//! Columns are computed in parallel (rayon).

use std::collections::HashMap;
use std::sync::Arc;

use datalogic_rs::bumpalo::Bump;
use datalogic_rs::{DataValue, ParsedData};
use rayon::prelude::*;
use serde_json::Value;

use super::engine::{self, CompiledRule, FieldPath};
use super::model::{DevicePolicy, Page, Rule, SelectionPolicy, Side};
use super::verdict::{self, Candidate, DeviceVerdict, RuleWeight, Tally, Verdict};

/// A rule's outcome for one target.
pub const FAIL: u8 = 0;
pub const PASS: u8 = 1;
/// The engine raised an error (the rule fails).
pub const ERROR: u8 = 2;

/// The outcomes of one rule for every target, for one selection.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub outcome: Vec<u8>,
    /// How many engine evaluations computing it took (distinct groups).
    pub evaluations: usize,
    /// How many targets pass (counted once, when the column is built).
    pub passes: usize,
}

impl Column {
    pub fn passed(&self, target: usize) -> bool {
        self.outcome[target] == PASS
    }

    fn new(outcome: Vec<u8>, evaluations: usize) -> Column {
        let passes = outcome.iter().filter(|&&o| o == PASS).count();
        Column {
            outcome,
            evaluations,
            passes,
        }
    }

    /// How many targets pass.
    pub fn pass_count(&self) -> usize {
        self.passes
    }
}

/// The evaluation of one selection: every rule's column and every target's verdict.
#[derive(Debug, Clone)]
pub struct SelectionEval {
    pub selection: usize,
    /// One column per rule, in rule order.
    pub columns: Vec<Arc<Column>>,
    /// One verdict per target, in row order.
    pub devices: Vec<DeviceVerdict>,
    /// The override of each target for this selection, if any.
    pub overrides: Vec<Option<bool>>,
    pub selection_verdict: Verdict,
    /// Index of the recommended target.
    pub recommended: Option<usize>,
}

/// Dictionary-encoded values of one field path over the rows of a dataset.
struct Encoded {
    ids: Vec<u32>,
}

/// Rows of one dataset with their encoded field paths.
struct RowSet {
    rows: Vec<Value>,
    encoded: HashMap<FieldPath, Arc<Encoded>>,
}

impl RowSet {
    fn new(rows: Vec<Value>) -> Self {
        RowSet {
            rows,
            encoded: HashMap::new(),
        }
    }

    fn encode(&mut self, path: &FieldPath) -> Arc<Encoded> {
        if let Some(e) = self.encoded.get(path) {
            return e.clone();
        }
        let mut dict: HashMap<String, u32> = HashMap::new();
        let ids = self
            .rows
            .iter()
            .map(|row| {
                let key = projection_key(row, path);
                let next = dict.len() as u32;
                *dict.entry(key).or_insert(next)
            })
            .collect();
        let e = Arc::new(Encoded { ids });
        self.encoded.insert(path.clone(), e.clone());
        e
    }

    /// The ids of row `i` on `paths`.
    fn projection(&mut self, paths: &[FieldPath], i: usize) -> Vec<u32> {
        paths.iter().map(|p| self.encode(p).ids[i]).collect()
    }
}

/// A canonical text for the value at `path` in `row`. Finer than what the engine
/// can tell apart: absent differs from null, and a walk that stops early records
/// where and on what value.
fn projection_key(row: &Value, path: &[String]) -> String {
    let mut at = row;
    for (depth, seg) in path.iter().enumerate() {
        let next = match at {
            Value::Object(m) => m.get(seg),
            Value::Array(a) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        };
        match next {
            Some(v) => at = v,
            None => return format!("\u{0}stop:{depth}:{at}"),
        }
    }
    at.to_string()
}

/// Targets that read the same values for some set of paths.
struct Grouping {
    group_of: Vec<u32>,
    /// One target per group.
    representatives: Vec<usize>,
}

struct Slot {
    compiled: Arc<CompiledRule>,
    weight: RuleWeight,
    /// Source paths the rule reads (`[[]]`: the whole row).
    source_paths: Vec<FieldPath>,
    target_paths: Vec<FieldPath>,
    /// Columns by the selected source's projection on `source_paths`.
    cache: HashMap<Vec<u32>, Arc<Column>>,
}

/// Most columns kept per rule (one per distinct source projection).
const CACHE_PER_RULE: usize = 32;

/// The live matrix of a page.
pub struct Matrix {
    rules: Vec<Slot>,
    source: RowSet,
    target: RowSet,
    /// Target rows parsed once into the engine's own form. `ParsedData` is `Send`
    /// but not `Sync`, so evaluation hands each thread its own chunk of rows.
    parsed_targets: Vec<ParsedData>,
    groupings: HashMap<Vec<FieldPath>, Arc<Grouping>>,
    target_ids: Vec<String>,
    target_priority: Vec<f64>,
    /// (source index, target index) → override value.
    overrides: HashMap<(usize, usize), bool>,
    device_policy: DevicePolicy,
    selection_policy: SelectionPolicy,
}

/// A rule that does not compile.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("rule `{rule}` does not compile: {message}")]
pub struct CompileError {
    pub rule: String,
    pub message: String,
}

impl Matrix {
    /// Compiles every rule of a validated page.
    pub fn new(page: &Page) -> Result<Matrix, CompileError> {
        // Rows as rules see them: with the dataset's field defaults filled in.
        let rows = |side: Side| -> Vec<Value> {
            let d = page.dataset(side);
            d.rows
                .iter()
                .map(|r| Value::Object(d.effective_row(r).into_owned()))
                .collect()
        };
        let target_rows = rows(Side::Target);
        let mut m = Matrix {
            rules: Vec::with_capacity(page.rules.len()),
            source: RowSet::new(rows(Side::Source)),
            parsed_targets: target_rows
                .iter()
                .map(|r| {
                    let text = serde_json::to_string(r).expect("rows serialize");
                    ParsedData::from_json(&text).expect("serde_json output parses")
                })
                .collect(),
            target: RowSet::new(target_rows),
            groupings: HashMap::new(),
            target_ids: page
                .target
                .rows
                .iter()
                .map(|r| page.target.row_id(r))
                .collect(),
            target_priority: page
                .target
                .rows
                .iter()
                .map(|r| page.target.row_priority(&page.target.effective_row(r)))
                .collect(),
            overrides: HashMap::new(),
            device_policy: page.device_policy.clone(),
            selection_policy: page.selection_policy.clone(),
        };
        m.set_overrides(page);
        for rule in &page.rules {
            let slot = Self::slot(rule)?;
            m.rules.push(slot);
        }
        Ok(m)
    }

    fn slot(rule: &Rule) -> Result<Slot, CompileError> {
        let compiled = engine::compile(&rule.logic).map_err(|message| CompileError {
            rule: rule.id.clone(),
            message,
        })?;
        Ok(Self::slot_of(Arc::new(compiled), rule))
    }

    fn slot_of(compiled: Arc<CompiledRule>, rule: &Rule) -> Slot {
        let whole = || vec![FieldPath::new()];
        Slot {
            source_paths: compiled.reads.source.clone().unwrap_or_else(whole),
            target_paths: compiled.reads.target.clone().unwrap_or_else(whole),
            compiled,
            weight: RuleWeight {
                required: rule.required,
                weight: rule.weight,
            },
            cache: HashMap::new(),
        }
    }

    pub fn rule_count(&self) -> usize {
        self.rules.len()
    }

    pub fn target_count(&self) -> usize {
        self.target.rows.len()
    }

    pub fn source_count(&self) -> usize {
        self.source.rows.len()
    }

    /// The compiled form of rule `i` (for explanations).
    pub fn compiled(&self, i: usize) -> &CompiledRule {
        &self.rules[i].compiled
    }

    /// Replaces rule `i` (an edit): only its column is recomputed next time.
    pub fn replace_rule(&mut self, i: usize, rule: &Rule) -> Result<(), CompileError> {
        self.rules[i] = Self::slot(rule)?;
        Ok(())
    }

    /// Replaces rule `i` with an already compiled rule.
    pub fn replace_compiled(&mut self, i: usize, compiled: Arc<CompiledRule>, rule: &Rule) {
        self.rules[i] = Self::slot_of(compiled, rule);
    }

    /// Changes only a rule's weight and required flag: no re-evaluation.
    pub fn set_rule_weight(&mut self, i: usize, required: bool, weight: f64) {
        self.rules[i].weight = RuleWeight { required, weight };
    }

    pub fn insert_rule(&mut self, i: usize, rule: &Rule) -> Result<(), CompileError> {
        let slot = Self::slot(rule)?;
        self.rules.insert(i, slot);
        Ok(())
    }

    pub fn remove_rule(&mut self, i: usize) {
        self.rules.remove(i);
    }

    /// Drops every cached column (encodings stay): the next evaluation recomputes all.
    pub fn invalidate(&mut self) {
        self.rules.iter_mut().for_each(|r| r.cache.clear());
    }

    pub fn set_policies(&mut self, device: &DevicePolicy, selection: &SelectionPolicy) {
        self.device_policy = device.clone();
        self.selection_policy = selection.clone();
    }

    /// Re-reads the page's overrides.
    pub fn set_overrides(&mut self, page: &Page) {
        let index = |side: Side| -> HashMap<String, usize> {
            let d = page.dataset(side);
            d.rows
                .iter()
                .enumerate()
                .map(|(i, r)| (super::model::key_hash(&d.row_key(r)), i))
                .collect()
        };
        let (sources, targets) = (index(Side::Source), index(Side::Target));
        self.overrides = page
            .overrides
            .iter()
            .filter_map(|o| {
                let s = *sources.get(&o.source_hash()?)?;
                let t = *targets.get(&o.target_hash()?)?;
                Some(((s, t), o.value))
            })
            .collect();
    }

    /// Evaluates every rule for the selected source and derives the verdicts.
    /// Columns already computed for this source's projection are reused.
    pub fn evaluate(&mut self, selection: usize) -> SelectionEval {
        let columns = self.columns(selection);
        self.verdicts(selection, columns)
    }

    /// Every rule's column for a selection, computing only what the caches lack.
    pub fn columns(&mut self, selection: usize) -> Vec<Arc<Column>> {
        if selection >= self.source.rows.len() {
            // No such source (a page without source rows): nothing passes.
            let none = Arc::new(Column::new(vec![FAIL; self.target.rows.len()], 0));
            return vec![none; self.rules.len()];
        }
        // Sequential part: encodings, groupings and cache look-ups.
        let mut work = Vec::new();
        let mut columns: Vec<Option<Arc<Column>>> = Vec::with_capacity(self.rules.len());
        for i in 0..self.rules.len() {
            let source_paths = self.rules[i].source_paths.clone();
            let key = self.source.projection(&source_paths, selection);
            if let Some(c) = self.rules[i].cache.get(&key) {
                columns.push(Some(c.clone()));
                continue;
            }
            let grouping = self.grouping(&self.rules[i].target_paths.clone());
            work.push((i, key, grouping));
            columns.push(None);
        }
        // Parallel part: every (rule, group representative) pair, bucketed by the
        // chunk of target rows its representative lies in.
        let computed = self.evaluate_groups(selection, &work);
        for ((i, key, grouping), per_group) in work.into_iter().zip(computed) {
            let outcome = grouping
                .group_of
                .iter()
                .map(|&g| per_group[g as usize])
                .collect();
            let column = Arc::new(Column::new(outcome, per_group.len()));
            let cache = &mut self.rules[i].cache;
            if cache.len() >= CACHE_PER_RULE {
                cache.clear();
            }
            cache.insert(key, column.clone());
            columns[i] = Some(column);
        }
        columns
            .into_iter()
            .map(|c| c.expect("every column computed"))
            .collect()
    }

    fn grouping(&mut self, paths: &[FieldPath]) -> Arc<Grouping> {
        if let Some(g) = self.groupings.get(paths) {
            return g.clone();
        }
        let encoded: Vec<Arc<Encoded>> = paths.iter().map(|p| self.target.encode(p)).collect();
        let n = self.target.rows.len();
        let mut group_of = Vec::with_capacity(n);
        let mut representatives = Vec::new();
        let mut index: HashMap<Vec<u32>, u32> = HashMap::new();
        for t in 0..n {
            let key: Vec<u32> = encoded.iter().map(|e| e.ids[t]).collect();
            let next = index.len() as u32;
            let g = *index.entry(key).or_insert(next);
            if g == next {
                representatives.push(t);
            }
            group_of.push(g);
        }
        let g = Arc::new(Grouping {
            group_of,
            representatives,
        });
        self.groupings.insert(paths.to_vec(), g.clone());
        g
    }

    /// Verdicts from columns: per target, then for the selection. Column-major and
    /// branch-free, so it stays cheap at 10,000 targets × 100 rules.
    pub fn verdicts(&self, selection: usize, columns: Vec<Arc<Column>>) -> SelectionEval {
        let n = self.target.rows.len();
        let policy = &self.device_policy;
        // Passes are counted per distinct weight with integer adds (they vectorize and
        // are exact), then each target's passed weight is Σ weight × count.
        let mut by_weight: Vec<(f64, Vec<u32>)> = Vec::new();
        let mut required_passes = vec![0u32; n];
        let mut required_rules = 0u32;
        let mut total_weight = 0.0;
        for (slot, column) in self.rules.iter().zip(&columns) {
            let w = slot.weight;
            if Tally::scores(policy, w) {
                total_weight += w.weight;
                let counts = match by_weight.iter().position(|(x, _)| *x == w.weight) {
                    Some(i) => &mut by_weight[i].1,
                    None => {
                        by_weight.push((w.weight, vec![0; n]));
                        &mut by_weight.last_mut().expect("just pushed").1
                    }
                };
                for (c, &o) in counts.iter_mut().zip(&column.outcome) {
                    *c += u32::from(o == PASS);
                }
            }
            if w.required {
                required_rules += 1;
                for (c, &o) in required_passes.iter_mut().zip(&column.outcome) {
                    *c += u32::from(o == PASS);
                }
            }
        }
        let passed_weight = |t: usize| -> f64 {
            by_weight
                .iter()
                .map(|(w, counts)| w * f64::from(counts[t]))
                .sum()
        };
        let mut overrides: Vec<Option<bool>> = vec![None; n];
        for (&(s, t), &value) in &self.overrides {
            if s == selection {
                overrides[t] = Some(value);
            }
        }
        let devices: Vec<DeviceVerdict> = (0..n)
            .map(|t| {
                let tally = Tally {
                    passed_weight: passed_weight(t),
                    total_weight,
                    required_failed: required_passes[t] < required_rules,
                };
                verdict::device_verdict(policy, &tally, overrides[t])
            })
            .collect();
        let verdicts: Vec<Verdict> = devices.iter().map(|d| d.verdict).collect();
        let selection_verdict = verdict::selection_verdict(&self.selection_policy, &verdicts);
        let candidates: Vec<Candidate> = devices
            .iter()
            .enumerate()
            .map(|(t, d)| Candidate {
                id: &self.target_ids[t],
                verdict: d.verdict,
                score: d.score,
                priority: self.target_priority[t],
            })
            .collect();
        let recommended = verdict::recommend(selection_verdict, &candidates)
            .and_then(|id| self.target_ids.iter().position(|t| t == id));
        SelectionEval {
            selection,
            columns,
            devices,
            overrides,
            selection_verdict,
            recommended,
        }
    }
}

/// Target rows per parallel task (fewer for small pages, so both cores work).
fn chunk_len(targets: usize) -> usize {
    (targets / (4 * rayon::current_num_threads().max(1))).clamp(64, 2048)
}

impl Matrix {
    /// Evaluates each work item's rule once per group; returns per-group outcomes.
    fn evaluate_groups(
        &mut self,
        selection: usize,
        work: &[(usize, Vec<u32>, Arc<Grouping>)],
    ) -> Vec<Vec<u8>> {
        let n = self.parsed_targets.len();
        let chunk = chunk_len(n);
        // buckets[c] = (work index, group, representative) for targets in chunk c.
        let mut buckets: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); n.div_ceil(chunk).max(1)];
        for (w, (_, _, grouping)) in work.iter().enumerate() {
            for (g, &t) in grouping.representatives.iter().enumerate() {
                buckets[t / chunk].push((w as u32, g as u32, t as u32));
            }
        }
        let source = &self.source.rows[selection];
        let rules = &self.rules;
        let results: Vec<Vec<(u32, u32, u8)>> = self
            .parsed_targets
            .par_chunks_mut(chunk)
            .zip(buckets.par_iter())
            .enumerate()
            .map(|(c, (rows, bucket))| {
                if bucket.is_empty() {
                    return Vec::new();
                }
                let base = c * chunk;
                let arena = Bump::new();
                let src = DataValue::from_serde_value_in(source, &arena);
                let mut scratch = Bump::new();
                bucket
                    .iter()
                    .map(|&(w, g, t)| {
                        scratch.reset();
                        let rule = &rules[work[w as usize].0].compiled.logic;
                        let tgt = *rows[t as usize - base].value();
                        let outcome = match engine::eval_pair(rule, src, tgt, &scratch) {
                            Ok(v) if engine::truthy(v) => PASS,
                            Ok(_) => FAIL,
                            Err(_) => ERROR,
                        };
                        (w, g, outcome)
                    })
                    .collect()
            })
            .collect();
        let mut per_group: Vec<Vec<u8>> = work
            .iter()
            .map(|(_, _, g)| vec![FAIL; g.representatives.len()])
            .collect();
        for (w, g, outcome) in results.into_iter().flatten() {
            per_group[w as usize][g as usize] = outcome;
        }
        per_group
    }
}

/// Evaluates every pair naively (no grouping, no cache): the reference the fast path
/// is tested against, and the baseline of the benchmark.
pub fn naive_column(rule: &CompiledRule, source: &Value, targets: &[Value]) -> Vec<u8> {
    targets
        .iter()
        .map(|t| match engine::evaluate_rows(&rule.logic, source, t) {
            engine::Outcome::Value { pass: true, .. } => PASS,
            engine::Outcome::Value { .. } => FAIL,
            engine::Outcome::Error(_) => ERROR,
        })
        .collect()
}

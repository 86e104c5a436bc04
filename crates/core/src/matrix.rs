//! The rule × target matrix for one selection, computed fast and kept current.
//!
//! A rule's outcome depends only on the values it reads ([`Reads`]). Each field path a
//! rule reads is dictionary-encoded over the rows once; targets that agree on every
//! path a rule reads form one *group*, and the rule is evaluated once per group and
//! the outcome copied to its members. Columns are cached per rule and per projection of
//! the selected source, so a rule that reads only `target.*` is evaluated once and
//! reused for every selection, and an edit recomputes only the edited rule's column.
//! Columns are computed in parallel (rayon).

use std::borrow::Cow;

// A fast hasher (seeded per process) for the matrix's own maps of a page's values:
// encodings, projections, memo keys. SipHash was a tenth of a cold open.
use foldhash::{HashMap, HashSet};
use std::sync::Arc;

use datalogic_rs::DataValue;
use datalogic_rs::bumpalo::Bump;
use rayon::prelude::*;
use serde_json::Value;

use super::engine::{self, CompiledRule, FieldPath};
use super::model::{DevicePolicy, KeyHash, Page, Rule, SelectionPolicy};
use super::verdict::{
    self, Candidate, DeviceVerdict, FULL, NONE, RuleWeight, Scoring, Tally, Verdict,
};

mod bits;
mod forced;
mod outcome;
pub use bits::Bits;
pub use forced::{Devices, DevicesIter, Forced, OverrideTable, Overrides};
pub use outcome::{ERROR, FAIL, NOT_APPLICABLE, Outcome, PASS};

/// The outcomes of one rule for every target, for one selection: a byte per target
/// (what printers and explanations read) and the same as bitsets (what verdicts are
/// counted from).
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub outcome: Vec<Outcome>,
    /// How many engine evaluations computing it took (distinct groups).
    pub evaluations: usize,
    /// How many targets pass (counted once, when the column is built).
    pub passes: usize,
    /// How many targets the rule does not apply to.
    pub not_applicable: usize,
    /// The targets that pass, a bit each.
    pub pass_bits: Bits,
    /// The targets the rule does not apply to, a bit each (empty when there are none).
    pub not_applicable_bits: Bits,
}

impl Column {
    pub fn passed(&self, target: usize) -> bool {
        self.outcome[target] == PASS
    }

    /// A column of outcomes ([`PASS`], [`FAIL`], [`ERROR`]), computed with
    /// `evaluations` engine calls.
    pub fn of(outcome: Vec<Outcome>, evaluations: usize) -> Column {
        let any_not_applicable = outcome.contains(&NOT_APPLICABLE);
        Self::new(outcome, evaluations, any_not_applicable)
    }

    /// `any_not_applicable`: whether some outcome is n/a (told by the groups' outcomes,
    /// so a column without any is counted once).
    fn new(outcome: Vec<Outcome>, evaluations: usize, any_not_applicable: bool) -> Column {
        let pass_bits = Bits::of(&outcome, PASS);
        let not_applicable_bits = if any_not_applicable {
            Bits::of(&outcome, NOT_APPLICABLE)
        } else {
            Bits::none()
        };
        Column {
            outcome,
            evaluations,
            passes: pass_bits.count(),
            not_applicable: not_applicable_bits.count(),
            pass_bits,
            not_applicable_bits,
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
    /// One verdict per target, in row order (empty when only the selection's verdicts
    /// were asked for: [`Matrix::evaluate_verdicts`]): shared with every selection that
    /// reads the same values, the selection's own overrides forced over them.
    pub devices: Devices,
    /// How many targets are at each verdict (`[none, partial, full]`), overrides
    /// applied.
    pub verdict_counts: [usize; 3],
    /// This selection's overrides, by target, with their notes (none when only the
    /// verdicts were asked for).
    pub overrides: Overrides,
    /// Whether `devices` and `columns` were served by the matrix's memo: computed for
    /// an earlier selection that reads the same values, and shared with it (the same
    /// allocations), not copied.
    pub shared: bool,
    pub selection_verdict: Verdict,
    /// Index of the recommended target.
    pub recommended: Option<usize>,
}

impl SelectionEval {
    /// How many of `devices` are at each verdict (`[none, partial, full]`).
    pub fn count_verdicts<'d>(devices: impl IntoIterator<Item = &'d DeviceVerdict>) -> [usize; 3] {
        let mut counts = [0usize; 3];
        for d in devices {
            counts[usize::from(d.verdict.number())] += 1;
        }
        counts
    }
}

/// Dictionary-encoded values of one field path over the rows of a dataset.
struct Encoded {
    ids: Vec<u32>,
}

impl Encoded {
    /// Row `row`'s ids on some encoded paths: two rows with the same key read the
    /// same values there.
    fn key(encoded: &[Arc<Encoded>], row: usize) -> Vec<u32> {
        encoded.iter().map(|e| e.ids[row]).collect()
    }
}

self_cell::self_cell!(
    /// A dataset's rows in the engine's own form, in one arena: converted straight from
    /// the page's rows (dataset defaults filled in as they go), with no copy of the
    /// rows and no round trip through JSON text.
    pub struct ArenaRows {
        owner: Bump,
        #[covariant]
        dependent: RowValues,
    }
);

type RowValues<'a> = Vec<DataValue<'a>>;

impl ArenaRows {
    fn of(d: &super::model::Dataset) -> ArenaRows {
        if !d.patches.is_empty() {
            // Patched rows: each as its effective row (defaults, then its patch).
            return ArenaRows::new(Bump::new(), |arena| {
                d.rows
                    .iter()
                    .map(|row| {
                        let v = Value::Object(d.effective_row(row).into_owned());
                        DataValue::from_serde_value_in(&v, arena)
                    })
                    .collect()
            });
        }
        ArenaRows::new(Bump::new(), |arena| {
            // Keys shared by every row, as in `parse`.
            let mut keys = Keys::default();
            d.rows
                .iter()
                .map(|row| {
                    let lacks = |k: &String| row.get(k).is_none_or(Value::is_null);
                    let mut fields = datalogic_rs::bumpalo::collections::Vec::with_capacity_in(
                        row.len() + d.defaults.len(),
                        arena,
                    );
                    for (i, (k, v)) in row.iter().enumerate() {
                        let v = match d.defaults.get(k) {
                            Some(default) if v.is_null() => default,
                            _ => v,
                        };
                        fields.push((
                            keys.get(k, Some(i), arena),
                            DataValue::from_serde_value_in(v, arena),
                        ));
                    }
                    for (k, v) in &d.defaults {
                        if lacks(k) && !row.contains_key(k) {
                            fields.push((
                                keys.get(k, None, arena),
                                DataValue::from_serde_value_in(v, arena),
                            ));
                        }
                    }
                    DataValue::Object(fields.into_bump_slice())
                })
                .collect()
        })
    }

    /// Rows from their stored JSON texts, parsed straight into the arena (no
    /// intermediate tree), dataset defaults filled in. Each row is parsed in a scratch
    /// arena and copied in at its exact size, its keys shared with every other row's:
    /// the parser reserves room for 32 fields per object, which 100,000 rows of a dozen
    /// fields would otherwise keep (2.7 KB a row against 0.5).
    pub fn parse<'t>(
        d: &super::model::Dataset,
        texts: impl IntoIterator<Item = &'t str>,
    ) -> Result<ArenaRows, String> {
        if !d.patches.is_empty() {
            // Patched rows need their keys: read as rows, then as in `of`.
            let rows = texts
                .into_iter()
                .enumerate()
                .map(|(i, t)| {
                    serde_json::from_str::<super::model::Row>(t)
                        .map_err(|e| format!("{} row {i}: {e}", d.name))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let with_rows = super::model::Dataset {
                rows,
                ..d.without_rows()
            };
            return Ok(ArenaRows::of(&with_rows));
        }
        ArenaRows::try_new(Bump::new(), |arena| {
            let defaults: Vec<(&str, DataValue<'_>)> = d
                .defaults
                .iter()
                .map(|(k, v)| {
                    (
                        &*arena.alloc_str(k),
                        DataValue::from_serde_value_in(v, arena),
                    )
                })
                .collect();
            let mut scratch = Bump::new();
            let mut keys = Keys::default();
            texts
                .into_iter()
                .enumerate()
                .map(|(i, text)| {
                    scratch.reset();
                    let parsed = DataValue::from_str(text, &scratch)
                        .map_err(|e| format!("{} row {i}: {e}", d.name))?;
                    let row = compact_in(&parsed, arena, &mut keys);
                    Ok(with_defaults(row, &defaults, arena))
                })
                .collect()
        })
    }

    fn rows(&self) -> &[DataValue<'_>] {
        self.borrow_dependent()
    }

    /// Replaces row `i` (dataset defaults filled in); the old row's memory stays in
    /// the arena until the rows are rebuilt.
    fn replace(&mut self, i: usize, d: &super::model::Dataset, row: &super::model::Row) {
        let effective = d.effective_row(row);
        let value = Value::Object(effective.into_owned());
        self.with_dependent_mut(|arena, rows| {
            rows[i] = DataValue::from_serde_value_in(&value, arena);
        });
    }
}

/// Object keys copied once into an arena and shared: rows of one dataset mostly have
/// the same keys in the same order, so the key at the same place in the last top-level
/// object is tried first, then every key seen.
#[derive(Default)]
struct Keys<'a> {
    seen: HashSet<&'a str>,
    last: Vec<&'a str>,
}

impl<'a> Keys<'a> {
    /// `key` in the arena: the top-level object's key at place `at`, or any other.
    fn get(&mut self, key: &str, at: Option<usize>, arena: &'a Bump) -> &'a str {
        if let Some(at) = at
            && let Some(&last) = self.last.get(at)
            && last == key
        {
            return last;
        }
        let shared = match self.seen.get(key) {
            Some(&shared) => shared,
            None => {
                let shared: &'a str = arena.alloc_str(key);
                self.seen.insert(shared);
                shared
            }
        };
        if let Some(at) = at {
            // Places are visited in order: `last` holds every earlier one.
            self.last.truncate(at);
            self.last.push(shared);
        }
        shared
    }
}

/// A copy of `v` in `arena`, each array and object at its exact length, and object keys
/// shared through `keys` (rows of one dataset mostly have the same ones).
fn compact_in<'a>(v: &DataValue<'_>, arena: &'a Bump, keys: &mut Keys<'a>) -> DataValue<'a> {
    compact_at(v, arena, keys, true)
}

fn compact_at<'a>(
    v: &DataValue<'_>,
    arena: &'a Bump,
    keys: &mut Keys<'a>,
    top: bool,
) -> DataValue<'a> {
    match *v {
        DataValue::Null => DataValue::Null,
        DataValue::Bool(b) => DataValue::Bool(b),
        DataValue::Number(n) => DataValue::Number(n),
        DataValue::String(text) => DataValue::String(arena.alloc_str(text)),
        DataValue::Array(items) => DataValue::Array(
            arena.alloc_slice_fill_iter(items.iter().map(|x| compact_at(x, arena, keys, false))),
        ),
        DataValue::Object(fields) => DataValue::Object(arena.alloc_slice_fill_iter(
            fields.iter().enumerate().map(|(i, (k, x))| {
                let key = keys.get(k, top.then_some(i), arena);
                (key, compact_at(x, arena, keys, false))
            }),
        )),
        #[allow(unreachable_patterns)]
        DataValue::DateTime(t) => DataValue::DateTime(t),
        #[allow(unreachable_patterns)]
        DataValue::Duration(t) => DataValue::Duration(t),
    }
}

/// A row with the dataset's defaults in place of absent or null fields.
fn with_defaults<'a>(
    row: DataValue<'a>,
    defaults: &[(&'a str, DataValue<'a>)],
    arena: &'a Bump,
) -> DataValue<'a> {
    let DataValue::Object(fields) = row else {
        return row;
    };
    let lacks = |k: &str| {
        fields
            .iter()
            .find(|(f, _)| *f == k)
            .is_none_or(|(_, v)| matches!(v, DataValue::Null))
    };
    if !defaults.iter().any(|(k, _)| lacks(k)) {
        return row;
    }
    let mut out = datalogic_rs::bumpalo::collections::Vec::with_capacity_in(
        fields.len() + defaults.len(),
        arena,
    );
    for (k, v) in fields.iter() {
        let v = match defaults.iter().find(|(d, _)| d == k) {
            Some((_, default)) if matches!(v, DataValue::Null) => *default,
            _ => *v,
        };
        out.push((*k, v));
    }
    for (k, v) in defaults {
        if !fields.iter().any(|(f, _)| f == k) {
            out.push((*k, *v));
        }
    }
    DataValue::Object(out.into_bump_slice())
}

/// Rows of one dataset with their encoded field paths.
struct RowSet {
    rows: ArenaRows,
    encoded: HashMap<FieldPath, Arc<Encoded>>,
}

impl RowSet {
    fn new(rows: ArenaRows) -> Self {
        RowSet {
            rows,
            encoded: HashMap::default(),
        }
    }

    fn len(&self) -> usize {
        self.rows.rows().len()
    }

    fn encode(&mut self, path: &FieldPath) -> Arc<Encoded> {
        if let Some(e) = self.encoded.get(path) {
            return e.clone();
        }
        let rows = self.rows.rows();
        let mut dict: HashMap<Projection<'_>, u32> = HashMap::default();
        let ids = rows
            .iter()
            .map(|row| {
                let key = projection(row, path);
                let next = dict.len() as u32;
                *dict.entry(key).or_insert(next)
            })
            .collect();
        let e = Arc::new(Encoded { ids });
        self.encoded.insert(path.clone(), e.clone());
        e
    }

    /// The encodings of `paths`, in order.
    fn encode_all(&mut self, paths: &[FieldPath]) -> Vec<Arc<Encoded>> {
        paths.iter().map(|p| self.encode(p)).collect()
    }
}

/// The value at a path in a row, typed: finer than what the engine can tell apart.
/// Absent differs from null, and a walk that stops early records where and on what.
#[derive(Clone, Copy)]
enum Projection<'a> {
    Value(&'a DataValue<'a>),
    Stop(usize, &'a DataValue<'a>),
}

fn projection<'a>(row: &'a DataValue<'a>, path: &[String]) -> Projection<'a> {
    let mut at = row;
    for (depth, seg) in path.iter().enumerate() {
        let next = match at {
            DataValue::Object(fields) => fields.iter().find(|(k, _)| *k == seg).map(|(_, v)| v),
            DataValue::Array(items) => seg.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        match next {
            Some(v) => at = v,
            None => return Projection::Stop(depth, at),
        }
    }
    Projection::Value(at)
}

impl PartialEq for Projection<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Projection::Value(a), Projection::Value(b)) => same(a, b),
            (Projection::Stop(d, a), Projection::Stop(e, b)) => d == e && same(a, b),
            _ => false,
        }
    }
}

impl Eq for Projection<'_> {}

impl std::hash::Hash for Projection<'_> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        match self {
            Projection::Value(v) => hash_value(v, h),
            Projection::Stop(d, v) => {
                h.write_usize(usize::MAX - d);
                hash_value(v, h);
            }
        }
    }
}

/// Structural identity of two values: kinds, numbers by their bits, objects in order.
fn same(a: &DataValue<'_>, b: &DataValue<'_>) -> bool {
    use datalogic_rs::datavalue::NumberValue as N;
    match (a, b) {
        (DataValue::Null, DataValue::Null) => true,
        (DataValue::Bool(x), DataValue::Bool(y)) => x == y,
        (DataValue::Number(N::Integer(x)), DataValue::Number(N::Integer(y))) => x == y,
        (DataValue::Number(N::Float(x)), DataValue::Number(N::Float(y))) => {
            x.to_bits() == y.to_bits()
        }
        (DataValue::String(x), DataValue::String(y)) => x == y,
        (DataValue::Array(x), DataValue::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| same(a, b))
        }
        (DataValue::Object(x), DataValue::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((k, a), (l, b))| k == l && same(a, b))
        }
        _ => false,
    }
}

fn hash_value<H: std::hash::Hasher>(v: &DataValue<'_>, h: &mut H) {
    use datalogic_rs::datavalue::NumberValue as N;
    use std::hash::Hash;
    match v {
        DataValue::Null => h.write_u8(0),
        DataValue::Bool(b) => h.write_u8(1 + u8::from(*b)),
        DataValue::Number(N::Integer(i)) => {
            h.write_u8(3);
            h.write_i64(*i);
        }
        DataValue::Number(N::Float(f)) => {
            h.write_u8(4);
            h.write_u64(f.to_bits());
        }
        DataValue::String(s) => {
            h.write_u8(5);
            s.hash(h);
        }
        DataValue::Array(items) => {
            h.write_u8(6);
            h.write_usize(items.len());
            items.iter().for_each(|i| hash_value(i, h));
        }
        DataValue::Object(fields) => {
            h.write_u8(7);
            h.write_usize(fields.len());
            for (k, v) in fields.iter() {
                k.hash(h);
                hash_value(v, h);
            }
        }
        #[allow(unreachable_patterns)]
        _ => h.write_u8(8),
    }
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
    /// The encodings of `source_paths` (made on first use; dropped with the cache when
    /// a source row's edit re-encodes one).
    source_encoded: Option<Vec<Arc<Encoded>>>,
}

/// The bytes of columns kept per rule (one column per distinct source projection, a
/// byte per target and its pass and n/a bits: [`column_bytes`]), and the fewest columns
/// kept however many targets there are.
const CACHE_BYTES_PER_RULE: usize = 4 << 20;
const CACHE_PER_RULE: usize = 32;
/// What a cached column costs beyond its byte per target (its key, its `Column`, the
/// map's slot), roughly.
const COLUMN_OVERHEAD: usize = 256;

/// What a cached column of `targets` costs: a byte per target, up to two bits (its pass
/// and n/a bitsets), and the overhead.
fn column_bytes(targets: usize) -> usize {
    targets + targets.div_ceil(4) + COLUMN_OVERHEAD
}

/// Below this many evaluations, a piece of work runs on the calling thread: handing it
/// to the other core costs more than it saves.
const PARALLEL_FROM: usize = 2048;

/// A selection's evaluation before its own overrides: what every source that reads
/// the same values gets.
struct Base {
    columns: Vec<Arc<Column>>,
    devices: Arc<[DeviceVerdict]>,
    decided: Decided,
    /// Served by the memo, verdicts and all.
    shared: bool,
}

/// What the memo keeps of every evaluation it has seen: its columns (shared with the
/// rules' caches) and what decides the selection, a few hundred bytes. The targets'
/// verdicts are kept apart, within [`MEMO_BYTES`].
#[derive(Clone)]
struct Lean {
    columns: Vec<Arc<Column>>,
    decided: Decided,
}

/// What decides a selection from its targets' verdicts: how many are at each verdict
/// (the selection's verdict follows), and the target a recommendation would name.
#[derive(Clone, Copy)]
struct Decided {
    counts: [usize; 3],
    best: Option<usize>,
}

/// Evaluations without overrides, by the selected source's projection on every
/// source path the rules read (after defaults and patches): a page of 100,000 sources
/// whose rules read a few source fields is evaluated once per distinct projection.
/// Two tiers: what decides each selection ([`Lean`], small, for every projection
/// seen), and the targets' verdicts of as many as fit in [`MEMO_BYTES`]. Emptied
/// whenever a rule, a weight, a policy or a row changes, and when a rule's column
/// cache is emptied (so the memo never holds the only copy of a column).
#[derive(Default)]
struct Memo {
    /// The encoding of every source path some rule reads (made on first use).
    paths: Option<Vec<Arc<Encoded>>>,
    lean: HashMap<Vec<u32>, Lean>,
    /// What the lean tier holds, roughly, in bytes.
    lean_bytes: usize,
    devices: HashMap<Vec<u32>, Arc<[DeviceVerdict]>>,
    /// What the verdicts tier holds, in bytes.
    bytes: usize,
    /// How many evaluations were computed rather than found (kept across clears).
    computed: usize,
}

/// The memory the memo's targets' verdicts may hold: past it, new ones are not kept.
const MEMO_BYTES: usize = 32 << 20;
/// The memory the memo's lean tier may hold before it is emptied.
const LEAN_BYTES: usize = 32 << 20;

impl Memo {
    fn clear(&mut self) {
        self.forget();
        self.paths = None;
    }

    /// Forgets every evaluation (the encodings stay).
    fn forget(&mut self) {
        *self = Memo {
            paths: self.paths.take(),
            computed: self.computed,
            ..Memo::default()
        };
    }

    fn keep_lean(&mut self, key: Vec<u32>, lean: Lean) {
        let bytes = 96 + 4 * key.len() + 8 * lean.columns.len();
        if self.lean_bytes + bytes > LEAN_BYTES {
            self.lean.clear();
            self.lean_bytes = 0;
        }
        self.lean_bytes += bytes;
        self.lean.insert(key, lean);
    }

    fn keep_devices(&mut self, key: Vec<u32>, devices: Arc<[DeviceVerdict]>) {
        let bytes = 64 + 4 * key.len() + std::mem::size_of_val(&*devices);
        if !self.devices.contains_key(&key) && self.bytes + bytes <= MEMO_BYTES {
            self.bytes += bytes;
            self.devices.insert(key, devices);
        }
    }
}

/// The live matrix of a page.
pub struct Matrix {
    rules: Vec<Slot>,
    source: RowSet,
    target: RowSet,
    groupings: HashMap<Vec<FieldPath>, Arc<Grouping>>,
    target_ids: Vec<String>,
    target_priority: Vec<f64>,
    /// Every override by source, then target: a selection reads its own overrides
    /// (a range of the table), never the whole page's. Shared with the evaluations
    /// that hold a range of it; an edit copies it only while one does.
    overrides: Arc<OverrideTable>,
    /// Evaluations without overrides by the selected source's projection on every
    /// source path some rule reads: sources that agree there share one ([`Memo`]).
    memo: Memo,
    /// The overrides (indexes into the page's) whose source or target row the page does
    /// not have: kept, inactive.
    orphaned: Vec<usize>,
    /// The keyHash of every target row, when the matrix was built without the page's
    /// target rows (else they are computed from the page when overrides need them).
    target_hashes: Option<Vec<KeyHash>>,
    /// The same of every source row, when built without the page's source rows.
    source_hashes: Option<Vec<KeyHash>>,
    /// The device policy and the rules' weights as scores sum them: remade when a
    /// rule's weight, the rule list or the policy changes (not per evaluation).
    scoring: Scoring,
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
        let d = &page.target;
        let ids = d.rows.iter().map(|r| d.row_id(r)).collect();
        Self::build(
            page,
            (ArenaRows::of(&page.source), None),
            ArenaRows::of(d),
            ids,
            None,
        )
    }

    /// Compiles every rule of a page whose target rows are given in the engine's form
    /// ([`ArenaRows::parse`] from their stored texts) with their stored keys (the row's
    /// key and keyHash, as the page model computed them): `page.target.rows` is not
    /// read, so a page loaded without them serves.
    pub fn with_targets(
        page: &Page,
        targets: ArenaRows,
        keys: Vec<(String, String)>,
    ) -> Result<Matrix, CompileError> {
        let sources = (ArenaRows::of(&page.source), None);
        Self::with_rows(page, sources, targets, keys)
    }

    /// [`Matrix::with_targets`] with the source rows given the same way too, with their
    /// keyHashes: neither side's `rows` of the page is read.
    pub fn with_rows(
        page: &Page,
        sources: (ArenaRows, Option<Vec<KeyHash>>),
        targets: ArenaRows,
        keys: Vec<(String, String)>,
    ) -> Result<Matrix, CompileError> {
        let d = &page.target;
        let (ids, hashes): (Vec<String>, Vec<KeyHash>) = keys
            .into_iter()
            .map(|(key, hash)| {
                let hash = KeyHash::of_stored(&key, &hash);
                // The id of a single-field key is its value: the key is `field=value`.
                let id = match d.key.as_slice() {
                    [field] => key
                        .strip_prefix(field.as_str())
                        .and_then(|k| k.strip_prefix('='))
                        .map_or_else(|| key.clone(), str::to_owned),
                    _ => key,
                };
                (id, hash)
            })
            .unzip();
        Self::build(page, sources, targets, ids, Some(hashes))
    }

    fn build(
        page: &Page,
        (sources, source_hashes): (ArenaRows, Option<Vec<KeyHash>>),
        targets: ArenaRows,
        target_ids: Vec<String>,
        target_hashes: Option<Vec<KeyHash>>,
    ) -> Result<Matrix, CompileError> {
        let d = &page.target;
        let priority = super::priority::Compiled::new(d.priority.as_deref());
        let target_priority = targets.rows().iter().map(|r| priority.of(r)).collect();
        let mut m = Matrix {
            rules: Vec::with_capacity(page.rules.len()),
            source: RowSet::new(sources),
            target: RowSet::new(targets),
            groupings: HashMap::default(),
            target_ids,
            target_priority,
            overrides: Arc::default(),
            memo: Memo::default(),
            orphaned: Vec::new(),
            scoring: Scoring::new(&page.device_policy, &[]),
            selection_policy: page.selection_policy.clone(),
            target_hashes,
            source_hashes,
        };
        m.set_overrides(page);
        for rule in &page.rules {
            let slot = Self::slot(rule)?;
            m.rules.push(slot);
        }
        m.rescore();
        Ok(m)
    }

    /// The ids of the target rows, in order.
    pub fn target_ids(&self) -> &[String] {
        &self.target_ids
    }

    /// Field `field` of target row `t` as the dataset holds it (defaults filled in).
    pub fn target_field(&self, t: usize, field: &str) -> Option<Value> {
        self.target.rows.rows()[t]
            .get(field)
            .map(|v| v.to_serde_value())
    }

    fn slot(rule: &Rule) -> Result<Slot, CompileError> {
        let compiled =
            engine::compile_rule(&rule.logic, rule.applies_when.as_ref().map(|c| &c.logic))
                .map_err(|message| CompileError {
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
            cache: HashMap::default(),
            source_encoded: None,
        }
    }

    pub fn rule_count(&self) -> usize {
        self.rules.len()
    }

    pub fn target_count(&self) -> usize {
        self.target.len()
    }

    pub fn source_count(&self) -> usize {
        self.source.len()
    }

    /// The compiled form of rule `i` (for explanations).
    /// The page's overrides (by index) whose source or target row it does not have.
    pub fn orphaned_overrides(&self) -> &[usize] {
        &self.orphaned
    }

    pub fn compiled(&self, i: usize) -> &CompiledRule {
        &self.rules[i].compiled
    }

    /// Replaces rule `i` (an edit): only its column is recomputed next time.
    pub fn replace_rule(&mut self, i: usize, rule: &Rule) -> Result<(), CompileError> {
        self.rules[i] = Self::slot(rule)?;
        self.rescore();
        Ok(())
    }

    /// Replaces rule `i` with an already compiled rule.
    pub fn replace_compiled(&mut self, i: usize, compiled: Arc<CompiledRule>, rule: &Rule) {
        self.rules[i] = Self::slot_of(compiled, rule);
        self.rescore();
    }

    /// Changes only a rule's weight and required flag: no re-evaluation.
    pub fn set_rule_weight(&mut self, i: usize, required: bool, weight: f64) {
        self.rules[i].weight = RuleWeight { required, weight };
        self.rescore();
    }

    pub fn insert_rule(&mut self, i: usize, rule: &Rule) -> Result<(), CompileError> {
        let slot = Self::slot(rule)?;
        self.rules.insert(i, slot);
        self.rescore();
        Ok(())
    }

    pub fn remove_rule(&mut self, i: usize) {
        self.rules.remove(i);
        self.rescore();
    }

    fn weights(&self) -> Vec<RuleWeight> {
        self.rules.iter().map(|r| r.weight).collect()
    }

    /// Remakes the scoring from the rules' weights (after the rule list or a weight
    /// changed).
    fn rescore(&mut self) {
        self.scoring = Scoring::new(&self.scoring.policy, &self.weights());
        self.memo.clear();
    }

    /// Drops every cached column (encodings stay): the next evaluation recomputes all.
    pub fn invalidate(&mut self) {
        self.rules.iter_mut().for_each(|r| r.cache.clear());
        self.memo.clear();
    }

    pub fn set_policies(&mut self, device: &DevicePolicy, selection: &SelectionPolicy) {
        self.memo.clear();
        self.scoring = Scoring::new(device, &self.weights());
        self.selection_policy = selection.clone();
    }

    /// Re-reads the page's overrides (target rows are read from the matrix's own).
    pub fn set_overrides(&mut self, page: &Page) {
        let hash = |h: Option<String>| h.as_deref().and_then(KeyHash::from_hex);
        let forced = page.overrides.iter().map(|o| {
            let (source, target) = (hash(o.source_hash()), hash(o.target_hash()));
            (source, target, o.value, o.note.clone())
        });
        self.place_overrides(page, forced);
    }

    /// The page's overrides as the store keeps them (by keyHash), for a matrix built with both sides' keyHashes ([`Matrix::with_rows`]):
    /// no key is read or hashed. `false` when that matrix was not, or when some
    /// override names a row the matrix does not have: it has no label here, so the
    /// caller sets the page's overrides with [`Matrix::set_overrides`] instead.
    pub fn set_override_hashes(
        &mut self,
        page: &Page,
        forced: Vec<super::model::HashedOverride>,
    ) -> bool {
        if self.source_hashes.is_none() || self.target_hashes.is_none() {
            return false;
        }
        let forced = forced
            .into_iter()
            .map(|o| (o.source_hash, o.target_hash, o.value, o.note));
        self.place_overrides(page, forced);
        self.orphaned.is_empty()
    }

    /// Places overrides named by (source keyHash, target keyHash, value, note); those
    /// naming a row the matrix does not have are orphaned (by their place in `forced`).
    fn place_overrides(
        &mut self,
        page: &Page,
        forced: impl ExactSizeIterator<Item = (Option<KeyHash>, Option<KeyHash>, bool, Option<String>)>,
    ) {
        self.overrides = Arc::default();
        self.orphaned.clear();
        if forced.len() == 0 {
            // No key hashes to compute when there is nothing to look up.
            return;
        }
        let hashes_of = |d: &super::model::Dataset| -> Vec<KeyHash> {
            d.rows
                .iter()
                .map(|r| KeyHash::of_key(&d.row_key(r)))
                .collect()
        };
        let (source_hashes, target_hashes) = (
            self.source_hashes
                .as_ref()
                .map_or_else(|| Cow::Owned(hashes_of(&page.source)), Cow::Borrowed),
            self.target_hashes
                .as_ref()
                .map_or_else(|| Cow::Owned(hashes_of(&page.target)), Cow::Borrowed),
        );
        fn index(hashes: &[KeyHash]) -> HashMap<KeyHash, usize> {
            let mut index = HashMap::with_capacity_and_hasher(hashes.len(), Default::default());
            index.extend(hashes.iter().copied().zip(0..));
            index
        }
        let (sources, targets) = (index(&source_hashes), index(&target_hashes));
        let mut placed = Vec::with_capacity(forced.len());
        for (i, (source, target, value, note)) in forced.enumerate() {
            let s = source.and_then(|h| sources.get(&h).copied());
            let t = target.and_then(|h| targets.get(&h).copied());
            let (Some(s), Some(t)) = (s, t) else {
                self.orphaned.push(i);
                continue;
            };
            placed.push((
                s,
                Forced {
                    target: t,
                    value,
                    note,
                },
            ));
        }
        self.overrides = Arc::new(OverrideTable::new(source_hashes.len(), placed));
    }

    /// Replaces row `i` of one side after an edit of the fields `changed` (a cell edit):
    /// only the encodings, groupings and cached columns that read those fields are
    /// dropped; every other rule keeps its columns.
    pub fn replace_row(
        &mut self,
        side: super::model::Side,
        i: usize,
        d: &super::model::Dataset,
        row: &super::model::Row,
        changed: &[String],
    ) {
        let reads = |p: &FieldPath| p.is_empty() || changed.iter().any(|f| p[0] == *f);
        let set = match side {
            super::model::Side::Source => &mut self.source,
            super::model::Side::Target => &mut self.target,
        };
        set.rows.replace(i, d, row);
        set.encoded.retain(|p, _| !reads(p));
        // A key field edited: the row's keyHash (where it is kept) with it.
        let hashes = match side {
            super::model::Side::Source => &mut self.source_hashes,
            super::model::Side::Target => &mut self.target_hashes,
        };
        if let Some(hash) = hashes.as_mut().and_then(|h| h.get_mut(i)) {
            *hash = KeyHash::of_key(&d.row_key(row));
        }
        // Re-encoded paths number their values anew: the memo's keys mean nothing now.
        self.memo.clear();
        if side == super::model::Side::Target {
            self.groupings.retain(|paths, _| !paths.iter().any(reads));
        }
        for slot in &mut self.rules {
            let paths = match side {
                super::model::Side::Source => &slot.source_paths,
                super::model::Side::Target => &slot.target_paths,
            };
            if paths.iter().any(reads) {
                slot.cache.clear();
                slot.source_encoded = None;
            }
        }
        if side == super::model::Side::Target {
            // Its id too: the recommendation breaks ties by id.
            self.target_ids[i] = d.row_id(row);
            let priority = super::priority::Compiled::new(d.priority.as_deref());
            if priority.reads_any(changed) {
                self.target_priority[i] = priority.of_row(&d.effective_row(row));
            }
        }
    }

    /// Sets (`Some`) or clears (`None`) the override of one (source, target) pair.
    pub fn put_override(
        &mut self,
        source: usize,
        target: usize,
        value: Option<(bool, Option<String>)>,
    ) {
        let sources = self.source.len();
        Arc::make_mut(&mut self.overrides).set(sources, source, target, value);
    }

    /// Evaluates every rule for the selected source and derives the verdicts.
    /// Columns already computed for this source's projection are reused.
    pub fn evaluate(&mut self, selection: usize) -> SelectionEval {
        if selection >= self.source.len() {
            let columns = self.columns(selection);
            return self.verdicts(selection, columns);
        }
        let key = self.memo_key(selection);
        let base = match self.memo.lean.get(&key).cloned() {
            Some(lean) => {
                let (devices, shared) = match self.memo.devices.get(&key) {
                    Some(devices) => (devices.clone(), true),
                    None => {
                        let devices: Arc<[DeviceVerdict]> = self.devices(&lean.columns).into();
                        self.memo.keep_devices(key, devices.clone());
                        (devices, false)
                    }
                };
                Base {
                    columns: lean.columns,
                    devices,
                    decided: lean.decided,
                    shared,
                }
            }
            None => self.remember(key, selection, true),
        };
        self.finish(selection, &base)
    }

    /// The selection's verdict, its recommendation and its verdict counts, with its
    /// columns and overrides but without its targets' verdicts (`devices` is empty):
    /// for aggregates, which a memo of what decides each distinct projection answers
    /// without a target's verdict. A selection's own overrides mend that for their
    /// targets alone (each one's verdict before them computed on its own); only when
    /// one overrides the target that was best is the selection evaluated in full.
    pub fn evaluate_verdicts(&mut self, selection: usize) -> SelectionEval {
        if selection >= self.source.len() {
            return self.evaluate(selection);
        }
        let key = self.memo_key(selection);
        let (columns, mut decided) = match self.memo.lean.get(&key) {
            Some(lean) => (lean.columns.clone(), lean.decided),
            None => {
                let base = self.remember(key, selection, false);
                (base.columns, base.decided)
            }
        };
        let mut overrides = Overrides::default();
        let own = self.overrides.of(selection);
        if !own.is_empty() {
            let (_, rank_all) = self.force(own, &mut decided, |t| self.device_at(&columns, t));
            if rank_all {
                return self.evaluate(selection);
            }
            overrides = Overrides::of_source(self.overrides.clone(), selection);
        }
        let (selection_verdict, recommended) = self.decided(decided);
        SelectionEval {
            selection,
            columns,
            devices: Devices::default(),
            verdict_counts: decided.counts,
            overrides,
            shared: false,
            selection_verdict,
            recommended,
        }
    }

    /// Computes a selection's evaluation without overrides and keeps it in the memo
    /// (its targets' verdicts too with `devices`).
    fn remember(&mut self, key: Vec<u32>, selection: usize, devices: bool) -> Base {
        let columns = self.columns(selection);
        // The lean tier may have been emptied while the verdicts were kept: they are
        // reused (the same allocation, which printers may have made bytes of).
        let base = match self.memo.devices.get(&key).cloned() {
            Some(kept) => Base {
                decided: self.decide(kept.iter()),
                devices: kept,
                columns,
                shared: true,
            },
            None => self.base(columns),
        };
        self.memo.computed += 1;
        self.memo.keep_lean(
            key.clone(),
            Lean {
                columns: base.columns.clone(),
                decided: base.decided,
            },
        );
        if devices {
            self.memo.keep_devices(key, base.devices.clone());
        }
        base
    }

    /// How many selections' verdicts were computed since the matrix was built; the
    /// others were served by an evaluation of a source that reads the same values.
    pub fn evaluations_computed(&self) -> usize {
        self.memo.computed
    }

    /// Source `selection`'s projection on every source path the rules read: two
    /// sources with the same key get the same columns.
    fn memo_key(&mut self, selection: usize) -> Vec<u32> {
        if self.memo.paths.is_none() {
            let mut paths: Vec<FieldPath> = Vec::new();
            for p in self.rules.iter().flat_map(|r| &r.source_paths) {
                if !paths.contains(p) {
                    paths.push(p.clone());
                }
            }
            self.memo.paths = Some(self.source.encode_all(&paths));
        }
        Encoded::key(self.memo.paths.as_deref().expect("made above"), selection)
    }

    /// Every rule's column for a selection, computing only what the caches lack.
    pub fn columns(&mut self, selection: usize) -> Vec<Arc<Column>> {
        let all: Vec<usize> = (0..self.rules.len()).collect();
        self.columns_of(selection, &all)
    }

    /// The columns of rules `which` (indexes, in that order) for a selection, computing
    /// only what the caches lack.
    pub fn columns_of(&mut self, selection: usize, which: &[usize]) -> Vec<Arc<Column>> {
        if selection >= self.source.len() {
            // No such source (a page without source rows): nothing passes.
            let none = Arc::new(Column::new(vec![FAIL; self.target.len()], 0, false));
            return vec![none; which.len()];
        }
        // Sequential part: encodings, groupings and cache look-ups.
        let mut work = Vec::new();
        // Where each piece of work goes in `columns`.
        let mut slots = Vec::new();
        let mut columns: Vec<Option<Arc<Column>>> = Vec::with_capacity(which.len());
        for (slot, &i) in which.iter().enumerate() {
            let key = self.slot_key(i, selection);
            if let Some(c) = self.rules[i].cache.get(&key) {
                columns.push(Some(c.clone()));
                continue;
            }
            let grouping = self.grouping(&self.rules[i].target_paths.clone());
            work.push((i, key, grouping));
            slots.push(slot);
            columns.push(None);
        }
        // Parallel part: every (rule, group representative) pair, bucketed by the
        // chunk of target rows its representative lies in.
        let computed = self.evaluate_groups(selection, &work);
        for (((i, key, grouping), per_group), slot) in work.into_iter().zip(computed).zip(slots) {
            let outcome = grouping
                .group_of
                .iter()
                .map(|&g| per_group[g as usize])
                .collect();
            let any_not_applicable = per_group.contains(&NOT_APPLICABLE);
            let column = Arc::new(Column::new(outcome, per_group.len(), any_not_applicable));
            let cache = &mut self.rules[i].cache;
            if cache.len()
                >= CACHE_PER_RULE.max(CACHE_BYTES_PER_RULE / column_bytes(self.target.len()))
            {
                cache.clear();
                // The memo shares its columns with these caches: emptied with them, it
                // never holds a column nobody else does.
                self.memo.forget();
            }
            cache.insert(key, column.clone());
            columns[slot] = Some(column);
        }
        columns
            .into_iter()
            .map(|c| c.expect("every column computed"))
            .collect()
    }

    /// Source `selection`'s projection on the paths rule `i` reads: its columns' key.
    fn slot_key(&mut self, i: usize, selection: usize) -> Vec<u32> {
        let slot = &mut self.rules[i];
        let source = &mut self.source;
        let encoded = slot
            .source_encoded
            .get_or_insert_with(|| source.encode_all(&slot.source_paths));
        Encoded::key(encoded, selection)
    }

    fn grouping(&mut self, paths: &[FieldPath]) -> Arc<Grouping> {
        if let Some(g) = self.groupings.get(paths) {
            return g.clone();
        }
        let encoded = self.target.encode_all(paths);
        let n = self.target.len();
        let mut group_of = Vec::with_capacity(n);
        let mut representatives = Vec::new();
        let mut index: HashMap<Vec<u32>, u32> = HashMap::default();
        for t in 0..n {
            let key = Encoded::key(&encoded, t);
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
        self.finish(selection, &self.base(columns))
    }

    /// The evaluation without overrides (what every source sharing these columns
    /// gets before its own overrides).
    fn base(&self, columns: Vec<Arc<Column>>) -> Base {
        let devices = self.devices(&columns);
        let decided = self.decide(&devices);
        Base {
            columns,
            devices: devices.into(),
            decided,
            shared: false,
        }
    }

    /// Every target's verdict from the rules' columns, before overrides: from weighted
    /// bit counts.
    fn devices(&self, columns: &[Arc<Column>]) -> Vec<DeviceVerdict> {
        self.devices_with(columns, self.target.len().max(64))
    }

    /// [`Matrix::devices`], deciding each distinct tally once when there are at most
    /// `distinct` possible (else each target's).
    fn devices_with(&self, columns: &[Arc<Column>], distinct: usize) -> Vec<DeviceVerdict> {
        debug_assert_eq!(columns.len(), self.scoring.rules.len(), "a column per rule");
        let n = self.target.len();
        let words = n.div_ceil(64);
        let scoring = &self.scoring;
        let policy = &scoring.policy;
        // Passes are counted per distinct weight from the columns' bits (bit-sliced
        // counts: 64 targets a word, exact), then each target's passed weight is
        // Σ weight × count; its total weight likewise, so that a target that passes every
        // rule scores exactly 1 (a running sum would not: 0.1 + 1.1 + 0.1 ≠ 0.1 × 2 +
        // 1.1). In exact scoring the weights are whole units and every sum is exact.
        // Per distinct weight, in the order the rules meet them: its rules, the passes per
        // target, and (only when some rule of that weight does not apply somewhere) the
        // rules that do not apply per target.
        struct ByWeight {
            weight: f64,
            rules: u32,
            passes: bits::Sliced,
            not_applicable: Option<bits::Sliced>,
        }
        let mut by_weight: Vec<ByWeight> = Vec::new();
        let mut class_of = Vec::with_capacity(columns.len());
        for &w in &scoring.rules {
            if !Tally::scores(policy, w) {
                class_of.push(None);
                continue;
            }
            let i = match by_weight.iter().position(|b| b.weight == w.weight) {
                Some(i) => i,
                None => {
                    by_weight.push(ByWeight {
                        weight: w.weight,
                        rules: 0,
                        passes: bits::Sliced::new(0, 0),
                        not_applicable: None,
                    });
                    by_weight.len() - 1
                }
            };
            by_weight[i].rules += 1;
            class_of.push(Some(i));
        }
        for b in &mut by_weight {
            b.passes = bits::Sliced::new(n, b.rules);
        }
        let mut required_failed = vec![0u64; words];
        for ((&w, column), class) in scoring.rules.iter().zip(columns).zip(&class_of) {
            let na = column.not_applicable_bits.words();
            if let Some(&i) = class.as_ref() {
                let b = &mut by_weight[i];
                b.passes.add(&column.pass_bits);
                if !na.is_empty() {
                    let rules = b.rules;
                    b.not_applicable
                        .get_or_insert_with(|| bits::Sliced::new(n, rules))
                        .add(&column.not_applicable_bits);
                }
            }
            if w.required {
                // Fail and error: neither pass nor n/a.
                for (wi, (f, &p)) in required_failed
                    .iter_mut()
                    .zip(column.pass_bits.words())
                    .enumerate()
                {
                    *f |= !(p | na.get(wi).copied().unwrap_or(0)) & bits::live(wi, n);
                }
            }
        }
        // Σ weight × the rules that apply: the same for every target unless some rule
        // does not apply somewhere.
        let every_rule: f64 = by_weight
            .iter()
            .map(|b| b.weight * f64::from(b.rules))
            .sum();
        let some_not_applicable = by_weight.iter().any(|b| b.not_applicable.is_some());
        // A target's verdict follows from its tally: its passes and n/a rules per weight
        // and whether a required rule failed.
        let verdict_of = |passes: &mut dyn Iterator<Item = (u32, u32)>, failed: bool| {
            // From -0.0, as `Iterator::sum` (and so `device_at`) starts.
            let (mut passed_weight, mut total_weight) = (-0.0, -0.0);
            for (b, (p, na)) in by_weight.iter().zip(passes) {
                passed_weight += b.weight * f64::from(p);
                total_weight += b.weight * f64::from(b.rules - na);
            }
            let tally = Tally {
                passed_weight,
                total_weight: if some_not_applicable {
                    total_weight
                } else {
                    every_rule
                },
                required_failed: failed,
            };
            verdict::device_verdict(scoring, &tally, None)
        };
        // When the tallies are few, each target's is a key in mixed radix (whether a
        // required rule failed, then per weight its passes and n/a rules), made 64
        // targets at a time from the bit-sliced counts, and each distinct key is decided
        // once.
        let space = by_weight.iter().try_fold(2u32, |space, b| {
            let radix = b.rules + 1;
            let space = space.checked_mul(radix)?;
            match b.not_applicable {
                Some(_) => space.checked_mul(radix),
                None => Some(space),
            }
        });
        if let Some(space) = space.filter(|&s| s as usize <= distinct) {
            let mut keys = vec![0u32; words * 64];
            for (w, chunk) in keys.chunks_exact_mut(64).enumerate() {
                let chunk: &mut [u32; 64] = chunk.try_into().expect("64 keys");
                let failed = required_failed[w];
                for (b, key) in chunk.iter_mut().enumerate() {
                    *key = (failed >> b) as u32 & 1;
                }
                let mut radix = 2;
                for b in &by_weight {
                    b.passes.add_scaled(w, radix, chunk);
                    radix *= b.rules + 1;
                    if let Some(na) = &b.not_applicable {
                        na.add_scaled(w, radix, chunk);
                        radix *= b.rules + 1;
                    }
                }
            }
            let mut table: Vec<Option<DeviceVerdict>> = vec![None; space as usize];
            return keys[..n]
                .iter()
                .map(|&key| {
                    *table[key as usize].get_or_insert_with(|| {
                        // The key read back: failed, then per weight passes and n/a.
                        let mut rest = key >> 1;
                        let mut digit = |radix: u32| {
                            let d = rest % radix;
                            rest /= radix;
                            d
                        };
                        let tally: Vec<(u32, u32)> = by_weight
                            .iter()
                            .map(|b| {
                                let p = digit(b.rules + 1);
                                let na = match b.not_applicable {
                                    Some(_) => digit(b.rules + 1),
                                    None => 0,
                                };
                                (p, na)
                            })
                            .collect();
                        verdict_of(&mut tally.into_iter(), key & 1 == 1)
                    })
                })
                .collect();
        }
        // Else each target's tally is read off the counts and decided.
        let mut passes = vec![[0u32; 64]; by_weight.len()];
        let mut not_applicable = vec![[0u32; 64]; by_weight.len()];
        let mut devices = Vec::with_capacity(n);
        for (w, &failed) in required_failed.iter().enumerate() {
            for (c, b) in by_weight.iter().enumerate() {
                b.passes.unpack(w, &mut passes[c]);
                if let Some(na) = &b.not_applicable {
                    na.unpack(w, &mut not_applicable[c]);
                }
            }
            for k in 0..(n - w * 64).min(64) {
                let mut tally = passes
                    .iter()
                    .zip(&not_applicable)
                    .map(|(p, na)| (p[k], na[k]));
                devices.push(verdict_of(&mut tally, failed >> k & 1 == 1));
            }
        }
        devices
    }

    /// Target `t`'s verdict from the rules' columns, before overrides: what
    /// [`Matrix::devices`] gives it (the same sums in the same order), for one target.
    fn device_at(&self, columns: &[Arc<Column>], t: usize) -> DeviceVerdict {
        let scoring = &self.scoring;
        // Per distinct weight (in the order `devices` meets them): its rules, and of
        // them those that pass and those that do not apply on `t`.
        let mut by_weight: Vec<(f64, u32, u32, u32)> = Vec::new();
        let mut required_failed = false;
        for (&w, column) in scoring.rules.iter().zip(columns) {
            let o = column.outcome[t];
            if Tally::scores(&scoring.policy, w) {
                let i = match by_weight.iter().position(|b| b.0 == w.weight) {
                    Some(i) => i,
                    None => {
                        by_weight.push((w.weight, 0, 0, 0));
                        by_weight.len() - 1
                    }
                };
                let b = &mut by_weight[i];
                b.1 += 1;
                b.2 += u32::from(o == PASS);
                b.3 += u32::from(o == NOT_APPLICABLE);
            }
            required_failed |= w.required && o.fails();
        }
        let tally = Tally {
            passed_weight: by_weight.iter().map(|b| b.0 * f64::from(b.2)).sum(),
            total_weight: by_weight.iter().map(|b| b.0 * f64::from(b.1 - b.3)).sum(),
            required_failed,
        };
        verdict::device_verdict(scoring, &tally, None)
    }

    /// The selection's verdict and recommended target from its targets' verdicts: one
    /// pass, the first best in [`verdict::rank`]'s order (as [`verdict::best_at`]).
    fn decide<'d>(&self, devices: impl IntoIterator<Item = &'d DeviceVerdict>) -> Decided {
        let mut counts = [0usize; 3];
        let mut best: Option<(usize, Candidate)> = None;
        for (t, d) in devices.into_iter().enumerate() {
            counts[usize::from(d.verdict.number())] += 1;
            if d.verdict == NONE {
                continue;
            }
            // Cheap tests first: most targets lose on their verdict or their score.
            if let Some((_, b)) = &best
                && (d.verdict < b.verdict || (d.verdict == b.verdict && d.score < b.score))
            {
                continue;
            }
            let c = self.candidate(d, t);
            if best
                .as_ref()
                .is_none_or(|(_, b)| verdict::rank(&c, b) == std::cmp::Ordering::Less)
            {
                best = Some((t, c));
            }
        }
        Decided {
            counts,
            best: best.map(|(t, _)| t),
        }
    }

    /// Target `t` as a candidate for the recommendation.
    fn candidate<'a>(&'a self, d: &DeviceVerdict, t: usize) -> Candidate<'a> {
        Candidate {
            id: &self.target_ids[t],
            verdict: d.verdict,
            score: d.score,
            priority: self.target_priority[t],
        }
    }

    /// One selection's evaluation from the evaluation without overrides: the
    /// selection's own overrides (read from its index, not the page's) force their
    /// targets' verdicts; the verdict counts and the best candidate are mended for
    /// those targets alone (all targets are ranked again only when the override moved
    /// the best one).
    fn finish(&self, selection: usize, base: &Base) -> SelectionEval {
        let own = self.overrides.of(selection);
        let mut decided = base.decided;
        let (devices, overrides) = if own.is_empty() {
            (Devices::from(base.devices.clone()), Overrides::default())
        } else {
            // The shared verdicts stay shared: the overridden targets' are forced over
            // them (no copy of every target's), and the overrides are the selection's
            // range of the matrix's table (not copied either).
            let (forced, rank_all) = self.force(own, &mut decided, |t| base.devices[t]);
            let devices = Devices::forced(base.devices.clone(), forced);
            if rank_all {
                decided.best = self.decide(&devices).best;
            }
            let overrides = Overrides::of_source(self.overrides.clone(), selection);
            (devices, overrides)
        };
        let (selection_verdict, recommended) = self.decided(decided);
        SelectionEval {
            selection,
            columns: base.columns.clone(),
            shared: base.shared && overrides.is_empty(),
            devices,
            verdict_counts: decided.counts,
            overrides,
            selection_verdict,
            recommended,
        }
    }

    /// Forces the verdicts of a selection's own overrides (`own`) over its verdicts
    /// before them (`base_at(t)`, target `t`'s), and mends what decides the selection
    /// for those targets alone: its counts, and its best candidate among the forced
    /// targets and the best before. Returns the forced verdicts, by target, and whether
    /// every target must be ranked again (the best before is overridden).
    fn force(
        &self,
        own: &[Forced],
        decided: &mut Decided,
        base_at: impl Fn(usize) -> DeviceVerdict,
    ) -> (Vec<(usize, DeviceVerdict)>, bool) {
        let mut forced = Vec::with_capacity(own.len());
        for f in own {
            // An override decides before any rule; the score stays the rules'.
            let mut d = base_at(f.target);
            decided.counts[usize::from(d.verdict.number())] -= 1;
            d.verdict = if f.value { FULL } else { NONE };
            decided.counts[usize::from(d.verdict.number())] += 1;
            d.reason = verdict::Reason::Override;
            forced.push((f.target, d));
        }
        let best = decided.best;
        if best.is_some_and(|b| own.binary_search_by_key(&b, |f| f.target).is_ok()) {
            return (forced, true);
        }
        decided.best = forced
            .iter()
            .filter(|(_, d)| d.verdict > NONE)
            .copied()
            .chain(best.map(|t| (t, base_at(t))))
            .min_by(|(a, da), (b, db)| {
                verdict::rank(&self.candidate(da, *a), &self.candidate(db, *b))
            })
            .map(|(t, _)| t);
        (forced, false)
    }

    /// The selection's verdict from its counts, and its recommendation (none for an
    /// incompatible selection).
    fn decided(&self, decided: Decided) -> (Verdict, Option<usize>) {
        let selection_verdict =
            verdict::selection_verdict_of(&self.selection_policy, decided.counts);
        let recommended = (selection_verdict != NONE)
            .then_some(decided.best)
            .flatten();
        (selection_verdict, recommended)
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
    ) -> Vec<Vec<Outcome>> {
        let targets = self.target.rows.rows();
        let n = targets.len();
        let chunk = chunk_len(n);
        // buckets[c] = (work index, group, representative) for targets in chunk c.
        let mut buckets: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); n.div_ceil(chunk).max(1)];
        for (w, (_, _, grouping)) in work.iter().enumerate() {
            for (g, &t) in grouping.representatives.iter().enumerate() {
                buckets[t / chunk].push((w as u32, g as u32, t as u32));
            }
        }
        let src = self.source.rows.rows()[selection];
        let rules = &self.rules;
        let run = |bucket: &Vec<(u32, u32, u32)>| -> Vec<(u32, u32, Outcome)> {
            let mut scratch = Bump::new();
            bucket
                .iter()
                .map(|&(w, g, t)| {
                    scratch.reset();
                    let rule = &rules[work[w as usize].0].compiled;
                    let outcome = Outcome::of_pair(rule, src, targets[t as usize], &scratch);
                    (w, g, outcome)
                })
                .collect()
        };
        let evaluations: usize = buckets.iter().map(Vec::len).sum();
        let results: Vec<Vec<(u32, u32, Outcome)>> = if evaluations < PARALLEL_FROM {
            buckets.iter().map(run).collect()
        } else {
            buckets.par_iter().map(run).collect()
        };
        let mut per_group: Vec<Vec<Outcome>> = work
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
pub fn naive_column(rule: &CompiledRule, source: &Value, targets: &[Value]) -> Vec<Outcome> {
    targets
        .iter()
        .map(|t| {
            let arena = Bump::new();
            let s = DataValue::from_serde_value_in(source, &arena);
            let t = DataValue::from_serde_value_in(t, &arena);
            Outcome::of_pair(rule, s, t, &arena)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RequiredMode;

    /// A target's verdict computed on its own (for a selection's overrides, when no
    /// target's verdict is asked for) is the one it gets among every target's, bit for
    /// bit: on each sample page (rules that do not apply, required rules, weights),
    /// under each required mode and with weights that do not add up exactly.
    #[test]
    fn a_targets_verdict_on_its_own_is_its_verdict_among_all() {
        let pages = [
            include_str!("../../../sample-pages/llm-chat-clients.json"),
            include_str!("../../../sample-pages/loan-eligibility.json"),
            include_str!("../../../sample-pages/provider-capabilities.json"),
        ];
        let mut checked = 0;
        for text in pages {
            let mut page: Page = serde_json::from_str(text).expect("a sample page");
            for (i, rule) in page.rules.iter_mut().enumerate() {
                rule.weight = [0.1, 1.1, 0.7, 2.0][i % 4];
            }
            for mode in <RequiredMode as strum::VariantArray>::VARIANTS {
                page.device_policy.required_mode = *mode;
                let mut m = Matrix::new(&page).expect("compiles");
                for s in 0..m.source_count() {
                    let columns = m.columns(s);
                    // Every tally decided once (a table by key), each target's decided,
                    // and as the page's size chooses.
                    for distinct in [usize::MAX, 0, m.target_count().max(64)] {
                        let all = m.devices_with(&columns, distinct);
                        assert_eq!(all.len(), m.target_count());
                        for (t, d) in all.iter().enumerate() {
                            let alone = m.device_at(&columns, t);
                            let bits = |d: &DeviceVerdict| (d.verdict, d.score.to_bits(), d.reason);
                            assert_eq!(
                                bits(&alone),
                                bits(d),
                                "{} {mode:?} {s} {t} {distinct}",
                                page.id
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 1500, "{checked}");
        // No targets at all: no verdicts, either way.
        let mut empty: Page = serde_json::from_str(pages[0]).expect("a sample page");
        empty.target.rows.clear();
        empty.overrides.clear();
        let mut m = Matrix::new(&empty).expect("compiles");
        let columns = m.columns(0);
        for distinct in [usize::MAX, 0, 64] {
            assert!(m.devices_with(&columns, distinct).is_empty());
        }
    }
}

//! The evaluation result of one selection in typed, compact form: the currency between
//! the engine, the result cache, assertions, the workbench and the printers.
//!
//! A [`SelectionResult`] is a [`SelectionEval`] (per rule an outcome column, per target a
//! verdict, score, reason and override) plus the [`Names`] that label it (rule ids and
//! names, target ids and their shown fields) and the header (revision, selection key,
//! cache state, time). No layer builds a `serde_json::Value` tree of a whole result:
//! printers stream it (`cli::print`), the cache stores it in pages of
//! [`TARGETS_PER_PAGE`] targets as compact JSON ([`SelectionResult::cache_pages`]), and
//! assertions materialise only what their path reads ([`Needs`], [`SelectionResult::to_value`]).

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::matrix::{
    Column, ERROR, FAIL, Forced, NOT_APPLICABLE, Outcome, Overrides, PASS, SelectionEval,
};
use super::model::Page;
use super::verdict::{DeviceVerdict, Reason, Verdict};

const _: () = assert!(
    PASS as u8 == 1 && FAIL as u8 == 0,
    "cache pages decode bits as outcomes"
);

/// Targets per cached result page.
pub const TARGETS_PER_PAGE: usize = 100;

/// The format tag of a cached result page.
/// v3: scores are exact (a v2 page may hold a score summed in doubles), and outcomes
/// may be n/a.
pub const CACHE_FORMAT: &str = "rulebench.result-page/v3";

/// Keys of a result's target entry that a shown (label or summary) field cannot take.
const RESERVED: &[&str] = &[
    "id", "verdict", "score", "reason", "rules", "override", "warnings",
];

/// What a rule warning's detail may name for one (selection, target) pair.
pub struct WarningContext<'a> {
    pub rule_id: &'a str,
    pub rule_name: &'a str,
    pub target_id: &'a str,
    pub target_label: Option<&'a str>,
    pub source_key: &'a str,
    /// A target field's value as text (`{target.FIELD}`), when it can be told.
    pub field: &'a dyn Fn(&str) -> Option<String>,
}

/// Warnings as the result JSON writes them: `[{"kind", "detail"}, …]`.
fn warnings_value(list: Vec<(&str, String)>) -> Value {
    Value::Array(
        list.into_iter()
            .map(|(kind, detail)| {
                let mut w = Map::new();
                w.insert("kind".into(), Value::String(kind.to_owned()));
                w.insert("detail".into(), Value::String(detail));
                Value::Object(w)
            })
            .collect(),
    )
}

/// A JSON value as a warning's text shows it: strings bare, null empty.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A rule warning's detail with `{target.label}`, `{target.id}`, `{target.FIELD}`,
/// `{source.key}`, `{rule.id}` and `{rule.name}` filled in; any other `{…}` stays as
/// written.
pub fn render_warning(detail: &str, c: &WarningContext<'_>) -> String {
    let mut out = String::with_capacity(detail.len());
    let mut rest = detail;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let name = &after[..close];
        let value = match name {
            "target.id" => Some(c.target_id.to_owned()),
            "target.label" => Some(
                c.target_label
                    .filter(|l| !l.is_empty())
                    .unwrap_or(c.target_id)
                    .to_owned(),
            ),
            "source.key" => Some(c.source_key.to_owned()),
            "rule.id" => Some(c.rule_id.to_owned()),
            "rule.name" => Some(c.rule_name.to_owned()),
            other => other.strip_prefix("target.").and_then(|f| (c.field)(f)),
        };
        match value {
            Some(v) => out.push_str(&v),
            None => out.push_str(&rest[open..open + close + 2]),
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// A rule as a result names it (with its warning, emitted where it fails).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleName {
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<super::model::RuleWarning>,
}

/// A target as a result names it: its id and the values of the shown fields.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetName {
    pub id: String,
    pub shown: Vec<Value>,
}

/// What labels a page's results: shared by every selection of one revision.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Names {
    pub page_id: String,
    pub rules: Vec<RuleName>,
    /// The label and summary fields shown on every target (not `id`), in order.
    pub shown: Vec<String>,
    /// The target dataset's label field (among `shown`), when it has one.
    pub label: Option<String>,
    /// The overrides that name a row the page does not have (kept, inactive): the
    /// keyHash of their source and how they are named.
    pub orphaned: Vec<(String, String)>,
    pub targets: Vec<TargetName>,
}

impl Names {
    /// The names of a page whose target rows live in `matrix` (loaded without them).
    pub fn of_matrix(page: &Page, matrix: &super::matrix::Matrix) -> Names {
        let orphaned = matrix
            .orphaned_overrides()
            .iter()
            .filter_map(|&i| page.overrides.get(i))
            .map(|o| (o.source_hash().unwrap_or_default(), o.pair_label()))
            .collect();
        let shown = shown_fields(page);
        let targets = matrix
            .target_ids()
            .iter()
            .enumerate()
            .map(|(t, id)| TargetName {
                id: id.clone(),
                shown: shown
                    .iter()
                    .map(|f| matrix.target_field(t, f).unwrap_or(Value::Null))
                    .collect(),
            })
            .collect();
        Names {
            orphaned,
            ..Self::with_targets(page, shown, targets)
        }
    }

    /// The names of a page's rules and targets (shown values with dataset defaults).
    pub fn of(page: &Page) -> Names {
        let target = &page.target;
        let shown = shown_fields(page);
        let targets = target
            .rows
            .iter()
            .map(|row| {
                let effective = target.effective_row(row);
                TargetName {
                    id: target.row_id(row),
                    shown: shown
                        .iter()
                        .map(|f| effective.get(f).cloned().unwrap_or(Value::Null))
                        .collect(),
                }
            })
            .collect();
        let hashes = |d: &super::model::Dataset| -> std::collections::HashSet<String> {
            d.rows
                .iter()
                .map(|r| super::model::key_hash(&d.row_key(r)))
                .collect()
        };
        let (sources, targets_now) = (hashes(&page.source), hashes(&page.target));
        let orphaned = page
            .overrides
            .iter()
            .filter(|o| {
                !o.source_hash().is_some_and(|h| sources.contains(&h))
                    || !o.target_hash().is_some_and(|h| targets_now.contains(&h))
            })
            .map(|o| (o.source_hash().unwrap_or_default(), o.pair_label()))
            .collect();
        Names {
            orphaned,
            ..Self::with_targets(page, shown, targets)
        }
    }

    fn with_targets(page: &Page, shown: Vec<String>, targets: Vec<TargetName>) -> Names {
        Names {
            page_id: page.id.clone(),
            rules: page
                .rules
                .iter()
                .map(|r| RuleName {
                    id: r.id.clone(),
                    name: r.name.clone(),
                    warning: r.warning.clone(),
                })
                .collect(),
            label: page.target.label.clone().filter(|l| shown.contains(l)),
            shown,
            targets,
            orphaned: Vec::new(),
        }
    }

    /// The keys of a `features[]` entry in the order a JSON object holds them: `name`
    /// first, then each distinct target id at its first position, valued by its last
    /// target (a later key replaces an earlier one in place; a target id `name`
    /// replaces the rule name). Computed once per result.
    pub fn feature_keys(&self) -> FeatureKeys {
        let mut slot: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        let mut order: Vec<(String, usize)> = Vec::new();
        let mut name_target = None;
        for (t, target) in self.targets.iter().enumerate() {
            if target.id == "name" {
                name_target = Some(t);
                continue;
            }
            match slot.get(target.id.as_str()) {
                Some(&i) => order[i].1 = t,
                None => {
                    slot.insert(&target.id, order.len());
                    order.push((target.id.clone(), t));
                }
            }
        }
        FeatureKeys {
            name_target,
            targets: order,
        }
    }
}

/// See [`Names::feature_keys`].
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureKeys {
    /// The target whose id is `name`, if any: its outcome replaces the rule name.
    pub name_target: Option<usize>,
    /// (key, target whose outcome it holds), in key order.
    pub targets: Vec<(String, usize)>,
}

/// The label and summary fields of the target dataset, in order, each once.
fn shown_fields(page: &Page) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for field in page.target.label.iter().chain(&page.target.summary) {
        if !RESERVED.contains(&field.as_str()) && !out.contains(field) {
            out.push(field.clone());
        }
    }
    out
}

/// Whether a result was served from the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheState {
    Hit,
    Miss,
}

impl CacheState {
    pub fn as_str(self) -> &'static str {
        match self {
            CacheState::Hit => "hit",
            CacheState::Miss => "miss",
        }
    }
}

/// The evaluation of one selection with everything that names it.
#[derive(Debug, Clone)]
pub struct SelectionResult {
    pub revision: i64,
    pub cache: CacheState,
    pub selection_key: String,
    pub evaluated_at: String,
    pub names: Arc<Names>,
    pub eval: SelectionEval,
}

impl SelectionResult {
    /// Labels an evaluation of `page` (whose names are `names`).
    pub fn new(
        page: &Page,
        names: Arc<Names>,
        eval: SelectionEval,
        revision: i64,
        evaluated_at: &str,
    ) -> SelectionResult {
        SelectionResult {
            revision,
            cache: CacheState::Miss,
            selection_key: page.source.row_key(&page.source.rows[eval.selection]),
            evaluated_at: evaluated_at.to_owned(),
            names,
            eval,
        }
    }

    pub fn page_id(&self) -> &str {
        &self.names.page_id
    }

    /// The result as a view shows it: only `targets` (indexes, in this order) and
    /// `rules` (indexes, in this order). The selection's verdict is the whole
    /// selection's; the recommended target is kept when the view shows it.
    pub fn view(&self, targets: &[usize], rules: &[usize]) -> SelectionResult {
        let names = Names {
            rules: rules.iter().map(|&r| self.names.rules[r].clone()).collect(),
            targets: targets
                .iter()
                .map(|&t| self.names.targets[t].clone())
                .collect(),
            ..(*self.names).clone()
        };
        let columns = rules
            .iter()
            .map(|&r| {
                let col = &self.eval.columns[r];
                Arc::new(super::matrix::Column::of(
                    targets.iter().map(|&t| col.outcome[t]).collect(),
                    col.evaluations,
                ))
            })
            .collect();
        let devices: Arc<[DeviceVerdict]> = targets.iter().map(|&t| self.eval.devices[t]).collect();
        let eval = super::matrix::SelectionEval {
            selection: self.eval.selection,
            columns,
            verdict_counts: super::matrix::SelectionEval::count_verdicts(devices.iter()),
            devices: devices.into(),
            overrides: Overrides::new(
                targets
                    .iter()
                    .enumerate()
                    .filter_map(|(i, &t)| {
                        let f = self.eval.overrides.get(t)?;
                        Some(Forced {
                            target: i,
                            ..f.clone()
                        })
                    })
                    .collect(),
            ),
            shared: false,
            selection_verdict: self.eval.selection_verdict,
            recommended: self
                .eval
                .recommended
                .and_then(|r| targets.iter().position(|&t| t == r)),
        };
        SelectionResult {
            revision: self.revision,
            cache: self.cache,
            selection_key: self.selection_key.clone(),
            evaluated_at: self.evaluated_at.clone(),
            names: Arc::new(names),
            eval,
        }
    }

    pub fn target_count(&self) -> usize {
        self.eval.devices.len()
    }

    pub fn selection_verdict(&self) -> Verdict {
        self.eval.selection_verdict
    }

    /// The recommended target's id.
    pub fn recommended_id(&self) -> Option<&str> {
        self.eval
            .recommended
            .map(|t| self.names.targets[t].id.as_str())
    }

    pub fn device(&self, target: usize) -> &DeviceVerdict {
        &self.eval.devices[target]
    }

    /// Whether rule `rule` passed on target `target` (an engine error fails).
    pub fn passed(&self, rule: usize, target: usize) -> bool {
        self.eval.columns[rule].passed(target)
    }

    /// Rule `rule`'s outcome on target `target` as results write it: `Some(passed)`,
    /// `None` where the rule does not apply (n/a).
    pub fn outcome(&self, rule: usize, target: usize) -> Option<bool> {
        self.eval.columns[rule].outcome[target].counted()
    }

    /// [`Self::outcome`] as JSON: `true`, `false`, or `null` for n/a.
    pub fn outcome_value(&self, rule: usize, target: usize) -> Value {
        self.outcome(rule, target).map_or(Value::Null, Value::Bool)
    }

    /// The ids of the rules that fail on a target, in rule order.
    pub fn failing_rules(&self, target: usize) -> impl Iterator<Item = &str> {
        self.names
            .rules
            .iter()
            .zip(&self.eval.columns)
            .filter(move |(_, c)| c.outcome[target].counted() == Some(false))
            .map(|(r, _)| r.id.as_str())
    }

    /// The override of a target for this selection, with its note.
    pub fn override_of(&self, target: usize) -> Option<(bool, Option<&str>)> {
        let f = self.eval.overrides.get(target)?;
        Some((f.value, f.note.as_deref()))
    }

    /// The whole result JSON as a tree: for tests and small results only (printers
    /// stream, assertions ask for what they need).
    pub fn wire(&self) -> Value {
        self.to_value(&Needs::all())
    }

    /// The result as its wire JSON (the result JSON), restricted to what `needs` asks
    /// for. Only assertions and tests call it, and with narrow needs: printers stream.
    pub fn to_value(&self, needs: &Needs) -> Value {
        let mut out = Map::new();
        out.insert("pageId".into(), Value::from(self.page_id()));
        out.insert("revisionId".into(), Value::from(self.revision));
        out.insert("cache".into(), Value::from(self.cache.as_str()));
        out.insert(
            "selectionKey".into(),
            Value::from(self.selection_key.clone()),
        );
        out.insert(
            "selectionVerdict".into(),
            Value::from(self.eval.selection_verdict),
        );
        out.insert(
            "recommendedTargetId".into(),
            self.recommended_id().map_or(Value::Null, Value::from),
        );
        if needs.wants("targets") {
            let targets = (0..self.target_count())
                .map(|t| Value::Object(self.target_value(t, needs)))
                .collect();
            out.insert("targets".into(), Value::Array(targets));
        }
        if needs.wants("features") {
            let keys = self.names.feature_keys();
            let features = self
                .names
                .rules
                .iter()
                .enumerate()
                .map(|(r, rule)| {
                    let mut f = Map::new();
                    f.insert(
                        "name".into(),
                        match keys.name_target {
                            Some(t) => self.outcome_value(r, t),
                            None => Value::String(rule.name.clone()),
                        },
                    );
                    for (id, t) in &keys.targets {
                        f.insert(id.clone(), self.outcome_value(r, *t));
                    }
                    Value::Object(f)
                })
                .collect();
            out.insert("features".into(), Value::Array(features));
        }
        if needs.wants("warnings") {
            let warnings = self.selection_warnings();
            if !warnings.is_empty() {
                out.insert("warnings".into(), warnings_value(warnings));
            }
        }
        out.insert("evaluatedAt".into(), Value::from(self.evaluated_at.clone()));
        Value::Object(out)
    }

    /// The selection's own warnings: each override of this selection whose target row
    /// the page does not have (kept, inactive), as (kind, detail).
    pub fn selection_warnings(&self) -> Vec<(&'static str, String)> {
        if self.names.orphaned.is_empty() {
            return Vec::new();
        }
        let hash = super::model::key_hash(&self.selection_key);
        self.names
            .orphaned
            .iter()
            .filter(|(source, _)| *source == hash)
            .map(|(_, label)| {
                (
                    "orphaned_override",
                    format!("override {label} names a target row the page does not have: it is inactive until the row returns"),
                )
            })
            .collect()
    }

    /// The structured warnings of target `t`: one per rule with a warning that fails
    /// for it, in rule order, as (kind, detail) with the detail's placeholders filled.
    pub fn warnings(&self, t: usize) -> Vec<(&str, String)> {
        self.names
            .rules
            .iter()
            .enumerate()
            // Rules without a warning (most) cost one check, not an outcome lookup.
            .filter_map(|(r, rule)| Some((r, rule, rule.warning.as_ref()?)))
            .filter(|(r, _, _)| self.outcome(*r, t) == Some(false))
            .map(|(_, rule, w)| (w.kind.as_str(), self.render_detail(&w.detail, rule, t)))
            .collect()
    }

    fn render_detail(&self, detail: &str, rule: &RuleName, t: usize) -> String {
        let target = &self.names.targets[t];
        let shown = |field: &str| {
            self.names
                .shown
                .iter()
                .position(|f| f == field)
                .map(|i| value_text(&target.shown[i]))
        };
        let label = self.names.label.as_deref().and_then(shown);
        render_warning(
            detail,
            &WarningContext {
                rule_id: &rule.id,
                rule_name: &rule.name,
                target_id: &target.id,
                target_label: label.as_deref(),
                source_key: &self.selection_key,
                field: &shown,
            },
        )
    }

    /// One entry of `targets[]`, restricted to what `needs` asks for.
    pub fn target_value(&self, t: usize, needs: &Needs) -> Map<String, Value> {
        let target = &self.names.targets[t];
        let mut entry = Map::new();
        entry.insert("id".into(), Value::String(target.id.clone()));
        for (field, value) in self.names.shown.iter().zip(&target.shown) {
            if needs.wants(field) {
                entry.insert(field.clone(), value.clone());
            }
        }
        let d = &self.eval.devices[t];
        entry.insert("verdict".into(), Value::from(d.verdict));
        entry.insert("score".into(), Value::from(d.score));
        entry.insert("reason".into(), Value::from(d.reason.as_str()));
        if needs.wants("rules") {
            let rules: Map<String, Value> = self
                .names
                .rules
                .iter()
                .enumerate()
                .map(|(r, rule)| (rule.id.clone(), self.outcome_value(r, t)))
                .collect();
            entry.insert("rules".into(), Value::Object(rules));
        }
        if let Some((value, note)) = self.override_of(t) {
            let mut o = Map::new();
            o.insert("value".into(), Value::Bool(value));
            if let Some(note) = note {
                o.insert("note".into(), Value::String(note.to_owned()));
            }
            entry.insert("override".into(), Value::Object(o));
        }
        if needs.wants("warnings") {
            let warnings = self.warnings(t);
            if !warnings.is_empty() {
                entry.insert("warnings".into(), warnings_value(warnings));
            }
        }
        entry
    }
}

// ---------------------------------------------------------------------------------------------
// What a JSONPath reads
// ---------------------------------------------------------------------------------------------

/// The parts of a result's wire JSON a reader needs: everything, or the members named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needs {
    all: bool,
    names: HashSet<String>,
}

impl Needs {
    /// The whole result.
    pub fn all() -> Needs {
        Needs {
            all: true,
            names: HashSet::new(),
        }
    }

    /// What either needs.
    pub fn union(&self, other: &Needs) -> Needs {
        Needs {
            all: self.all || other.all,
            names: self.names.union(&other.names).cloned().collect(),
        }
    }

    pub fn is_all(&self) -> bool {
        self.all
    }

    /// Whether member `name` is needed.
    pub fn wants(&self, name: &str) -> bool {
        self.all || self.names.contains(name)
    }

    /// What a normalised JSONPath can read. Conservative: every member name it spells
    /// (dot names and quoted strings) is kept whole; a wildcard other than over the
    /// elements of `targets` or `features`, a descendant segment, a function, or `@`/`$`
    /// used as a value needs everything. A query that selects a pruned container (a
    /// whole target, say) is re-run on everything by the caller ([`needs_retry`]).
    pub fn of_path(path: &str) -> Needs {
        let chars: Vec<char> = path.chars().collect();
        let mut names = HashSet::new();
        let all = || Needs::all();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            match c {
                '\'' | '"' => {
                    let mut s = String::new();
                    i += 1;
                    while i < chars.len() && chars[i] != c {
                        if chars[i] == '\\' {
                            // Escapes are rare in member names: take no chances.
                            return all();
                        }
                        s.push(chars[i]);
                        i += 1;
                    }
                    names.insert(s);
                }
                '.' => {
                    if chars.get(i + 1) == Some(&'.') {
                        return all();
                    }
                    let mut s = String::new();
                    // RFC 9535 names: ALPHA, DIGIT, `_` and every non-ASCII character.
                    while i + 1 < chars.len()
                        && (chars[i + 1].is_ascii_alphanumeric()
                            || !chars[i + 1].is_ascii()
                            || matches!(chars[i + 1], '_' | '-'))
                    {
                        s.push(chars[i + 1]);
                        i += 1;
                    }
                    if !s.is_empty() {
                        names.insert(s);
                    }
                }
                '*' => {
                    let before: String = chars[..i].iter().collect();
                    let over_elements = ["targets[", "targets.", "features[", "features."]
                        .iter()
                        .any(|p| before.ends_with(p));
                    if !over_elements {
                        return all();
                    }
                }
                '(' => return all(),
                '@' | '$' => {
                    let next = chars.get(i + 1);
                    if i > 0 && !matches!(next, Some('.') | Some('[')) {
                        return all();
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Needs { all: false, names }
    }
}

/// Whether a query run on a pruned result must be re-run on the whole one: it selected
/// a container, which pruning may have emptied of members.
pub fn needs_retry(needs: &Needs, found: &[&Value]) -> bool {
    !needs.is_all() && found.iter().any(|v| v.is_object() || v.is_array())
}

// ---------------------------------------------------------------------------------------------
// The cache form
// ---------------------------------------------------------------------------------------------

/// One cached page of a result: the header, the rules, and up to
/// [`TARGETS_PER_PAGE`] targets with their outcomes as bitsets.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CachePage<'a> {
    #[serde(borrow)]
    format: Cow<'a, str>,
    page_id: String,
    revision_id: i64,
    selection_key: String,
    selection_verdict: Verdict,
    recommended_target_id: Option<String>,
    evaluated_at: String,
    /// Total targets of the result.
    target_count: usize,
    /// Index of this page's first target.
    first: usize,
    #[serde(borrow)]
    rules: Vec<CachedRule<'a>>,
    shown: Vec<String>,
    /// The target label field (among `shown`), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    label: Option<String>,
    /// The page's orphaned overrides: (source keyHash, label).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    orphaned: Vec<(String, String)>,
    /// `[id, [shown values], verdict, score, reason, override]`; override is null or
    /// `{"value": bool, "note"?: text}`.
    #[serde(borrow)]
    targets: Vec<CachedTarget<'a>>,
    /// Per rule: lowercase hex of the pass bits of this page's targets (bit i of byte
    /// i / 8 is target `first + i`).
    #[serde(borrow)]
    passes: Vec<&'a str>,
    /// Rules with engine errors on this page: (rule index, hex of the error bits).
    #[serde(default, skip_serializing_if = "Vec::is_empty", borrow)]
    errors: Vec<(usize, &'a str)>,
    /// Rules that do not apply to some target of this page: (rule index, hex of the
    /// n/a bits).
    #[serde(default, skip_serializing_if = "Vec::is_empty", borrow)]
    not_applicable: Vec<(usize, &'a str)>,
}

/// A rule's id and name in a cached page (read without copying when unescaped).
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CachedRule<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    warning: Option<super::model::RuleWarning>,
}

/// `[id, [shown values], verdict, score, reason, override]`.
type CachedTarget<'a> = (
    String,
    Vec<Value>,
    Verdict,
    Option<f64>,
    &'a str,
    Option<CachedOverride>,
);

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CachedOverride {
    value: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

fn hex_bits(bits: impl Iterator<Item = bool>, n: usize) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut bytes = vec![0u8; n.div_ceil(8)];
    for (i, b) in bits.enumerate() {
        if b {
            bytes[i / 8] |= 1 << (i % 8);
        }
    }
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
    out
}

/// The value of a lowercase hex digit.
fn hex_digit(c: u8) -> Result<u8, String> {
    match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        _ => Err(format!("`{}` is not a hex digit", c as char)),
    }
}

/// The bytes of a hex bitset of `n` bits.
fn unhex(hex: &str, n: usize) -> Result<Vec<u8>, String> {
    let digit = hex_digit;
    let hex = hex.as_bytes();
    if hex.len() != 2 * n.div_ceil(8) {
        return Err(format!("a bitset of {n} bits has {} hex digits", hex.len()));
    }
    hex.chunks(2)
        .map(|pair| Ok(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

/// Appends the `n` bits of a hex bitset to `out` as outcomes (1 pass, 0 fail).
fn push_bits(out: &mut Vec<Outcome>, hex: &str, n: usize) -> Result<(), String> {
    let digit = hex_digit;
    let hex = hex.as_bytes();
    if hex.len() != 2 * n.div_ceil(8) {
        return Err(format!("a bitset of {n} bits has {} hex digits", hex.len()));
    }
    // Each byte's eight outcomes, least significant bit first.
    const SPREAD: [[Outcome; 8]; 256] = {
        let mut table = [[FAIL; 8]; 256];
        let mut b = 0;
        while b < 256 {
            let mut k = 0;
            while k < 8 {
                table[b][k] = if (b >> k) & 1 == 1 { PASS } else { FAIL };
                k += 1;
            }
            b += 1;
        }
        table
    };
    out.reserve(n);
    for (b, pair) in hex.chunks(2).enumerate() {
        let byte = digit(pair[0])? << 4 | digit(pair[1])?;
        let bits = (n - 8 * b).min(8);
        out.extend_from_slice(&SPREAD[usize::from(byte)][..bits]);
    }
    Ok(())
}

fn bit(bytes: &[u8], i: usize) -> bool {
    (bytes[i / 8] >> (i % 8)) & 1 == 1
}

impl SelectionResult {
    /// The result as cache pages of [`TARGETS_PER_PAGE`] targets (compact JSON texts).
    pub fn cache_pages(&self) -> Vec<String> {
        let n = self.target_count();
        let starts: Vec<usize> = if n == 0 {
            vec![0]
        } else {
            (0..n).step_by(TARGETS_PER_PAGE).collect()
        };
        starts
            .into_iter()
            .map(|first| {
                let end = (first + TARGETS_PER_PAGE).min(n);
                let range = first..end;
                let targets = range
                    .clone()
                    .map(|t| {
                        let name = &self.names.targets[t];
                        let d = &self.eval.devices[t];
                        (
                            name.id.clone(),
                            name.shown.clone(),
                            d.verdict,
                            d.score.is_finite().then_some(d.score),
                            d.reason.as_str(),
                            self.override_of(t).map(|(value, note)| CachedOverride {
                                value,
                                note: note.map(str::to_owned),
                            }),
                        )
                    })
                    .collect();
                let passes: Vec<String> = self
                    .eval
                    .columns
                    .iter()
                    .map(|c| hex_bits(range.clone().map(|t| c.outcome[t] == PASS), end - first))
                    .collect();
                // Per rule with some target of this page at `mark`: its hex bits.
                let marked = |mark: Outcome| -> Vec<(usize, String)> {
                    self.eval
                        .columns
                        .iter()
                        .enumerate()
                        .filter(|(_, c)| c.outcome[range.clone()].contains(&mark))
                        .map(|(r, c)| {
                            let bits = range.clone().map(|t| c.outcome[t] == mark);
                            (r, hex_bits(bits, end - first))
                        })
                        .collect()
                };
                let errors = marked(ERROR);
                let not_applicable = marked(NOT_APPLICABLE);
                let page = CachePage {
                    format: Cow::Borrowed(CACHE_FORMAT),
                    page_id: self.page_id().to_owned(),
                    revision_id: self.revision,
                    selection_key: self.selection_key.clone(),
                    selection_verdict: self.eval.selection_verdict,
                    recommended_target_id: self.recommended_id().map(str::to_owned),
                    evaluated_at: self.evaluated_at.clone(),
                    target_count: n,
                    first,
                    rules: self
                        .names
                        .rules
                        .iter()
                        .map(|r| CachedRule {
                            id: Cow::Borrowed(&r.id),
                            name: Cow::Borrowed(&r.name),
                            warning: r.warning.clone(),
                        })
                        .collect(),
                    shown: self.names.shown.clone(),
                    label: self.names.label.clone(),
                    orphaned: self.names.orphaned.clone(),
                    targets,
                    passes: passes.iter().map(String::as_str).collect(),
                    errors: errors.iter().map(|(r, h)| (*r, h.as_str())).collect(),
                    not_applicable: not_applicable
                        .iter()
                        .map(|(r, h)| (*r, h.as_str()))
                        .collect(),
                };
                serde_json::to_string(&page).expect("cache pages serialize")
            })
            .collect()
    }

    /// Reads a result back from its cache pages (in page order) for source row
    /// `selection`. An error says what is wrong with the stored form.
    pub fn from_cache_pages(texts: &[String], selection: usize) -> Result<SelectionResult, String> {
        let read = |i: usize| -> Result<CachePage<'_>, String> {
            let page: CachePage =
                serde_json::from_str(&texts[i]).map_err(|e| format!("cached page {i}: {e}"))?;
            if page.format != CACHE_FORMAT {
                return Err(format!("cached page {i}: format `{}`", page.format));
            }
            Ok(page)
        };
        if texts.is_empty() {
            return Err("no cached pages".into());
        }
        // Pages parse independently: on every core.
        let mut parsed: Vec<Option<Result<CachePage<'_>, String>>> =
            { (0..texts.len()).map(|i| Some(read(i))).collect() };
        let mut take = |i: usize| parsed[i].take().expect("each page is taken once");
        let head = take(0)?;
        let n = head.target_count;
        let rules: Vec<RuleName> = head
            .rules
            .iter()
            .map(|r| RuleName {
                id: r.id.to_string(),
                name: r.name.to_string(),
                warning: r.warning.clone(),
            })
            .collect();
        // The stored count is checked against the pages at the end: size by both.
        let cap = n.min(texts.len() * TARGETS_PER_PAGE);
        let mut outcome: Vec<Vec<Outcome>> = vec![Vec::with_capacity(cap); rules.len()];
        let mut targets = Vec::with_capacity(cap);
        let mut devices = Vec::with_capacity(cap);
        let mut overrides = Vec::new();
        let (page_id, revision, selection_key, evaluated_at) = (
            head.page_id.clone(),
            head.revision_id,
            head.selection_key.clone(),
            head.evaluated_at.clone(),
        );
        let (recommended_id, shown, selection_verdict, label, orphaned) = (
            head.recommended_target_id.clone(),
            head.shown.clone(),
            head.selection_verdict,
            head.label.clone(),
            head.orphaned.clone(),
        );
        let mut next = Some(head);
        for i in 0..texts.len() {
            let page = match next.take() {
                Some(head) => head,
                None => take(i)?,
            };
            let same_rules = page.rules.len() == rules.len()
                && page
                    .rules
                    .iter()
                    .zip(&rules)
                    .all(|(a, b)| a.id == b.id && a.name == b.name);
            if page.first != targets.len() || !same_rules || page.passes.len() != rules.len() {
                return Err(format!(
                    "cached page {i} does not continue page {}",
                    i.max(1) - 1
                ));
            }
            let count = page.targets.len();
            for (r, hex) in page.passes.iter().enumerate() {
                let out = &mut outcome[r];
                let errors = page.errors.iter().find(|(e, _)| *e == r);
                let nas = page.not_applicable.iter().find(|(e, _)| *e == r);
                match (errors, nas) {
                    // PASS is 1 and FAIL 0: each bit is the outcome.
                    (None, None) => {
                        push_bits(out, hex, count).map_err(|e| format!("cached page {i}: {e}"))?
                    }
                    (errors, nas) => {
                        let bits = |h: Option<&(usize, &str)>| -> Result<Vec<u8>, String> {
                            match h {
                                Some((_, h)) => {
                                    unhex(h, count).map_err(|e| format!("cached page {i}: {e}"))
                                }
                                None => Ok(vec![0; count.div_ceil(8)]),
                            }
                        };
                        let passes =
                            unhex(hex, count).map_err(|e| format!("cached page {i}: {e}"))?;
                        let errors = bits(errors)?;
                        let nas = bits(nas)?;
                        out.extend((0..count).map(|k| {
                            if bit(&nas, k) {
                                NOT_APPLICABLE
                            } else if bit(&errors, k) {
                                ERROR
                            } else if bit(&passes, k) {
                                PASS
                            } else {
                                FAIL
                            }
                        }));
                    }
                }
            }
            for (id, shown, verdict, score, reason, o) in page.targets {
                let t = targets.len();
                targets.push(TargetName { id, shown });
                devices.push(DeviceVerdict {
                    verdict,
                    score: score.unwrap_or(f64::NAN),
                    reason: Reason::parse(reason)
                        .ok_or_else(|| format!("cached page {i}: reason `{reason}`"))?,
                });
                if let Some(o) = o {
                    overrides.push(Forced {
                        target: t,
                        value: o.value,
                        note: o.note,
                    });
                }
            }
        }
        if targets.len() != n {
            return Err(format!(
                "cached pages hold {} of {n} targets",
                targets.len()
            ));
        }
        let recommended = match &recommended_id {
            None => None,
            Some(id) => Some(
                targets
                    .iter()
                    .position(|t| &t.id == id)
                    .ok_or_else(|| format!("recommended target `{id}` is not in the pages"))?,
            ),
        };
        let names = Names {
            page_id,
            rules,
            shown,
            label,
            orphaned,
            targets,
        };
        let columns = outcome
            .into_iter()
            .map(|o| Arc::new(Column::of(o, 0)))
            .collect();
        Ok(SelectionResult {
            revision,
            cache: CacheState::Hit,
            selection_key,
            evaluated_at,
            names: Arc::new(names),
            eval: SelectionEval {
                selection,
                columns,
                verdict_counts: SelectionEval::count_verdicts(&devices),
                devices: devices.into(),
                overrides: Overrides::new(overrides),
                shared: false,
                selection_verdict,
                recommended,
            },
        })
    }
}

/// A cached page as the result JSON of its targets (header, its targets, the features
/// restricted to them): for reading the cache by eye and in tests.
pub fn cache_page_as_wire(text: &str) -> Result<Value, String> {
    let page: CachePage = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let recommended = page.recommended_target_id.clone();
    // Read this page alone as a result of its own targets.
    let single = CachePage {
        target_count: page.targets.len(),
        first: 0,
        recommended_target_id: None,
        ..page
    };
    let text = serde_json::to_string(&single).map_err(|e| e.to_string())?;
    let mut value = SelectionResult::from_cache_pages(&[text], 0)?.to_value(&Needs::all());
    value["recommendedTargetId"] = recommended.map_or(Value::Null, Value::String);
    Ok(value)
}

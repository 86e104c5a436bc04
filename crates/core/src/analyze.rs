//! Analysis with witnesses (`rulebench analyze`, and warnings in `check`): what can be
//! decided about a page's rules for any row the schema allows, and about its current
//! rows.
//!
//! **Over any row** (exact for the fragment below, "unknown" otherwise): a rule that
//! never passes, one that always passes, a rule implied by another, two equivalent
//! rules. A rule is in the fragment when it is built from `var` (a field of one side,
//! with or without a default), literals, the comparisons `==` `!=` `===` `!==` `<`
//! `<=` `>` `>=` between a field and literals, `in` (a field in a list of literals, or a
//! literal in a field), `!`, `!!`, `and`, `or` and `if`. Its outcome then depends on
//! each field only through which side of each literal the value falls — so each field
//! is abstracted by a finite set of representative values: every literal it is compared
//! with (and their forms under JSONLogic's coercions: a number's text, a numeric
//! string's number, `true`/`false` as 1/0), a value between each two and beyond both
//! ends, the falsy values, `null`, and the field missing — restricted to the types the
//! rows hold it as. Every combination of representatives is evaluated **by the engine**
//! (a page of made rows through the matrix), so the semantics are the engine's own;
//! what holds for every combination holds for every row of those types.
//!
//! **Over the current rows** (through the page's matrix): a required rule that fails
//! every target for a source (or for every source), a threshold no pair reaches (and
//! one no row can reach, given the weights of rules that never pass), an override that
//! agrees with what the rules alone give (stale: it can go).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::matrix::Matrix;
use crate::model::{Page, RequiredMode, Row, Side};
use crate::schema::Schema;
use crate::verdict::{RuleWeight, Scoring, Tally, Verdict, device_verdict};

/// The most made pairs one analysis evaluates (past it: unknown).
pub const MAX_PAIRS: usize = 2_000_000;
/// The most representatives of one side (made rows).
const MAX_ROWS: usize = 200_000;
/// The most needles of `in` over an array field (its subsets are enumerated).
const MAX_NEEDLES: usize = 8;

/// What a finding says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// No row the schema allows passes the rule.
    NeverTrue,
    /// Every row the schema allows passes the rule (where it applies).
    AlwaysTrue,
    /// Whenever another rule passes, this one does.
    ImpliedBy,
    /// The rule has another's outcome on every row.
    Equivalent,
    /// A required rule fails every target for a source of the page.
    RequiredVetoes,
    /// A threshold no pair of the current rows (or no row at all) reaches.
    UnreachableThreshold,
    /// An override that forces what the rules alone give.
    StaleOverride,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::NeverTrue => "never-true",
            Kind::AlwaysTrue => "always-true",
            Kind::ImpliedBy => "implied-by",
            Kind::Equivalent => "equivalent",
            Kind::RequiredVetoes => "required-vetoes",
            Kind::UnreachableThreshold => "unreachable-threshold",
            Kind::StaleOverride => "stale-override",
        }
    }
}

/// A pair that shows a finding: rows made by the analysis, or rows of the page (by
/// key).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Witness {
    /// The source row: a row of the page (its key), or a made row's fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Row>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<Row>,
    /// What the witness shows, in words (`the rule fails`, `score 0.5`).
    pub shows: String,
}

impl Witness {
    /// A pair of the page's rows, by key.
    fn pair(source_key: String, target_key: String, shows: String) -> Witness {
        Witness {
            source_key: Some(source_key),
            target_key: Some(target_key),
            source: None,
            target: None,
            shows,
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub kind: Kind,
    /// The rule it is about (by index and id), and the other rule it names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    #[serde(skip)]
    pub rule_index: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other: Option<String>,
    #[serde(skip)]
    pub other_index: Option<usize>,
    /// Over any row (`true`: decided on the abstraction) or over the current rows.
    pub any_row: bool,
    pub message: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub witnesses: Vec<Witness>,
    /// For an override: its source and target keys.
    #[serde(skip)]
    pub override_index: Option<usize>,
}

/// A rule the analysis over any row does not decide, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unknown {
    pub rule: String,
    pub why: String,
}

/// The analysis of a page.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Analysis {
    pub findings: Vec<Finding>,
    /// Rules outside the exact fragment: nothing is claimed about them over any row.
    pub unknown: Vec<Unknown>,
    /// Made pairs evaluated over any row.
    pub pairs_evaluated: usize,
    /// Where the analysis over any row stopped at its budget ([`TOTAL_PAIRS`]): what
    /// was left undecided (nothing is claimed about it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// The most made pairs one analysis evaluates in all (a page of many rules, each with
/// many literals): past it, the rest is left undecided, and the analysis says so.
pub const TOTAL_PAIRS: usize = 20_000_000;

// ---------------------------------------------------------------------------------------
// The abstraction
// ---------------------------------------------------------------------------------------

/// What the rules say about one field: the literals it meets.
#[derive(Debug, Clone, Default)]
struct Literals {
    numbers: Vec<f64>,
    strings: Vec<String>,
    /// Literals looked for in the field (`"x" in field`): an array or a string field.
    needles: Vec<Value>,
    /// Ordered (`<`…) against a literal: a string field is out of the fragment.
    ordered: bool,
    /// Compared with a literal (`==`, `<`…), not only looked into.
    compared: bool,
    /// Fields it is compared with (`source.x < target.y`).
    linked: BTreeSet<(Side, String)>,
}

/// `(side, path under it)` of a `var`, and its default.
fn var_of(v: &Value) -> Option<(Side, String, Option<Value>)> {
    let arg = v.as_object().filter(|o| o.len() == 1)?.get("var")?;
    let (path, default) = match arg {
        Value::String(p) => (p.as_str(), None),
        Value::Array(a) if a.len() <= 2 => (a.first()?.as_str()?, a.get(1).cloned()),
        _ => return None,
    };
    let (head, rest) = path.split_once('.')?;
    let side = match head {
        "source" => Side::Source,
        "target" => Side::Target,
        _ => return None,
    };
    (!rest.is_empty() && rest.split('.').all(|s| !s.is_empty()))
        .then(|| (side, rest.to_owned(), default))
}

fn literal(v: &Value) -> bool {
    !matches!(v, Value::Object(_) | Value::Array(_))
}

type Fields = BTreeMap<(Side, String), Literals>;

fn add_literal(l: &mut Literals, v: &Value) {
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                l.numbers.push(x);
                l.strings.push(n.to_string());
            }
        }
        Value::String(s) => {
            l.strings.push(s.clone());
            if let Ok(x) = s.trim().parse::<f64>()
                && x.is_finite()
            {
                l.numbers.push(x);
            }
        }
        Value::Bool(b) => {
            l.numbers.push(f64::from(u8::from(*b)));
            l.strings.push(b.to_string());
        }
        Value::Null | Value::Array(_) | Value::Object(_) => {}
    }
}

/// Collects the fields a logic reads and the literals each meets; `Err` says why the
/// logic is outside the fragment.
fn collect(logic: &Value, fields: &mut Fields) -> Result<(), String> {
    let o = match logic {
        Value::Object(o) => o,
        Value::Array(items) => {
            return items.iter().try_for_each(|i| collect(i, fields));
        }
        _ => return Ok(()),
    };
    let Some((op, args)) = o.iter().next().filter(|_| o.len() == 1) else {
        return Err("an object that is not one operation".to_owned());
    };
    if op == "var" {
        let (side, path, default) =
            var_of(logic).ok_or_else(|| "a `var` that is not a field of a side".to_owned())?;
        if default.as_ref().is_some_and(|d| !literal(d)) {
            return Err("a `var` default that is not a literal".to_owned());
        }
        let l = fields.entry((side, path)).or_default();
        if let Some(d) = default {
            add_literal(l, &d);
        }
        return Ok(());
    }
    let list: Vec<&Value> = match args {
        Value::Array(a) => a.iter().collect(),
        one => vec![one],
    };
    match op.as_str() {
        "==" | "!=" | "===" | "!==" | "<" | "<=" | ">" | ">=" => {
            let ordered = matches!(op.as_str(), "<" | "<=" | ">" | ">=");
            if list.len() != 2 && !(list.len() == 3 && matches!(op.as_str(), "<" | "<=")) {
                return Err(format!("`{op}` with {} arguments", list.len()));
            }
            let vars: Vec<_> = list.iter().filter_map(|a| var_of(a)).collect();
            for a in &list {
                if var_of(a).is_none() && !literal(a) {
                    return Err(format!("`{op}` of a computed value"));
                }
            }
            let keys: Vec<(Side, String)> = vars.iter().map(|(s, p, _)| (*s, p.clone())).collect();
            if vars
                .iter()
                .any(|(_, _, d)| d.as_ref().is_some_and(|d| !literal(d)))
            {
                return Err("a `var` default that is not a literal".to_owned());
            }
            for (side, path, default) in vars {
                let l = fields.entry((side, path.clone())).or_default();
                l.compared = true;
                l.ordered |= ordered;
                l.linked
                    .extend(keys.iter().filter(|k| **k != (side, path.clone())).cloned());
                if let Some(d) = default {
                    add_literal(l, &d);
                }
                for a in &list {
                    if literal(a) {
                        add_literal(l, a);
                    }
                }
            }
            Ok(())
        }
        "!" | "!!" | "and" | "or" | "if" | "?:" => list.iter().try_for_each(|a| collect(a, fields)),
        "in" => {
            let [needle, hay] = list.as_slice() else {
                return Err("`in` without two arguments".to_owned());
            };
            match (var_of(needle), var_of(hay)) {
                (Some((_, _, Some(d))), _) | (_, Some((_, _, Some(d)))) if !literal(&d) => {
                    Err("a `var` default that is not a literal".to_owned())
                }
                (Some((side, path, default)), None) => {
                    let Value::Array(items) = hay else {
                        return Err("`in` of a field in a computed value".to_owned());
                    };
                    if !items.iter().all(literal) {
                        return Err("`in` of a list that is not literals".to_owned());
                    }
                    let l = fields.entry((side, path)).or_default();
                    l.compared = true;
                    if let Some(d) = default {
                        add_literal(l, &d);
                    }
                    items.iter().for_each(|i| add_literal(l, i));
                    Ok(())
                }
                (None, Some((side, path, default))) if literal(needle) && !needle.is_null() => {
                    let l = fields.entry((side, path)).or_default();
                    if let Some(d) = default {
                        add_literal(l, &d);
                    }
                    if !l.needles.contains(needle) {
                        l.needles.push((*needle).clone());
                    }
                    Ok(())
                }
                _ => Err("`in` of other than a field and literals".to_owned()),
            }
        }
        other => Err(format!("uses `{other}`")),
    }
}

/// A field's representative values (`None`: the field missing).
fn representatives(
    l: &Literals,
    types: &BTreeSet<&'static str>,
    density: usize,
) -> Result<Vec<Option<Value>>, String> {
    let mut out: Vec<Option<Value>> = vec![None, Some(Value::Null)];
    let push = |out: &mut Vec<Option<Value>>, v: Value| {
        if !out.contains(&Some(v.clone())) {
            out.push(Some(v));
        }
    };
    // The numbers: every literal, `density` values in each gap (fields compared with
    // each other can fall in one gap in any order) and beyond each end (by steps that
    // stay apart from the end at any magnitude).
    let mut b: Vec<f64> = l.numbers.clone();
    b.extend([0.0, 1.0]);
    b.sort_by(f64::total_cmp);
    b.dedup();
    let mut reps = Vec::new();
    for k in 1..=density {
        let (lo, hi) = (b[0], b[b.len() - 1]);
        reps.push(lo - k as f64 * lo.abs().max(1.0));
        reps.push(hi + k as f64 * hi.abs().max(1.0));
        for w in b.windows(2) {
            reps.push(w[0] + (w[1] - w[0]) * k as f64 / (density + 1) as f64);
        }
    }
    reps.extend(&b);
    let numbers: Vec<Value> = reps
        .iter()
        .filter(|x| x.is_finite())
        .map(|&x| {
            if x.fract() == 0.0 && x.abs() < 9e15 {
                Value::from(x as i64)
            } else {
                serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
            }
        })
        .collect();
    if types.contains("number") {
        for v in &numbers {
            push(&mut out, v.clone());
        }
    }
    if types.contains("string") {
        if l.ordered {
            return Err("a string field ordered against a literal".to_owned());
        }
        let mut s: Vec<String> = l.strings.clone();
        s.extend(["", "0", "1", " ", "true", "false"].map(str::to_owned));
        s.extend((0..density).map(|k| format!("~other{k}~")));
        // Every number's text, and a second text of it that equals it loosely but not
        // strictly (`" 5" == 5`, `" 5" !== "5"`).
        for v in &numbers {
            s.push(v.to_string());
            s.push(format!(" {v}"));
        }
        // Strings holding every subset of the literals looked for in them (`"a" in
        // field and "b" in field` needs `"ab"`), apart by a character none holds.
        if l.needles.len() > MAX_NEEDLES {
            return Err(format!(
                "more than {MAX_NEEDLES} values looked for in one field"
            ));
        }
        let texts: Vec<String> = l
            .needles
            .iter()
            .map(|n| match n {
                Value::String(t) => t.clone(),
                other => other.to_string(),
            })
            .collect();
        for mask in 1u32..(1 << texts.len()) {
            let parts: Vec<&str> = texts
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, t)| t.as_str())
                .collect();
            s.push(parts.join("\u{2}"));
            s.push(format!("~{}~", parts.join("\u{2}")));
        }
        for x in s {
            push(&mut out, Value::String(x));
        }
    }
    if types.contains("boolean") {
        push(&mut out, Value::Bool(true));
        push(&mut out, Value::Bool(false));
    }
    if types.contains("array") {
        if l.compared {
            return Err("an array field compared with a literal".to_owned());
        }
        if l.needles.len() > MAX_NEEDLES {
            return Err(format!(
                "more than {MAX_NEEDLES} values looked for in one field"
            ));
        }
        for mask in 0u32..(1 << l.needles.len()) {
            let items: Vec<Value> = l
                .needles
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, v)| v.clone())
                .collect();
            push(&mut out, Value::Array(items));
        }
        push(&mut out, Value::Array(vec![Value::from("~other~")]));
    }
    if types.contains("object") {
        return Err("an object field".to_owned());
    }
    Ok(out)
}

/// The kinds of value a field holds in the rows (integers as numbers); a field no row
/// holds a value of may hold any scalar.
fn kinds(page: &Page, schema: &Schema, side: Side, path: &str) -> BTreeSet<&'static str> {
    let d = match side {
        Side::Source => &schema.source,
        Side::Target => &schema.target,
    };
    let mut out: BTreeSet<&'static str> = BTreeSet::new();
    if path.contains('.') {
        // Under an object: any value a row may hold there.
        out.extend(["number", "string", "boolean", "array"]);
        return out;
    }
    if let Some(f) = d.fields.get(path) {
        for (kind, _, _) in f.kinds() {
            out.insert(kind);
        }
    }
    // What the dataset's patches set it to (the matrix applies them to rows).
    for p in &page.dataset(side).patches {
        match p.set.get(path).map(crate::dataset::value_type) {
            Some("integer") => {
                out.insert("number");
            }
            Some("null") | None => {}
            Some(kind) => {
                out.insert(kind);
            }
        }
    }
    if out.is_empty() {
        out.extend(["number", "string", "boolean"]);
    }
    out
}

/// Sets `path` (`a.b`) in `row` to `v`.
fn set_path(row: &mut Row, path: &str, v: Value) {
    match path.split_once('.') {
        None => {
            row.insert(path.to_owned(), v);
        }
        Some((head, rest)) => {
            let inner = row
                .entry(head.to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            if !inner.is_object() {
                *inner = Value::Object(Map::new());
            }
            if let Value::Object(o) = inner {
                set_path(o, rest, v);
            }
        }
    }
}

/// The most fields compared with each other in one group.
const MAX_GROUP: usize = 4;

/// Each field's group: the fields linked to it by comparisons, itself included.
fn groups(fields: &Fields) -> BTreeMap<(Side, String), BTreeSet<(Side, String)>> {
    let mut out: BTreeMap<(Side, String), BTreeSet<(Side, String)>> = BTreeMap::new();
    for start in fields.keys() {
        if out.contains_key(start) {
            continue;
        }
        let mut group = BTreeSet::new();
        let mut todo = vec![start.clone()];
        while let Some(k) = todo.pop() {
            if group.insert(k.clone())
                && let Some(l) = fields.get(&k)
            {
                todo.extend(l.linked.iter().cloned());
            }
        }
        for k in &group {
            out.insert(k.clone(), group.clone());
        }
    }
    out
}

/// Why a rule that reads no field is not analysed (`constant-logic` says what it is).
const NO_FIELDS: &str = "reads no field";

/// The key field of made rows (a name no page uses).
const MADE_KEY: &str = "\u{1}made";

/// Every combination of one side's representatives, as rows.
/// A field (side and path) with its representative values (`None`: missing).
type Represented<'f> = (&'f (Side, String), Vec<Option<Value>>);

fn made_rows(side: Side, fields: &[Represented<'_>]) -> Result<Vec<Row>, String> {
    let mine: Vec<_> = fields.iter().filter(|((s, _), _)| *s == side).collect();
    let count = mine
        .iter()
        .try_fold(1usize, |n, (_, reps)| n.checked_mul(reps.len()))
        .filter(|&n| n <= MAX_ROWS)
        .ok_or_else(|| format!("too many combinations of {} fields", side.name()))?;
    let mut rows = Vec::with_capacity(count);
    for i in 0..count {
        let mut row = Row::new();
        row.insert(MADE_KEY.to_owned(), Value::from(i));
        let mut k = i;
        for ((_, path), reps) in &mine {
            if let Some(v) = &reps[k % reps.len()] {
                set_path(&mut row, path, v.clone());
            }
            k /= reps.len();
        }
        rows.push(row);
    }
    Ok(rows)
}

/// The outcomes of `rules` (indexes into the page) over every combination of the
/// representatives of the fields they read: per rule, the outcome of every made pair
/// (source-major), and the made rows.
struct Made {
    sources: Vec<Row>,
    targets: Vec<Row>,
    /// Per rule asked, per pair (source × targets + target): the outcome.
    outcomes: Vec<Vec<Option<bool>>>,
}

fn evaluate_made(
    page: &Page,
    shell: &Page,
    schema: &Schema,
    rules: &[usize],
    max_pairs: usize,
) -> Result<Made, String> {
    let mut fields = Fields::new();
    for &r in rules {
        let rule = &page.rules[r];
        let before = fields.len();
        collect(&rule.logic, &mut fields)?;
        if fields.len() == before && rules.len() == 1 {
            // Its logic reads no field (whatever its condition reads).
            return Err(NO_FIELDS.to_owned());
        }
        if let Some(c) = &rule.applies_when {
            collect(&c.logic, &mut fields)?;
        }
    }
    // Fields compared with each other share their literals, and each gap between them
    // holds as many values as the group has fields.
    let groups = groups(&fields);
    let mut reps = Vec::new();
    for (key, l) in &fields {
        let group = &groups[key];
        if group.len() > MAX_GROUP {
            return Err(format!(
                "more than {MAX_GROUP} fields compared with each other"
            ));
        }
        let mut merged = l.clone();
        for other in group.iter().filter(|k| *k != key) {
            let o = &fields[other];
            merged.numbers.extend(&o.numbers);
            merged.strings.extend(o.strings.iter().cloned());
            merged.ordered |= o.ordered;
            for n in &o.needles {
                if !merged.needles.contains(n) {
                    merged.needles.push(n.clone());
                }
            }
        }
        let types = kinds(page, schema, key.0, &key.1);
        reps.push((key, representatives(&merged, &types, group.len())?));
    }
    let sources = made_rows(Side::Source, &reps)?;
    let targets = made_rows(Side::Target, &reps)?;
    if sources.len().saturating_mul(targets.len()) > max_pairs {
        return Err(format!(
            "more than {max_pairs} combinations of field values"
        ));
    }
    let mut made = shell.clone();
    made.rules = rules.iter().map(|&r| page.rules[r].clone()).collect();
    for r in &mut made.rules {
        r.family = None;
    }
    made.source.rows = sources.clone();
    made.target.rows = targets.clone();
    let mut matrix = Matrix::new(&made).map_err(|e| e.to_string())?;
    let mut outcomes = vec![Vec::with_capacity(sources.len() * targets.len()); rules.len()];
    for s in 0..sources.len() {
        let columns = matrix.columns(s);
        for (i, c) in columns.iter().enumerate() {
            outcomes[i].extend(c.outcome.iter().map(|o| o.counted()));
        }
    }
    Ok(Made {
        sources,
        targets,
        outcomes,
    })
}

impl Made {
    fn pairs(&self) -> usize {
        self.sources.len() * self.targets.len()
    }

    /// The made pair at `p`, with its made key taken out.
    fn witness(&self, p: usize, shows: String) -> Witness {
        let clean = |r: &Row| {
            let mut r = r.clone();
            r.remove(MADE_KEY);
            r
        };
        let n = self.targets.len();
        Witness {
            source_key: None,
            target_key: None,
            source: Some(clean(&self.sources[p / n])),
            target: Some(clean(&self.targets[p % n])),
            shows,
        }
    }
}

fn word(o: Option<bool>) -> &'static str {
    match o {
        Some(true) => "passes",
        Some(false) => "fails",
        None => "does not apply",
    }
}

/// What holds for every row of the schema's types: never-true, always-true, implied-by,
/// equivalent.
/// The page without its rules, rows, overrides and assertions, its datasets keyed by
/// the made key: what made pages are built on (a page's rows are not copied per rule).
fn shell_of(page: &Page) -> Page {
    let dataset = |d: &crate::model::Dataset| crate::model::Dataset {
        name: d.name.clone(),
        key: vec![MADE_KEY.to_owned()],
        label: None,
        summary: Vec::new(),
        priority: None,
        defaults: d.defaults.clone(),
        key_case: d.key_case,
        file: None,
        read: Default::default(),
        patches: Vec::new(),
        rows: Vec::new(),
    };
    Page {
        format: page.format.clone(),
        id: page.id.clone(),
        name: page.name.clone(),
        description: None,
        organization: None,
        source: dataset(&page.source),
        target: dataset(&page.target),
        rules: Vec::new(),
        device_policy: page.device_policy.clone(),
        selection_policy: page.selection_policy.clone(),
        overrides: Vec::new(),
        assertions: Vec::new(),
        expectations: Vec::new(),
    }
}

/// `rules` (indexes) alone, then (with `pairs`) each two of them that read a field in
/// common; at most `max_pairs` made pairs per question.
fn over_any_row(
    page: &Page,
    schema: &Schema,
    rules: &[usize],
    pairs: bool,
    (max_pairs, total): (usize, usize),
    out: &mut Analysis,
) {
    let shell = shell_of(page);
    let mut exact: Vec<usize> = Vec::new();
    let mut constant = vec![false; page.rules.len()];
    for &r in rules {
        let rule = &page.rules[r];
        if out.pairs_evaluated > total {
            out.unknown.push(Unknown {
                rule: rule.id.clone(),
                why: format!("the analysis's budget of {total} made pairs is spent"),
            });
            continue;
        }
        let made = match evaluate_made(page, &shell, schema, &[r], max_pairs) {
            Ok(m) => m,
            // A rule that reads no field is `constant-logic`'s to report.
            Err(why) if why == NO_FIELDS => continue,
            Err(why) => {
                out.unknown.push(Unknown {
                    rule: rule.id.clone(),
                    why,
                });
                continue;
            }
        };
        out.pairs_evaluated += made.pairs();
        exact.push(r);
        let o = &made.outcomes[0];
        let pass = o.iter().position(|&x| x == Some(true));
        let fail = o.iter().position(|&x| x == Some(false));
        let finding = |kind, message: String, witness: Witness| Finding {
            witnesses: vec![witness],
            ..Finding::about(page, kind, r, None, message)
        };
        match (pass, fail) {
            (None, _) => {
                constant[r] = true;
                let at = fail.unwrap_or(0);
                out.findings.push(finding(
                    Kind::NeverTrue,
                    format!(
                        "no row passes this rule: every value its fields can take ({} combinations) {}",
                        made.pairs(),
                        if fail.is_some() { "fails it (or it does not apply)" } else { "leaves it not applying" }
                    ),
                    made.witness(at, format!("the rule {}", word(o[at]))),
                ));
            }
            (Some(p), None) => {
                constant[r] = true;
                out.findings.push(finding(
                    Kind::AlwaysTrue,
                    format!(
                        "every row passes this rule wherever it applies ({} combinations of its fields' values): it decides nothing",
                        made.pairs()
                    ),
                    made.witness(p, "the rule passes".to_owned()),
                ));
            }
            _ => {}
        }
    }
    if !pairs {
        return;
    }
    // Pairs of rules that read a field in common.
    let reads = |r: usize| {
        let mut f = Fields::new();
        let rule = &page.rules[r];
        let _ = collect(&rule.logic, &mut f);
        if let Some(c) = &rule.applies_when {
            let _ = collect(&c.logic, &mut f);
        }
        f.into_keys().collect::<BTreeSet<_>>()
    };
    let read: BTreeMap<usize, BTreeSet<(Side, String)>> =
        exact.iter().map(|&r| (r, reads(r))).collect();
    for (i, &a) in exact.iter().enumerate() {
        for &b in &exact[i + 1..] {
            if constant[a] || constant[b] || read[&a].is_disjoint(&read[&b]) {
                continue;
            }
            if out.pairs_evaluated > total {
                out.stopped = Some(format!(
                    "rules implied by or equal to another were looked for until the budget of {total} made pairs was spent: the pairs after `{}` and `{}` were not",
                    page.rules[a].id, page.rules[b].id
                ));
                return;
            }
            let Ok(made) = evaluate_made(page, &shell, schema, &[a, b], max_pairs) else {
                continue;
            };
            out.pairs_evaluated += made.pairs();
            let (oa, ob) = (&made.outcomes[0], &made.outcomes[1]);
            let passes = |x: Option<bool>| x == Some(true);
            let a_not_b = (0..oa.len()).find(|&p| passes(oa[p]) && !passes(ob[p]));
            let b_not_a = (0..oa.len()).find(|&p| passes(ob[p]) && !passes(oa[p]));
            let same = oa == ob;
            let ra = &page.rules[a];
            let finding = |kind, rule: usize, other: usize, message: String, witnesses| Finding {
                witnesses,
                ..Finding::about(page, kind, rule, Some(other), message)
            };
            if same {
                // A pair both pass (the witness of what they share).
                let both = oa.iter().position(|&x| x == Some(true));
                out.findings.push(finding(
                    Kind::Equivalent,
                    b,
                    a,
                    format!(
                        "this rule has the outcome of `{}` on every row ({} combinations): one of them is enough",
                        ra.id,
                        made.pairs()
                    ),
                    both.map(|p| made.witness(p, "both rules pass".to_owned()))
                        .into_iter()
                        .collect(),
                ));
            } else {
                // (the implied rule, the rule implying it, a pair only the first passes)
                let implied = match (a_not_b, b_not_a) {
                    (None, Some(p)) => Some((b, a, p)),
                    (Some(p), None) => Some((a, b, p)),
                    _ => None,
                };
                if let Some((rule, by, p)) = implied {
                    let (rule_id, by_id) = (&page.rules[rule].id, &page.rules[by].id);
                    out.findings.push(finding(
                        Kind::ImpliedBy,
                        rule,
                        by,
                        format!(
                            "this rule passes wherever `{by_id}` passes ({} combinations): where `{by_id}` holds, its weight adds nothing",
                            made.pairs()
                        ),
                        vec![made.witness(
                            p,
                            format!("`{rule_id}` passes and `{by_id}` does not: the two differ"),
                        )],
                    ));
                }
            }
        }
    }
}

/// What holds over the current rows: vetoing required rules, unreachable thresholds,
/// stale overrides. `never` are the rules no row passes (from [`over_any_row`]).
fn over_rows(page: &Page, matrix: &mut Matrix, never: &[usize], out: &mut Analysis) {
    let (ns, nt) = (page.source.rows.len(), page.target.rows.len());
    let weights = RuleWeight::of_rules(&page.rules);
    let scoring = Scoring::new(&page.device_policy, &weights);
    let policy = &page.device_policy;
    // Given the weights alone: rules that never pass (and always apply) cap every score.
    let scored = |r: usize| Tally::scores(policy, weights[r]);
    let total: f64 = (0..page.rules.len())
        .filter(|&r| scored(r))
        .map(|r| weights[r].weight)
        .sum();
    let lost: Vec<usize> = never
        .iter()
        .copied()
        .filter(|&r| scored(r) && page.rules[r].applies_when.is_none())
        .collect();
    let lost_weight: f64 = lost.iter().map(|&r| weights[r].weight).sum();
    if total > 0.0 && !lost.is_empty() {
        let cap = (total - lost_weight) / total;
        // The best any row can do: the lost rules fail, every other rule passes —
        // decided by the page's own scoring (exact units), not by a quotient.
        let best: Vec<Option<bool>> = (0..page.rules.len())
            .map(|r| Some(!lost.contains(&r)))
            .collect();
        let tally = scoring.tally_of(&best);
        for (name, t, meets) in [
            (
                "fullThreshold",
                policy.full_threshold,
                scoring.meets_full(&tally),
            ),
            (
                "partialThreshold",
                policy.partial_threshold,
                scoring.meets_partial(&tally),
            ),
        ] {
            if !meets {
                let ids: Vec<&str> = lost.iter().map(|&r| page.rules[r].id.as_str()).collect();
                out.findings.push(Finding::of(
                    Kind::UnreachableThreshold,
                    true,
                    format!(
                        "{name} {t} cannot be reached by any row: {} never pass, so no score exceeds {cap:.4} ({} of {} weight)",
                        ids.join(", "),
                        total - lost_weight,
                        total
                    ),
                ));
            }
        }
    }
    if ns == 0 || nt == 0 {
        return;
    }
    // Per required rule: the sources where it fails every target.
    let vetoing = matches!(
        policy.required_mode,
        RequiredMode::AnyRequiredFailIs0 | RequiredMode::AnyRequiredFailCapsAtPartial
    );
    let mut vetoes: Vec<Vec<usize>> = vec![Vec::new(); page.rules.len()];
    // Whether some pair (not overridden) reaches each threshold by its score, and the
    // best-scoring pair a required failure does not zero.
    let (mut full, mut partial) = (false, false);
    let mut best: Option<(f64, usize, usize)> = None;
    for s in 0..ns {
        let eval = matrix.evaluate(s);
        if vetoing {
            for (r, c) in eval.columns.iter().enumerate() {
                // Neither a pass nor an n/a: every target fails (an error fails).
                if page.rules[r].required && c.passes == 0 && c.not_applicable == 0 {
                    vetoes[r].push(s);
                }
            }
        }
        for t in 0..nt {
            if eval.overrides.get(t).is_some() {
                continue;
            }
            let d = eval.devices[t];
            use crate::verdict::Reason;
            full |= d.reason == Reason::Full;
            partial |= matches!(d.reason, Reason::Full | Reason::Partial)
                || (d.reason == Reason::RequiredFail && d.verdict == Verdict::Partial);
            // The witness: the best score among pairs whose required rules pass (a
            // failed one zeroes or caps the verdict, whatever the score).
            if d.reason != Reason::RequiredFail && best.is_none_or(|(b, _, _)| d.score > b) {
                best = Some((d.score, s, t));
            }
        }
    }
    let key = |side: Side, i: usize| {
        let d = page.dataset(side);
        d.row_key(&d.rows[i])
    };
    for (r, sources) in vetoes.iter().enumerate() {
        if sources.is_empty() {
            continue;
        }
        let effect = match policy.required_mode {
            RequiredMode::AnyRequiredFailCapsAtPartial => "caps every target at partial",
            _ => "makes every target 0",
        };
        let whom = if sources.len() == ns {
            format!("for every source ({ns})")
        } else {
            let shown: Vec<String> = sources
                .iter()
                .take(3)
                .map(|&s| key(Side::Source, s))
                .collect();
            format!(
                "for {} of {ns} sources ({}{})",
                sources.len(),
                shown.join(", "),
                if sources.len() > 3 { ", …" } else { "" }
            )
        };
        out.findings.push(Finding {
            any_row: false,
            witnesses: sources
                .iter()
                .take(3)
                .map(|&s| {
                    Witness::pair(
                        key(Side::Source, s),
                        key(Side::Target, 0),
                        "the rule fails on every target of this source".to_owned(),
                    )
                })
                .collect(),
            ..Finding::about(
                page,
                Kind::RequiredVetoes,
                r,
                None,
                format!("this required rule fails every target {whom}: it {effect}"),
            )
        });
    }
    // Thresholds the current rows do not reach (said once: not again when no row at
    // all can reach it).
    for (name, t, reached) in [
        ("fullThreshold", policy.full_threshold, full),
        ("partialThreshold", policy.partial_threshold, partial),
    ] {
        let said = out
            .findings
            .iter()
            .any(|f| f.kind == Kind::UnreachableThreshold && f.message.starts_with(name));
        let Some((score, s, tt)) = best.filter(|_| !reached && !said) else {
            continue;
        };
        out.findings.push(Finding {
            witnesses: vec![Witness::pair(
                key(Side::Source, s),
                key(Side::Target, tt),
                format!("score {score:.4}, the best of the current rows"),
            )],
            ..Finding::of(
                Kind::UnreachableThreshold,
                false,
                format!(
                    "{name} {t}: no pair of the current rows reaches it; the best score where every required rule passes is {score:.4}"
                ),
            )
        });
    }
    // Overrides that force what the rules alone give.
    let by_source: BTreeMap<usize, Vec<(usize, usize, bool)>> = {
        let mut m: BTreeMap<usize, Vec<(usize, usize, bool)>> = BTreeMap::new();
        let sources: std::collections::HashMap<String, usize> = (0..ns)
            .map(|s| (crate::model::key_hash(&key(Side::Source, s)), s))
            .collect();
        let targets: std::collections::HashMap<String, usize> = (0..nt)
            .map(|t| (crate::model::key_hash(&key(Side::Target, t)), t))
            .collect();
        for (i, o) in page.overrides.iter().enumerate() {
            if let (Some(s), Some(t)) = (
                o.source_hash().and_then(|h| sources.get(&h).copied()),
                o.target_hash().and_then(|h| targets.get(&h).copied()),
            ) {
                m.entry(s).or_default().push((i, t, o.value));
            }
        }
        m
    };
    for (s, list) in by_source {
        let eval = matrix.evaluate(s);
        for (i, t, value) in list {
            let outcomes: Vec<Option<bool>> = eval
                .columns
                .iter()
                .map(|c| c.outcome[t].counted())
                .collect();
            let alone = device_verdict(&scoring, &scoring.tally_of(&outcomes), None);
            let agrees = (value && alone.verdict == Verdict::Full)
                || (!value && alone.verdict == Verdict::None);
            if agrees {
                out.findings.push(Finding {
                    witnesses: vec![Witness::pair(
                        key(Side::Source, s),
                        key(Side::Target, t),
                        format!("the rules alone give {}", alone.verdict),
                    )],
                    override_index: Some(i),
                    ..Finding::of(
                        Kind::StaleOverride,
                        false,
                        format!(
                            "the override forces {} and the rules alone give {} ({}): it can go",
                            if value {
                                "compatible (2)"
                            } else {
                                "incompatible (0)"
                            },
                            alone.verdict,
                            alone.reason.as_str()
                        ),
                    )
                });
            }
        }
    }
}

/// Analyses a page: over any row its schema allows (the rules' logic), and over its
/// current rows (through `matrix`, the page's).
pub fn analyze(page: &Page, schema: &Schema, matrix: &mut Matrix) -> Analysis {
    analyze_within(page, schema, matrix, TOTAL_PAIRS)
}

/// [`analyze`] with another budget of made pairs in all.
pub fn analyze_within(page: &Page, schema: &Schema, matrix: &mut Matrix, total: usize) -> Analysis {
    let mut out = Analysis {
        findings: Vec::new(),
        unknown: Vec::new(),
        pairs_evaluated: 0,
        stopped: None,
    };
    let all: Vec<usize> = (0..page.rules.len()).collect();
    over_any_row(page, schema, &all, true, (MAX_PAIRS, total), &mut out);
    let never: Vec<usize> = out
        .findings
        .iter()
        .filter(|f| f.kind == Kind::NeverTrue)
        .filter_map(|f| f.rule_index)
        .collect();
    over_rows(page, matrix, &never, &mut out);
    out
}

/// The most made pairs the editor's live analysis of one rule evaluates.
pub const LIVE_PAIRS: usize = 20_000;

/// The findings over any row of one rule alone (never-true, always-true), on at most
/// [`LIVE_PAIRS`] made pairs: cheap enough for the editor's warnings as it is typed.
pub fn rule_alone(page: &Page, schema: &Schema, rule: usize) -> Vec<Finding> {
    let mut out = Analysis {
        findings: Vec::new(),
        unknown: Vec::new(),
        pairs_evaluated: 0,
        stopped: None,
    };
    over_any_row(
        page,
        schema,
        &[rule],
        false,
        (LIVE_PAIRS, LIVE_PAIRS),
        &mut out,
    );
    out.findings
}

impl Finding {
    /// A finding about no rule or override in particular (set those after).
    fn of(kind: Kind, any_row: bool, message: String) -> Finding {
        Finding {
            kind,
            rule: None,
            rule_index: None,
            other: None,
            other_index: None,
            any_row,
            message,
            witnesses: Vec::new(),
            override_index: None,
        }
    }

    /// A finding about rule `r` of `page` (and `other`, when it names another).
    fn about(page: &Page, kind: Kind, r: usize, other: Option<usize>, message: String) -> Finding {
        Finding {
            rule: Some(page.rules[r].id.clone()),
            rule_index: Some(r),
            other: other.map(|o| page.rules[o].id.clone()),
            other_index: other,
            ..Finding::of(kind, true, message)
        }
    }

    /// The finding as a warning of `check` (and the editor): its code, where it points
    /// (the rule's logic, the threshold, the override) and its message.
    pub fn diagnostic(&self) -> crate::diag::Diagnostic {
        use crate::diag::{Code, Diagnostic};
        let code = match self.kind {
            Kind::NeverTrue => Code::NeverTrue,
            Kind::AlwaysTrue => Code::AlwaysTrue,
            Kind::ImpliedBy => Code::ImpliedRule,
            Kind::Equivalent => Code::EquivalentRules,
            Kind::RequiredVetoes => Code::RequiredVetoes,
            Kind::UnreachableThreshold => Code::UnreachableThreshold,
            Kind::StaleOverride => Code::StaleOverride,
        };
        let pointer = match (self.rule_index, self.override_index) {
            (Some(r), _) => format!("/rules/{r}/logic"),
            (None, Some(o)) => format!("/overrides/{o}"),
            (None, None) if self.message.starts_with("partialThreshold") => {
                "/devicePolicy/partialThreshold".to_owned()
            }
            (None, None) => "/devicePolicy/fullThreshold".to_owned(),
        };
        let witness = self
            .witnesses
            .first()
            .and_then(|w| match (&w.source_key, &w.target_key) {
                (Some(s), Some(t)) => Some(format!("{s} × {t}: {}", w.shows)),
                _ => None,
            });
        let hint = match self.kind {
            Kind::NeverTrue => Some(
                "check the values it compares with: a typo, a unit, a bound on the wrong side?"
                    .to_owned(),
            ),
            Kind::AlwaysTrue => {
                Some("it may only matter for rows of other types; else remove it".to_owned())
            }
            Kind::ImpliedBy | Kind::Equivalent => {
                Some("`rulebench analyze` shows the pair that tells them apart".to_owned())
            }
            Kind::StaleOverride => Some("`rulebench override rm` removes it".to_owned()),
            Kind::RequiredVetoes | Kind::UnreachableThreshold => witness,
        };
        Diagnostic::warning(code, pointer, self.message.clone()).with_hint(hint)
    }
}

/// The findings of an analysis as warnings, in page order.
pub fn diagnostics(analysis: &Analysis) -> Vec<crate::diag::Diagnostic> {
    analysis.findings.iter().map(Finding::diagnostic).collect()
}

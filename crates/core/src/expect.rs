//! Expectations from a table (`rulebench test PAGE --expect FILE`): a table an analyst
//! keeps (CSV, TSV, JSON Lines, Parquet, Excel) with one expected outcome per row — a
//! source, a target, and the expected `verdict`, `score`, `reason` or a rule's outcome —
//! checked row by row against the engine's results.
//!
//! The columns, by name (reserved names in any case):
//! - the source: `source` (or `selection`), holding a source row's key, id or label; or,
//!   without one, the source dataset's key fields themselves;
//! - the target: `target`, or the target dataset's key fields;
//! - what is expected, each optional, an empty cell expecting nothing: `verdict` (0, 1,
//!   2, or `none`/`incompatible`, `partial`, `full`/`compatible`), `score` (as shown:
//!   `0.67` matches any score that rounds to 0.67, at least two places; `67%` too),
//!   `reason` (`override`, `required-fail`, `full`, `partial`, `low-score`), and a rule's
//!   outcome in a column named `rule.ID` (or `rule:ID`, or the rule's id: `pass`,
//!   `fail`, `n/a`);
//! - `sourceLabel` and `targetLabel` are read by people only (what `--pin-to` writes);
//!   so are a tidy result's other columns: the CSV, TSV, JSON Lines or Parquet that
//!   `evaluate --all` writes is itself a table of expectations (`selectionKey`,
//!   `targetId`, …); any other column is ignored and listed as such.
//!
//! Reading is all or nothing: a row naming no row of the page, or a cell that is not
//! what its column holds, refuses the table with every such row listed.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use crate::dataset::{BadRow, DataError, RowPlace};
use crate::diag::{did_you_mean, did_you_mean_row};
use crate::model::{Dataset, Page, Row, Side};
use crate::result::SelectionResult;
use crate::verdict::{Reason, Verdict};

/// The column that names the source row, and its other names (the second is a tidy
/// result's: `evaluate --all --format csv` writes a table of expectations).
pub const SOURCE: &str = "source";
const SOURCE_ALIASES: [&str; 2] = ["selection", "selectionKey"];
/// The column that names the target row, and a tidy result's name for it.
pub const TARGET: &str = "target";
const TARGET_ALIAS: &str = "targetId";
pub const VERDICT: &str = "verdict";
pub const SCORE: &str = "score";
pub const REASON: &str = "reason";
/// Columns written for people (by `--pin-to`), never checked.
pub const SOURCE_LABEL: &str = "sourceLabel";
pub const TARGET_LABEL: &str = "targetLabel";
/// A tidy result's other columns, read by people only; and its summary fields'
/// prefix (`target.provider`).
const TIDY_INFORMATION: [&str; 4] = [
    "selectionLabel",
    "selectionVerdict",
    "recommended",
    "failingRules",
];
const SUMMARY_PREFIX: &str = "target.";
/// The prefix of a rule outcome's column (`rule.gpu`, as tidy results name it), and
/// its other spelling (`rule:gpu`).
pub const RULE_PREFIX: &str = "rule.";
const RULE_PREFIX_ALIAS: &str = "rule:";

/// The fewest decimal places a score is compared at (as the workbench shows scores).
const SCORE_PLACES: u32 = 2;

/// An expected score, compared at the places it was written with.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Score {
    pub value: f64,
    /// Decimal places it is compared at (at least [`SCORE_PLACES`]).
    pub places: u32,
}

impl Score {
    /// Whether `actual`, rounded to the places of the expectation, is it.
    pub fn matches(&self, actual: f64) -> bool {
        if self.places >= 17 {
            return actual == self.value;
        }
        // As scores are shown: the same digits at these places (ties to even, as
        // `{:.2}` prints 0.625 as 0.62).
        let p = self.places as usize;
        format!("{actual:.p$}") == format!("{:.p$}", self.value)
    }

    /// A score as written: a number, its text, or a percentage (`67%`).
    fn parse(cell: &Value) -> Result<Option<Score>, String> {
        let text = match cell {
            Value::Null => return Ok(None),
            Value::Number(n) => n.to_string(),
            Value::String(s) if s.trim().is_empty() => return Ok(None),
            Value::String(s) => s.trim().to_owned(),
            other => return Err(format!("`{other}` is not a score (a number from 0 to 1)")),
        };
        let (digits, percent) = match text.strip_suffix('%') {
            Some(d) => (d.trim_end(), true),
            None => (text.as_str(), false),
        };
        let bad = || format!("`{text}` is not a score (a number from 0 to 1, or a percentage)");
        if digits.contains(['e', 'E']) || digits.is_empty() {
            return Err(bad());
        }
        let value: f64 = digits.parse().map_err(|_| bad())?;
        let written = digits.split_once('.').map_or(0, |(_, f)| f.len() as u32);
        let (value, written) = if percent {
            (value / 100.0, written + 2)
        } else {
            (value, written)
        };
        if !(0.0..=1.0).contains(&value) {
            return Err(format!("`{text}` is not a score: scores run from 0 to 1"));
        }
        Ok(Some(Score {
            value,
            places: written.max(SCORE_PLACES),
        }))
    }
}

/// A rule's expected outcome on a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum RuleExpect {
    Pass,
    Fail,
    /// The rule does not apply to the pair.
    NotApplicable,
}

impl RuleExpect {
    pub fn word(self) -> &'static str {
        match self {
            RuleExpect::Pass => "pass",
            RuleExpect::Fail => "fail",
            RuleExpect::NotApplicable => "n/a",
        }
    }

    /// The expectation an outcome meets (`None`: the rule does not apply).
    pub fn of(outcome: Option<bool>) -> RuleExpect {
        match outcome {
            Some(true) => RuleExpect::Pass,
            Some(false) => RuleExpect::Fail,
            None => RuleExpect::NotApplicable,
        }
    }

    fn parse(cell: &Value) -> Result<Option<RuleExpect>, String> {
        let text = match cell {
            Value::Null => return Ok(None),
            Value::Bool(b) => return Ok(Some(RuleExpect::of(Some(*b)))),
            Value::String(s) => s.trim().to_lowercase(),
            // A whole number written as a float (`1.0`, from a float column) is one.
            Value::Number(n) => match n.as_f64() {
                Some(x) if x == 0.0 || x == 1.0 => (x as u8).to_string(),
                _ => n.to_string(),
            },
            other => other.to_string(),
        };
        Ok(Some(match text.as_str() {
            "" => return Ok(None),
            "pass" | "passed" | "true" | "yes" | "1" => RuleExpect::Pass,
            "fail" | "failed" | "false" | "no" | "0" => RuleExpect::Fail,
            "n/a" | "na" | "not applicable" | "null" => RuleExpect::NotApplicable,
            _ => {
                return Err(format!(
                    "`{text}` is not a rule outcome (pass, fail or n/a)"
                ));
            }
        }))
    }
}

fn parse_verdict(cell: &Value) -> Result<Option<Verdict>, String> {
    let text = match cell {
        Value::Null => return Ok(None),
        // A whole number written as a float (`2.0`, from a float column) is one.
        Value::Number(n) => match n.as_f64() {
            Some(x) if x.fract() == 0.0 && (0.0..=2.0).contains(&x) => (x as u8).to_string(),
            _ => n.to_string(),
        },
        Value::String(s) => s.trim().to_lowercase(),
        other => other.to_string(),
    };
    Ok(Some(match text.as_str() {
        "" => return Ok(None),
        "0" | "none" | "incompatible" => Verdict::None,
        "1" | "partial" => Verdict::Partial,
        "2" | "full" | "compatible" => Verdict::Full,
        _ => {
            return Err(format!(
                "`{text}` is not a verdict (0, 1 or 2; none, partial or full)"
            ));
        }
    }))
}

fn parse_reason(cell: &Value) -> Result<Option<Reason>, String> {
    let text = match cell {
        Value::Null => return Ok(None),
        Value::String(s) => s.trim().to_lowercase(),
        other => other.to_string(),
    };
    if text.is_empty() {
        return Ok(None);
    }
    Reason::parse(&text).map(Some).ok_or_else(|| {
        format!("`{text}` is not a reason (override, required-fail, full, partial or low-score)")
    })
}

/// What one row of the table expects of one pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    /// The row's place in the file (1-based, as `place` counts).
    pub line: usize,
    /// The source and target rows of the page.
    pub source: usize,
    pub target: usize,
    pub verdict: Option<Verdict>,
    pub score: Option<Score>,
    pub reason: Option<Reason>,
    /// (rule index, expected outcome), in column order.
    pub rules: Vec<(usize, RuleExpect)>,
}

/// A table's rows as read: columns in order, rows with their places.
#[derive(Debug, Clone, Copy)]
pub struct TableRows<'a> {
    pub file: &'a str,
    pub fields: &'a [String],
    pub rows: &'a [(usize, Row)],
    pub place: &'a RowPlace,
}

/// The expectations of a table, and the columns it has that nobody reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectations {
    pub rows: Vec<Expectation>,
    pub ignored: Vec<String>,
}

/// How a side's row is named in the table.
enum Naming {
    /// One column holds a key, id or label.
    Column(String),
    /// The dataset's key fields, one column each.
    KeyFields(Vec<String>),
}

struct Plan {
    source: Naming,
    target: Naming,
    verdict: Option<String>,
    score: Option<String>,
    reason: Option<String>,
    rules: Vec<(String, usize)>,
    ignored: Vec<String>,
}

fn named<'f>(fields: &'f [String], name: &str) -> Option<&'f String> {
    fields.iter().find(|f| f.trim().eq_ignore_ascii_case(name))
}

fn plan(page: &Page, fields: &[String], file: &str) -> Result<Plan, DataError> {
    let error = |message: String| DataError::File {
        file: file.to_owned(),
        message,
    };
    let naming = |side: Side, names: &[&str]| -> Result<Naming, DataError> {
        if let Some(f) = names.iter().find_map(|n| named(fields, n)) {
            return Ok(Naming::Column(f.clone()));
        }
        let d = page.dataset(side);
        let other = page.dataset(match side {
            Side::Source => Side::Target,
            Side::Target => Side::Source,
        });
        let own = !d.key.is_empty()
            && d.key
                .iter()
                .all(|k| fields.contains(k) && !other.key.contains(k));
        if own {
            return Ok(Naming::KeyFields(d.key.clone()));
        }
        let shared: Vec<&String> = d
            .key
            .iter()
            .filter(|k| fields.contains(k) && other.key.contains(k))
            .collect();
        if let Some(k) = shared.first() {
            return Err(error(format!(
                "no {0} column: `{k}` keys both sides (hint: a column named `{1}` holds \
                 each row's {0} row — its key, id or label)",
                side.name(),
                names[0]
            )));
        }
        Err(error(format!(
            "no {0} column (hint: a column named `{1}` holds each row's {0} row — its key, \
             id or label; the page's {0} rows are keyed by {2})",
            side.name(),
            names[0],
            d.key
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )))
    };
    let source = naming(
        Side::Source,
        &[SOURCE, SOURCE_ALIASES[0], SOURCE_ALIASES[1]],
    )?;
    let target = naming(Side::Target, &[TARGET, TARGET_ALIAS])?;
    let column = |name: &str| named(fields, name).cloned();
    let (verdict, score, reason) = (column(VERDICT), column(SCORE), column(REASON));
    let mut rules = Vec::new();
    let mut ignored = Vec::new();
    let ids = || page.rules.iter().map(|r| r.id.as_str());
    for f in fields {
        let taken = [&verdict, &score, &reason]
            .iter()
            .any(|c| c.as_ref() == Some(f))
            || match (&source, &target) {
                (Naming::Column(s), _) if s == f => true,
                (_, Naming::Column(t)) if t == f => true,
                (Naming::KeyFields(k), _) | (_, Naming::KeyFields(k)) if k.contains(f) => true,
                _ => false,
            }
            || [SOURCE_LABEL, TARGET_LABEL]
                .iter()
                .chain(&TIDY_INFORMATION)
                .any(|l| f.trim().eq_ignore_ascii_case(l))
            || f.starts_with(SUMMARY_PREFIX);
        if taken {
            continue;
        }
        if let Some(id) = f
            .strip_prefix(RULE_PREFIX)
            .or_else(|| f.strip_prefix(RULE_PREFIX_ALIAS))
        {
            let id = id.trim();
            let Some(i) = page.rules.iter().position(|r| r.id == id) else {
                let hint = did_you_mean(id, ids())
                    .map(|s| format!("did you mean `{RULE_PREFIX}{s}`?"))
                    .unwrap_or_else(|| {
                        let all: Vec<&str> = ids().take(12).collect();
                        format!("the page's rules are {}", all.join(", "))
                    });
                return Err(error(format!(
                    "column `{}` names no rule of page `{}` (hint: {hint})",
                    crate::text::sanitize(f),
                    page.id
                )));
            };
            rules.push((f.clone(), i));
        } else if let Some(i) = page.rules.iter().position(|r| r.id == *f) {
            rules.push((f.clone(), i));
        } else {
            ignored.push(f.clone());
        }
    }
    if verdict.is_none() && score.is_none() && reason.is_none() && rules.is_empty() {
        return Err(error(
            "no expected outcome (hint: columns `verdict`, `score`, `reason`, or \
             `rule.ID` for a rule's outcome)"
                .to_owned(),
        ));
    }
    Ok(Plan {
        source,
        target,
        verdict,
        score,
        reason,
        rules,
        ignored,
    })
}

/// Finds a side's rows by the names a table gives them: a key or id through an index,
/// anything else as [`Dataset::find_row`] and labels do; each distinct name once.
struct Finder<'d> {
    d: &'d Dataset,
    side: Side,
    by_key: HashMap<String, usize>,
    by_id: HashMap<String, usize>,
    seen: HashMap<String, Result<usize, String>>,
}

impl<'d> Finder<'d> {
    fn new(d: &'d Dataset, side: Side) -> Self {
        let mut by_key = HashMap::with_capacity(d.rows.len());
        let mut by_id = HashMap::with_capacity(d.rows.len());
        for (i, r) in d.rows.iter().enumerate() {
            by_key.entry(d.folded_key(r)).or_insert(i);
            by_id
                .entry(d.key_case.fold(&d.row_id(r)).into_owned())
                .or_insert(i);
        }
        Finder {
            d,
            side,
            by_key,
            by_id,
            seen: HashMap::new(),
        }
    }

    fn find(&mut self, needle: &str) -> Result<usize, String> {
        if let Some(found) = self.seen.get(needle) {
            return found.clone();
        }
        let folded = self.d.key_case.fold(needle);
        let found = match self
            .by_key
            .get(folded.as_ref())
            .or_else(|| self.by_id.get(folded.as_ref()))
        {
            Some(&i) => Ok(i),
            // A cell a CSV writer guarded against spreadsheet formulas (`'=x`): the
            // name without its guard, when it names a row.
            None => match needle.strip_prefix('\'') {
                Some(bare) if bare.starts_with(['=', '+', '-', '@', '\t', '\r']) => {
                    self.find(bare).or_else(|_| self.search(needle))
                }
                _ => self.search(needle),
            },
        };
        self.seen.insert(needle.to_owned(), found.clone());
        found
    }

    fn search(&self, needle: &str) -> Result<usize, String> {
        let d = self.d;
        if let Some(i) = d.find_row(needle) {
            return Ok(i);
        }
        let side = self.side.name();
        let named = d.rows_named(needle);
        match named.as_slice() {
            [one] => Ok(*one),
            [] => Err(format!(
                "no {side} row `{}`{}",
                crate::text::sanitize(needle),
                did_you_mean_row(d, needle)
                    .map(|k| format!(" (hint: did you mean `{}`?)", crate::text::sanitize(&k)))
                    .unwrap_or_default()
            )),
            many => Err(format!(
                "`{}` names {} {side} rows (hint: name one by its key: {})",
                crate::text::sanitize(needle),
                many.len(),
                many.iter()
                    .take(3)
                    .map(|&i| d.row_key(&d.rows[i]))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

/// The text of a cell that names a row (a number as written, a string as is).
fn name_text(cell: Option<&Value>) -> Option<String> {
    match cell? {
        Value::Null => None,
        Value::String(s) if s.trim().is_empty() => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn needle(naming: &Naming, d: &Dataset, row: &Row) -> Result<String, String> {
    match naming {
        Naming::Column(c) => {
            name_text(row.get(c)).ok_or_else(|| format!("the `{c}` cell is empty"))
        }
        // One key field: its value is the row's id (or, failing that, a label).
        Naming::KeyFields(fields) if fields.len() == 1 => {
            let f = &fields[0];
            name_text(row.get(f)).ok_or_else(|| format!("the `{f}` cell is empty"))
        }
        Naming::KeyFields(fields) => {
            let mut key = Row::new();
            for f in fields {
                let text =
                    name_text(row.get(f)).ok_or_else(|| format!("the `{f}` cell is empty"))?;
                key.insert(f.clone(), Value::String(text));
            }
            Ok(d.row_key(&key))
        }
    }
}

/// Reads a table's expectations against `page` (whose source and target rows are all
/// there). Every bad row is reported at once.
pub fn read(page: &Page, table: TableRows<'_>) -> Result<Expectations, DataError> {
    let plan = plan(page, table.fields, table.file)?;
    let mut sources = Finder::new(&page.source, Side::Source);
    let mut targets = Finder::new(&page.target, Side::Target);
    let mut rows = Vec::with_capacity(table.rows.len());
    let mut bad = Vec::new();
    for (line, row) in table.rows {
        let read = || -> Result<Expectation, String> {
            let cell =
                |c: &Option<String>| c.as_ref().and_then(|c| row.get(c)).unwrap_or(&Value::Null);
            let at = |c: &Option<String>, e: String| {
                format!("`{}`: {e}", c.as_deref().unwrap_or_default())
            };
            let verdict = parse_verdict(cell(&plan.verdict)).map_err(|e| at(&plan.verdict, e))?;
            let score = Score::parse(cell(&plan.score)).map_err(|e| at(&plan.score, e))?;
            let reason = parse_reason(cell(&plan.reason)).map_err(|e| at(&plan.reason, e))?;
            let mut rules = Vec::new();
            for (c, i) in &plan.rules {
                let parsed = RuleExpect::parse(row.get(c).unwrap_or(&Value::Null))
                    .map_err(|e| format!("`{c}`: {e}"))?;
                if let Some(e) = parsed {
                    rules.push((*i, e));
                }
            }
            if verdict.is_none() && score.is_none() && reason.is_none() && rules.is_empty() {
                return Err("expects nothing (every expected outcome's cell is empty)".to_owned());
            }
            Ok(Expectation {
                line: 0,
                source: 0,
                target: 0,
                verdict,
                score,
                reason,
                rules,
            })
        };
        let found = needle(&plan.source, &page.source, row)
            .and_then(|n| sources.find(&n))
            .and_then(|s| {
                let t = needle(&plan.target, &page.target, row).and_then(|n| targets.find(&n))?;
                Ok((s, t))
            })
            .and_then(|(s, t)| {
                read().map(|e| Expectation {
                    line: *line,
                    source: s,
                    target: t,
                    ..e
                })
            });
        match found {
            Ok(e) => rows.push(e),
            Err(message) => bad.push(BadRow {
                line: *line,
                message,
            }),
        }
    }
    if !bad.is_empty() {
        return Err(DataError::BadRows {
            file: table.file.to_owned(),
            good: rows.len(),
            bad,
            place: table.place.clone(),
        });
    }
    if rows.is_empty() {
        return Err(DataError::File {
            file: table.file.to_owned(),
            message: "no rows: a table of expectations has one row per expected outcome".to_owned(),
        });
    }
    Ok(Expectations {
        rows,
        ignored: plan.ignored,
    })
}

/// One expected value that is not what the engine gives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    /// `verdict`, `score`, `reason` or `rule.ID`.
    pub what: String,
    pub expected: String,
    pub actual: String,
}

/// What the engine gives a pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Actual {
    pub verdict: Verdict,
    pub score: f64,
    pub reason: Reason,
}

/// One row of the table, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RowOutcome {
    /// The row's place in the file (1-based, as `at` says it).
    pub row: usize,
    /// `file:12`, `file: row 12`, `file: sheet `S` row 12`.
    pub at: String,
    /// The source row's key, and its label.
    pub source: String,
    pub source_label: String,
    /// The target row's id, and its label.
    pub target: String,
    pub target_label: String,
    pub passed: bool,
    pub actual: Actual,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mismatches: Vec<Mismatch>,
    /// On a failed row: the ids of the rules that fail on the pair, and why the pair
    /// got its verdict (the override, the failed required rules, or the score against
    /// the thresholds).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failing_rules: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

fn score_text(score: f64) -> String {
    format!("{score}")
}

/// Checks one expectation against its selection's result (`result` is the evaluation of
/// `e.source`).
pub fn check(
    page: &Page,
    e: &Expectation,
    result: &SelectionResult,
    file: &str,
    place: &RowPlace,
) -> RowOutcome {
    let t = e.target;
    let d = result.device(t);
    let mut mismatches = Vec::new();
    if let Some(v) = e.verdict.filter(|&v| v != d.verdict) {
        mismatches.push(Mismatch {
            what: VERDICT.to_owned(),
            expected: v.to_string(),
            actual: d.verdict.to_string(),
        });
    }
    if let Some(s) = e.score.filter(|s| !s.matches(d.score)) {
        mismatches.push(Mismatch {
            what: SCORE.to_owned(),
            // At the places written: they differ there.
            expected: format!("{:.*}", s.places as usize, s.value),
            actual: format!("{:.*}", s.places as usize, d.score),
        });
    }
    if let Some(r) = e.reason.filter(|&r| r != d.reason) {
        mismatches.push(Mismatch {
            what: REASON.to_owned(),
            expected: r.as_str().to_owned(),
            actual: d.reason.as_str().to_owned(),
        });
    }
    for &(rule, want) in &e.rules {
        let got = RuleExpect::of(result.outcome(rule, t));
        if got != want {
            mismatches.push(Mismatch {
                what: format!("{RULE_PREFIX}{}", page.rules[rule].id),
                expected: want.word().to_owned(),
                actual: got.word().to_owned(),
            });
        }
    }
    let passed = mismatches.is_empty();
    let (source, target) = (&page.source.rows[e.source], &page.target.rows[e.target]);
    RowOutcome {
        row: e.line,
        at: place.at(file, e.line),
        source: page.source.row_key(source),
        source_label: page.source.row_label(source),
        target: page.target.row_id(target),
        target_label: page.target.row_label(target),
        passed,
        actual: Actual {
            verdict: d.verdict,
            score: d.score,
            reason: d.reason,
        },
        failing_rules: if passed {
            vec![]
        } else {
            result.failing_rules(t).map(str::to_owned).collect()
        },
        why: (!passed).then(|| crate::explain::target_why(page, &result.eval, t).text),
        mismatches,
    }
}

/// A table of expectations, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpectReport {
    pub page_id: String,
    /// The page's revision (0: a page file, in memory).
    pub revision: i64,
    pub file: String,
    pub passed: usize,
    pub failed: usize,
    /// Columns of the table nothing reads.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored_columns: Vec<String>,
    /// Every row, in the table's order.
    pub results: Vec<RowOutcome>,
}

impl ExpectReport {
    pub fn all_passed(&self) -> bool {
        self.failed == 0
    }
}

/// One pair's current outcome as a row of an expectations table (`--pin-to`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pinned {
    pub source: String,
    pub source_label: String,
    pub target: String,
    pub target_label: String,
    pub verdict: Verdict,
    pub score: f64,
    pub reason: Reason,
}

/// The columns of a pinned table, in order.
pub const PINNED_COLUMNS: [&str; 7] = [
    SOURCE,
    SOURCE_LABEL,
    TARGET,
    TARGET_LABEL,
    VERDICT,
    SCORE,
    REASON,
];

impl Pinned {
    /// Every target's outcome for one selection, in target order. Sources are named by
    /// their id (the key's value, for a key of one field), targets likewise.
    pub fn of(page: &Page, result: &SelectionResult) -> Vec<Pinned> {
        let s = &page.source.rows[result.eval.selection];
        let (source, source_label) = (page.source.row_id(s), page.source.row_label(s));
        page.target
            .rows
            .iter()
            .enumerate()
            .map(|(t, row)| {
                let d = result.device(t);
                Pinned {
                    source: source.clone(),
                    source_label: source_label.clone(),
                    target: page.target.row_id(row),
                    target_label: page.target.row_label(row),
                    verdict: d.verdict,
                    score: d.score,
                    reason: d.reason,
                }
            })
            .collect()
    }

    /// The row's cells as text, in [`PINNED_COLUMNS`]' order (a score in full, so that
    /// it matches exactly).
    pub fn cells(&self) -> [String; 7] {
        [
            self.source.clone(),
            self.source_label.clone(),
            self.target.clone(),
            self.target_label.clone(),
            self.verdict.to_string(),
            score_text(self.score),
            self.reason.as_str().to_owned(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_match_at_the_places_written() {
        let s = |t: &str| Score::parse(&Value::String(t.into())).unwrap().unwrap();
        assert!(s("0.67").matches(2.0 / 3.0));
        assert!(!s("0.66").matches(2.0 / 3.0));
        assert!(s("67%").matches(2.0 / 3.0));
        assert!(s("1").matches(1.0));
        assert!(!s("1").matches(0.9));
        assert!(s("0.6666666666666666").matches(2.0 / 3.0));
        // As shown: 5 of 8 is 0.625, shown 0.62 (ties to even).
        assert!(s("0.62").matches(0.625));
        assert!(!s("0.63").matches(0.625));
        assert!(!s("0.6666666666666667").matches(0.6666666666666666));
        assert!(Score::parse(&Value::String("1.5".into())).is_err());
        assert!(Score::parse(&Value::String("1e-1".into())).is_err());
        assert_eq!(Score::parse(&Value::String(" ".into())), Ok(None));
    }

    #[test]
    fn verdicts_and_outcomes_read_as_people_write_them() {
        let v = |t: &str| parse_verdict(&Value::String(t.into()));
        assert_eq!(v("Full"), Ok(Some(Verdict::Full)));
        assert_eq!(v("0"), Ok(Some(Verdict::None)));
        assert_eq!(
            parse_verdict(&serde_json::json!(1)),
            Ok(Some(Verdict::Partial))
        );
        assert!(v("3").is_err());
        assert_eq!(
            parse_verdict(&serde_json::json!(2.0)),
            Ok(Some(Verdict::Full))
        );
        assert!(parse_verdict(&serde_json::json!(1.5)).is_err());
        assert_eq!(
            RuleExpect::parse(&serde_json::json!(1.0)),
            Ok(Some(RuleExpect::Pass))
        );
        let r = |t: &str| RuleExpect::parse(&Value::String(t.into()));
        assert_eq!(r("N/A"), Ok(Some(RuleExpect::NotApplicable)));
        assert_eq!(r("fail"), Ok(Some(RuleExpect::Fail)));
        assert_eq!(
            RuleExpect::parse(&Value::Bool(true)),
            Ok(Some(RuleExpect::Pass))
        );
        assert!(r("maybe").is_err());
    }
}

//! Tidy results: one row per (selection, target), the same columns in every format that
//! holds rows (CSV, TSV, JSON Lines with `--all`, Parquet), typed so that pandas, polars
//! and DuckDB read them as they are meant (verdicts integers, scores floats, rule
//! outcomes booleans).
//!
//! The columns, in order: `selectionKey`, `selectionVerdict`, `recommended`,
//! `targetId`, `verdict`, `score`, `reason`, `failingRules` (the first eight, as before),
//! then `selectionLabel`, `targetLabel`, one `target.<field>` per summary field of the
//! target dataset, and one `rule.<id>` per rule (true: passed; false: failed; empty or
//! null: the engine raised an error, which fails the rule).
//!
//! `--where EXPR` keeps the rows for which an infix expression over those columns holds
//! (`verdict < 2 and rule.tool-calling == false`); `--limit N` stops after N rows.

use std::borrow::Cow;
use std::io::{self, Write};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::sink::ResultSink;
use crate::app::expr::Filter;
use crate::app::types::{Names, Outcome, SelectionResult};

/// The leading columns (the CSV header of earlier releases, kept first).
pub const LEADING: [&str; 8] = [
    "selectionKey",
    "selectionVerdict",
    "recommended",
    "targetId",
    "verdict",
    "score",
    "reason",
    "failingRules",
];

/// One cell of a tidy row, typed.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell<'a> {
    Text(Cow<'a, str>),
    Int(i64),
    Float(f64),
    Bool(bool),
    Null,
    /// A summary field's value as stored (any JSON).
    Json(&'a Value),
}

impl Cell<'_> {
    /// The cell as JSON.
    pub fn to_json(&self) -> Value {
        match self {
            Cell::Text(s) => Value::String(s.to_string()),
            Cell::Int(i) => Value::from(*i),
            Cell::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Cell::Bool(b) => Value::Bool(*b),
            Cell::Null => Value::Null,
            Cell::Json(v) => (*v).clone(),
        }
    }
}

/// The columns of a page's tidy rows.
#[derive(Debug, Clone)]
pub struct Shape {
    pub header: Vec<String>,
    /// Summary fields: (index in `Names::shown`, field).
    pub summary: Vec<(usize, String)>,
    /// The target label's index in `Names::shown`.
    pub label: Option<usize>,
    pub rules: Vec<String>,
}

impl Shape {
    pub fn of(names: &Names) -> Shape {
        let label = names
            .label
            .as_ref()
            .and_then(|l| names.shown.iter().position(|f| f == l));
        let summary: Vec<(usize, String)> = names
            .shown
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != label)
            .map(|(i, f)| (i, f.clone()))
            .collect();
        let rules: Vec<String> = names.rules.iter().map(|r| r.id.clone()).collect();
        let mut header: Vec<String> = LEADING.iter().map(|s| (*s).to_owned()).collect();
        header.push("selectionLabel".into());
        header.push("targetLabel".into());
        header.extend(summary.iter().map(|(_, f)| format!("target.{f}")));
        header.extend(rules.iter().map(|id| format!("rule.{id}")));
        Shape {
            header,
            summary,
            label,
            rules,
        }
    }

    /// The row of target `t` in selection `r` (whose source row is labelled
    /// `selection_label`).
    pub fn row<'a>(
        &self,
        r: &'a SelectionResult,
        t: usize,
        selection_label: &'a str,
    ) -> Vec<Cell<'a>> {
        let d = r.device(t);
        let target = &r.names.targets[t];
        let mut out = Vec::with_capacity(self.header.len());
        out.push(Cell::Text(Cow::Borrowed(&r.selection_key)));
        out.push(Cell::Int(r.selection_verdict().number().into()));
        out.push(Cell::Bool(r.eval.recommended == Some(t)));
        out.push(Cell::Text(Cow::Borrowed(&target.id)));
        out.push(Cell::Int(d.verdict.number().into()));
        out.push(Cell::Float(d.score));
        out.push(Cell::Text(Cow::Borrowed(d.reason.as_str())));
        out.push(Cell::Text(Cow::Owned(
            r.failing_rules(t).collect::<Vec<_>>().join(" "),
        )));
        out.push(Cell::Text(Cow::Borrowed(selection_label)));
        out.push(match self.label.and_then(|i| target.shown.get(i)) {
            Some(Value::String(s)) => Cell::Text(Cow::Borrowed(s)),
            Some(Value::Null) | None => Cell::Text(Cow::Borrowed(&target.id)),
            Some(v) => Cell::Text(Cow::Owned(v.to_string())),
        });
        for (i, _) in &self.summary {
            out.push(match target.shown.get(*i) {
                None | Some(Value::Null) => Cell::Null,
                Some(v) => Cell::Json(v),
            });
        }
        for column in &r.eval.columns {
            out.push(match column.outcome[t] {
                Outcome::Pass => Cell::Bool(true),
                Outcome::Fail => Cell::Bool(false),
                Outcome::Error | Outcome::NotApplicable => Cell::Null,
            });
        }
        out
    }

    /// A row as the object `--where` reads: the plain columns by name, the summary
    /// fields under `target`, the rule outcomes under `rule`.
    pub fn context(&self, cells: &[Cell<'_>]) -> Value {
        let mut top = Map::new();
        let mut target = Map::new();
        let mut rule = Map::new();
        for (name, cell) in self.header.iter().zip(cells) {
            if let Some(f) = name.strip_prefix("target.") {
                target.insert(f.to_owned(), cell.to_json());
            } else if let Some(id) = name.strip_prefix("rule.") {
                rule.insert(id.to_owned(), cell.to_json());
            } else {
                top.insert(name.clone(), cell.to_json());
            }
        }
        top.insert("target".into(), Value::Object(target));
        top.insert("rule".into(), Value::Object(rule));
        Value::Object(top)
    }
}

/// Where tidy rows go: a format's writer.
pub trait RowWriter {
    fn header(&mut self, shape: &Shape, names: &Names) -> io::Result<()>;
    fn row(&mut self, cells: &[Cell<'_>]) -> io::Result<()>;
    fn finish(&mut self) -> io::Result<()>;

    /// Writes the rows of the first `n` targets of a selection at once, column by
    /// column (no filter applies); `false` when this writer only takes rows one by one.
    fn selection_rows(
        &mut self,
        shape: &Shape,
        r: &SelectionResult,
        n: usize,
        selection_label: &str,
    ) -> io::Result<bool> {
        let _ = (shape, r, n, selection_label);
        Ok(false)
    }
}

/// A [`ResultSink`] of tidy rows: each selection's targets become rows, filtered by
/// `--where`, cut at `--limit`, handed to a [`RowWriter`].
pub struct Tidy<R: RowWriter> {
    writer: R,
    shape: Option<Shape>,
    filter: Option<Arc<Filter>>,
    limit: Option<usize>,
    written: usize,
    /// The source rows' labels, by selection index.
    labels: Arc<Vec<String>>,
}

impl<R: RowWriter> Tidy<R> {
    pub fn new(
        writer: R,
        filter: Option<Arc<Filter>>,
        limit: Option<usize>,
        labels: Arc<Vec<String>>,
    ) -> Tidy<R> {
        Tidy {
            writer,
            shape: None,
            filter,
            limit,
            written: 0,
            labels,
        }
    }

    /// Whether `--limit` is reached: the caller may stop evaluating.
    pub fn full(&self) -> bool {
        self.limit.is_some_and(|n| self.written >= n)
    }
}

impl<R: RowWriter> ResultSink for Tidy<R> {
    fn begin(&mut self, names: &Names, _page_name: &str, _source_name: &str) -> io::Result<()> {
        let shape = Shape::of(names);
        self.writer.header(&shape, names)?;
        self.shape = Some(shape);
        Ok(())
    }

    fn selection(&mut self, r: &SelectionResult) -> io::Result<()> {
        if self.shape.is_none() {
            self.begin(&r.names, "", "")?;
        }
        let shape = self.shape.clone().expect("begun");
        let label = self
            .labels
            .get(r.eval.selection)
            .map_or(r.selection_key.as_str(), String::as_str);
        if self.filter.is_none() {
            let n = match self.limit {
                Some(limit) => r.target_count().min(limit.saturating_sub(self.written)),
                None => r.target_count(),
            };
            if self.writer.selection_rows(&shape, r, n, label)? {
                self.written += n;
                return Ok(());
            }
        }
        for t in 0..r.target_count() {
            if self.full() {
                return Ok(());
            }
            let cells = shape.row(r, t, label);
            if let Some(f) = &self.filter
                && !f.matches(&shape.context(&cells))
            {
                continue;
            }
            self.writer.row(&cells)?;
            self.written += 1;
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.writer.finish()
    }

    fn wants_more(&self) -> bool {
        !self.full()
    }
}

/// CSV or TSV rows: text cells escaped and guarded against formulas, booleans
/// `true`/`false`, numbers as JSON writes them, a null as an empty cell, any other
/// value as its JSON text.
pub struct CsvRows<W: Write> {
    pub w: csv::Writer<W>,
    pub guard: bool,
}

impl<W: Write> RowWriter for CsvRows<W> {
    fn header(&mut self, shape: &Shape, _names: &Names) -> io::Result<()> {
        let header: Vec<String> = shape
            .header
            .iter()
            .map(|h| crate::print::csv_text(h, self.guard))
            .collect();
        self.w.write_record(&header).map_err(crate::print::csv_io)
    }

    fn row(&mut self, cells: &[Cell<'_>]) -> io::Result<()> {
        let guard = self.guard;
        let text = |c: &Cell<'_>| -> String {
            match c {
                Cell::Text(s) => crate::print::csv_text(s, guard),
                Cell::Int(i) => i.to_string(),
                Cell::Float(f) => serde_json::to_string(f).expect("numbers serialize"),
                Cell::Bool(b) => b.to_string(),
                Cell::Null => String::new(),
                Cell::Json(Value::String(s)) => crate::print::csv_text(s, guard),
                Cell::Json(v) => crate::print::csv_text(&v.to_string(), guard),
            }
        };
        let record: Vec<String> = cells.iter().map(text).collect();
        self.w.write_record(&record).map_err(crate::print::csv_io)
    }

    fn finish(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// JSON Lines rows: one flat object per row, keyed by the column names.
pub struct JsonRows<W: Write> {
    pub w: W,
    pub header: Vec<String>,
}

impl<W: Write> RowWriter for JsonRows<W> {
    fn header(&mut self, shape: &Shape, _names: &Names) -> io::Result<()> {
        self.header = shape.header.clone();
        Ok(())
    }

    fn row(&mut self, cells: &[Cell<'_>]) -> io::Result<()> {
        let object: Map<String, Value> = self
            .header
            .iter()
            .zip(cells)
            .map(|(h, c)| (h.clone(), c.to_json()))
            .collect();
        // Terminal controls in stored strings are written as `\uXXXX` escapes: the
        // same JSON to a reader, nothing raw to a terminal.
        let text = serde_json::to_string(&object).map_err(crate::print::json_io)?;
        self.w
            .write_all(crate::app::text::json_safe(&text).as_bytes())?;
        self.w.write_all(b"\n")
    }

    fn finish(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

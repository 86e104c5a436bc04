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

use super::per_names::PerNames;
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
///
/// The header and filtered rows go through the csv crate's writer; a selection's rows
/// without a filter are put together by hand from cells quoted once by that same
/// writer (the target's own per run, the selection's per selection) and cells that
/// never need quoting (digits, `true`, `false`, reasons), at the speed of their bytes.
/// Both append to one spool, in order, written out in large pieces.
pub struct CsvRows<W: Write> {
    w: csv::Writer<Spool>,
    spool: Spool,
    out: W,
    tabs: bool,
    guard: bool,
    /// The cells that depend on the target alone, quoted, made once per run.
    targets: PerNames<Vec<Vec<Vec<u8>>>>,
}

/// The bytes a [`CsvRows`] has made and not yet written out.
#[derive(Clone, Default)]
struct Spool(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The spool is written out once it holds this much.
const SPOOL_BYTES: usize = 1 << 16;

impl<W: Write> CsvRows<W> {
    pub fn new(out: W, tabs: bool, guard: bool) -> CsvRows<W> {
        let spool = Spool::default();
        CsvRows {
            w: crate::print::csv_writer(spool.clone(), tabs),
            spool,
            out,
            tabs,
            guard,
            targets: PerNames::default(),
        }
    }

    /// Writes what the csv writer holds to the spool, and the spool out when it is
    /// large (or, with `all`, whatever it holds).
    fn drain(&mut self, all: bool) -> io::Result<()> {
        self.w.flush()?;
        let mut spool = self.spool.0.borrow_mut();
        if all || spool.len() >= SPOOL_BYTES {
            self.out.write_all(&spool)?;
            spool.clear();
        }
        Ok(())
    }
}

/// What was made and not written goes out when the printer is dropped without
/// [`RowWriter::finish`], as the csv writer's own buffer did (errors are lost then).
impl<W: Write> Drop for CsvRows<W> {
    fn drop(&mut self) {
        let _ = self.drain(true);
    }
}

/// A field as the csv writer (of CSV, or with `tabs` of TSV) writes it: quoted where it
/// must be.
fn quoted(field: &str, tabs: bool) -> Vec<u8> {
    if !needs_quotes(field.as_bytes(), tabs) {
        // As it is (an empty field too: `""` only when alone in a record, and these
        // records never hold one field).
        return field.as_bytes().to_vec();
    }
    let mut w = crate::print::csv_writer(Vec::new(), tabs);
    // Writing to memory fails only on a full allocation, which aborts anyway. A quoted
    // field's closing quote is written when its record ends: the record is ended, and
    // its line end taken off.
    w.write_field(field).expect("writes to memory");
    w.write_record(None::<&[u8]>).expect("writes to memory");
    let mut bytes = w.into_inner().expect("writes to memory");
    assert_eq!(bytes.pop(), Some(b'\n'), "records end with a line feed");
    bytes
}

/// Whether the csv writer would quote `field`: it holds the delimiter, a quote or a
/// line end.
fn needs_quotes(field: &[u8], tabs: bool) -> bool {
    let delimiter = if tabs { b'\t' } else { b',' };
    field
        .iter()
        .any(|&b| b == delimiter || b == b'"' || b == b'\n' || b == b'\r')
}

/// A cell as CSV text: text escaped and, with `guard`, guarded against formulas.
fn cell_text(c: &Cell<'_>, guard: bool) -> String {
    match c {
        Cell::Text(s) => crate::print::csv_text(s, guard),
        Cell::Int(i) => i.to_string(),
        Cell::Float(f) => serde_json::to_string(f).expect("numbers serialize"),
        Cell::Bool(b) => b.to_string(),
        Cell::Null => String::new(),
        Cell::Json(Value::String(s)) => crate::print::csv_text(s, guard),
        Cell::Json(v) => crate::print::csv_text(&v.to_string(), guard),
    }
}

/// Where a row's cells come from in the fast paths: the columns of [`LEADING`] and the
/// labels are written one by one; these are the target's own (its id, its label and its
/// summary fields), made once per run from the first selection's rows.
fn fixed_cells<'a>(shape: &Shape, r: &'a SelectionResult) -> impl Iterator<Item = Vec<Cell<'a>>> {
    let n = r.target_count();
    let fixed = |cells: Vec<Cell<'a>>| -> Vec<Cell<'a>> {
        let mut cells = cells.into_iter();
        let id = cells.nth(3).expect("a targetId cell");
        // After targetId: verdict, score, reason, failingRules, selectionLabel; then the
        // target's label and summary fields.
        let rest: Vec<Cell<'a>> = cells.skip(5).collect();
        std::iter::once(id).chain(rest).collect()
    };
    let shape = shape.clone();
    let summary = shape.summary.len();
    (0..n).map(move |t| {
        let mut cells = fixed(shape.row(r, t, ""));
        cells.truncate(2 + summary);
        cells
    })
}

impl<W: Write> RowWriter for CsvRows<W> {
    fn header(&mut self, shape: &Shape, _names: &Names) -> io::Result<()> {
        let header: Vec<String> = shape
            .header
            .iter()
            .map(|h| crate::print::csv_text(h, self.guard))
            .collect();
        self.w.write_record(&header).map_err(crate::print::csv_io)?;
        self.drain(false)
    }

    fn row(&mut self, cells: &[Cell<'_>]) -> io::Result<()> {
        let record: Vec<String> = cells.iter().map(|c| cell_text(c, self.guard)).collect();
        self.w.write_record(&record).map_err(crate::print::csv_io)?;
        self.drain(false)
    }

    /// Every row of a selection put together by hand from cells quoted once: no
    /// allocation and no quoting per cell.
    fn selection_rows(
        &mut self,
        shape: &Shape,
        r: &SelectionResult,
        n: usize,
        selection_label: &str,
    ) -> io::Result<bool> {
        let guard = self.guard;
        let tabs = self.tabs;
        self.drain(false)?;
        let targets = self.targets.of(&r.names, || {
            fixed_cells(shape, r)
                .map(|cells| {
                    cells
                        .iter()
                        .map(|c| quoted(&cell_text(c, guard), tabs))
                        .collect()
                })
                .collect()
        });
        let key = quoted(&crate::print::csv_text(&r.selection_key, guard), tabs);
        let label = quoted(&crate::print::csv_text(selection_label, guard), tabs);
        let selection_verdict = digit(r.selection_verdict().number());
        let rule_ids: Vec<String> = r
            .names
            .rules
            .iter()
            .map(|x| crate::app::text::sanitize(&x.id))
            .collect();
        let columns: Vec<&[Outcome]> = r.eval.columns.iter().map(|c| &c.outcome[..]).collect();
        let delimiter = if tabs { b'\t' } else { b',' };
        let mut failing = String::new();
        let mut outcomes = Vec::with_capacity(6 * columns.len());
        let spool = &self.spool;
        for (t, own) in targets.iter().enumerate().take(n) {
            let d = r.device(t);
            // One pass over the rules: the failing ids, and each rule's cell.
            failing.clear();
            outcomes.clear();
            for (id, column) in rule_ids.iter().zip(&columns) {
                let o = column[t];
                if o.fails() {
                    if !failing.is_empty() {
                        failing.push(' ');
                    }
                    failing.push_str(id);
                }
                outcomes.push(delimiter);
                outcomes.extend_from_slice(match o {
                    Outcome::Pass => b"true",
                    Outcome::Fail => b"false",
                    Outcome::Error | Outcome::NotApplicable => b"",
                });
            }
            // The ids are sanitised already; the formula guard and quoting are left.
            let failing_cell: Cow<'_, [u8]> = if failing.starts_with(GUARDED) {
                Cow::Owned(quoted(&crate::print::csv_text(&failing, guard), tabs))
            } else if needs_quotes(failing.as_bytes(), tabs) {
                Cow::Owned(quoted(&failing, tabs))
            } else {
                Cow::Borrowed(failing.as_bytes())
            };
            let mut line = spool.0.borrow_mut();
            line.extend_from_slice(&key);
            line.push(delimiter);
            line.extend_from_slice(selection_verdict.as_bytes());
            line.push(delimiter);
            line.extend_from_slice(boolean(r.eval.recommended == Some(t)).as_bytes());
            line.push(delimiter);
            line.extend_from_slice(&own[0]);
            line.push(delimiter);
            line.extend_from_slice(digit(d.verdict.number()).as_bytes());
            line.push(delimiter);
            super::json::number(&mut *line, d.score)?;
            line.push(delimiter);
            line.extend_from_slice(d.reason.as_str().as_bytes());
            line.push(delimiter);
            line.extend_from_slice(&failing_cell);
            line.push(delimiter);
            line.extend_from_slice(&label);
            for cell in &own[1..] {
                line.push(delimiter);
                line.extend_from_slice(cell);
            }
            line.extend_from_slice(&outcomes);
            line.push(b'\n');
            if line.len() >= SPOOL_BYTES {
                self.out.write_all(&line)?;
                line.clear();
            }
        }
        Ok(true)
    }

    fn finish(&mut self) -> io::Result<()> {
        self.drain(true)?;
        self.out.flush()
    }
}

/// The `failingRules` cell of target `t`: the ids (as given) of the rules that did not
/// pass, separated by spaces, into `out`.
fn failing_rules(out: &mut String, ids: &[impl AsRef<str>], r: &SelectionResult, t: usize) {
    out.clear();
    for (id, column) in ids.iter().zip(&r.eval.columns) {
        if column.outcome[t].counted() == Some(false) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(id.as_ref());
        }
    }
}

/// The first characters that make a spreadsheet run a cell as a formula.
const GUARDED: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

fn digit(n: u8) -> &'static str {
    ["0", "1", "2"].get(usize::from(n)).copied().unwrap_or("?")
}

fn boolean(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

/// JSON Lines rows: one flat object per row, keyed by the column names.
pub struct JsonRows<W: Write> {
    pub w: W,
    pub header: Vec<String>,
    /// Per target, its own members (`"targetId":…` and `"targetLabel":…,"target.f":…`),
    /// and each rule's key: made once per run.
    fixed: PerNames<JsonFixed>,
    line: Vec<u8>,
}

struct JsonFixed {
    targets: Vec<(Vec<u8>, Vec<u8>)>,
    rule_keys: Vec<Vec<u8>>,
}

impl<W: Write> JsonRows<W> {
    pub fn new(w: W) -> JsonRows<W> {
        JsonRows {
            w,
            header: vec![],
            fixed: PerNames::default(),
            line: Vec::new(),
        }
    }
}

/// `"key":value`, JSON-safe for a terminal.
fn member(out: &mut Vec<u8>, key: &str, value: &Value) {
    out.extend_from_slice(&super::json::json_string(key));
    out.push(b':');
    let text = value.to_string();
    out.extend_from_slice(crate::app::text::json_safe(&text).as_bytes());
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

    /// Every row of a selection written as bytes into one line buffer, with the
    /// target's own members and the rules' keys made once per run.
    fn selection_rows(
        &mut self,
        shape: &Shape,
        r: &SelectionResult,
        n: usize,
        selection_label: &str,
    ) -> io::Result<bool> {
        let header = &self.header;
        let fixed = self.fixed.of(&r.names, || {
            // The header names the members: `targetId` is the fourth, then after the
            // selection's label come the target's label and summary fields.
            let own = &header[9..10 + shape.summary.len()];
            let targets = fixed_cells(shape, r)
                .map(|cells| {
                    let mut id = Vec::new();
                    member(&mut id, &header[3], &cells[0].to_json());
                    let mut rest = Vec::new();
                    for (key, cell) in own.iter().zip(&cells[1..]) {
                        rest.push(b',');
                        member(&mut rest, key, &cell.to_json());
                    }
                    (id, rest)
                })
                .collect();
            let rule_keys = header[10 + shape.summary.len()..]
                .iter()
                .map(|k| {
                    let mut key = b",".to_vec();
                    key.extend_from_slice(&super::json::json_string(k));
                    key.push(b':');
                    key
                })
                .collect();
            JsonFixed { targets, rule_keys }
        });
        let mut head = b"{".to_vec();
        member(
            &mut head,
            "selectionKey",
            &Value::from(r.selection_key.as_str()),
        );
        head.extend_from_slice(b",\"selectionVerdict\":");
        head.extend_from_slice(digit(r.selection_verdict().number()).as_bytes());
        head.extend_from_slice(b",\"recommended\":");
        let mut label = b",".to_vec();
        member(&mut label, "selectionLabel", &Value::from(selection_label));
        let rule_ids: Vec<&str> = r.names.rules.iter().map(|x| x.id.as_str()).collect();
        let mut failing = String::new();
        let l = &mut self.line;
        for (t, (id, own)) in fixed.targets.iter().enumerate().take(n) {
            let d = r.device(t);
            l.clear();
            l.extend_from_slice(&head);
            l.extend_from_slice(boolean(r.eval.recommended == Some(t)).as_bytes());
            l.push(b',');
            l.extend_from_slice(id);
            l.extend_from_slice(b",\"verdict\":");
            l.extend_from_slice(digit(d.verdict.number()).as_bytes());
            l.extend_from_slice(b",\"score\":");
            super::json::number(&mut *l, d.score)?;
            l.extend_from_slice(b",\"reason\":\"");
            l.extend_from_slice(d.reason.as_str().as_bytes());
            l.extend_from_slice(b"\",");
            failing_rules(&mut failing, &rule_ids, r, t);
            member(l, "failingRules", &Value::from(failing.as_str()));
            l.extend_from_slice(&label);
            l.extend_from_slice(own);
            for (key, column) in fixed.rule_keys.iter().zip(&r.eval.columns) {
                l.extend_from_slice(key);
                l.extend_from_slice(match column.outcome[t] {
                    Outcome::Pass => b"true",
                    Outcome::Fail => b"false",
                    Outcome::Error | Outcome::NotApplicable => b"null",
                });
            }
            l.extend_from_slice(b"}\n");
            self.w.write_all(l)?;
        }
        Ok(true)
    }

    fn finish(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

//! The CSV printer (`evaluate --format csv`, and `tsv` with tabs): a header, then one
//! record per selection × target: the selection's key, verdict and whether the target is
//! its recommended one, the target's id, verdict, score, reason and failing rule ids.
//! Text cells are guarded against spreadsheet formulas unless told not to.

use std::io::{self, Write};

use super::sink::ResultSink;
use crate::app::types::{Names, SelectionResult};
use crate::print::{csv_io, csv_text, csv_writer};

/// Builds a [`Csv`] printer.
#[derive(Clone, Debug)]
pub struct CsvBuilder {
    tabs: bool,
    formula_guard: bool,
}

impl Default for CsvBuilder {
    fn default() -> CsvBuilder {
        CsvBuilder {
            tabs: false,
            formula_guard: true,
        }
    }
}

impl CsvBuilder {
    /// A comma-separated printer with the formula guard on.
    pub fn new() -> CsvBuilder {
        CsvBuilder::default()
    }

    /// Separate fields with tabs (TSV) rather than commas.
    pub fn tabs(&mut self, yes: bool) -> &mut CsvBuilder {
        self.tabs = yes;
        self
    }

    /// Put a `'` before text a spreadsheet would run as a formula ([`csv_text`]); on by
    /// default (`--no-formula-guard` turns it off).
    pub fn formula_guard(&mut self, yes: bool) -> &mut CsvBuilder {
        self.formula_guard = yes;
        self
    }

    /// The printer, writing to `w` (buffered: the output is whole after
    /// [`ResultSink::finish`]).
    pub fn build<W: Write>(&self, w: W) -> Csv<W> {
        Csv {
            w: csv_writer(w, self.tabs),
            guard: self.formula_guard,
        }
    }
}

/// Prints CSV or TSV records: the header at [`ResultSink::begin`], a record per target
/// of each selection.
#[derive(Debug)]
pub struct Csv<W: Write> {
    w: csv::Writer<W>,
    guard: bool,
}

impl<W: Write> ResultSink for Csv<W> {
    fn begin(&mut self, _names: &Names, _page_name: &str, _source_name: &str) -> io::Result<()> {
        self.w.write_record(CSV_HEADER).map_err(csv_io)
    }

    fn selection(&mut self, r: &SelectionResult) -> io::Result<()> {
        csv_rows(&mut self.w, r, self.guard).map_err(csv_io)
    }

    fn finish(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// The header of the [`Csv`] printer's records (written by [`ResultSink::begin`]).
pub const CSV_HEADER: [&str; 8] = [
    "selectionKey",
    "selectionVerdict",
    "recommended",
    "targetId",
    "verdict",
    "score",
    "reason",
    "failingRules",
];

/// One CSV record per target of a selection. CSV is read by people and spreadsheets:
/// stored strings are shown with terminal controls escaped, as in tables, and guarded
/// against formulas unless `guard` is off ([`csv_text`]).
fn csv_rows<W: Write>(w: &mut csv::Writer<W>, r: &SelectionResult, guard: bool) -> csv::Result<()> {
    let verdict = r.selection_verdict().to_string();
    let key = csv_text(&r.selection_key, guard);
    for t in 0..r.target_count() {
        let d = r.device(t);
        let failing: Vec<String> = r.failing_rules(t).map(|id| csv_text(id, guard)).collect();
        w.write_record([
            key.as_str(),
            verdict.as_str(),
            if r.eval.recommended == Some(t) {
                "true"
            } else {
                "false"
            },
            csv_text(&r.names.targets[t].id, guard).as_str(),
            d.verdict.to_string().as_str(),
            serde_json::to_string(&d.score)
                .expect("numbers serialize")
                .as_str(),
            d.reason.as_str(),
            failing.join(" ").as_str(),
        ])?;
    }
    Ok(())
}

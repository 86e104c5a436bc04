//! The workbench's view as a file (`E`) or on the clipboard (`Y`): the targets it shows,
//! in its order, with the rules it shows — printed as the command line prints a
//! selection: tidy rows (one per target, a column per rule, as `matrix --long`) for
//! CSV, TSV, JSON Lines and Parquet; the grid (as `matrix`) for Markdown, JSON and a
//! table.

use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use super::matrix::MatrixFormat;
use super::result::{Format, PrinterBuilder};
use crate::app::types::{Rule, SelectionResult};

/// How a file's name says to write the view: tidy rows, or the grid.
enum Written {
    Rows(Format),
    Grid(MatrixFormat),
}

fn for_path(path: &Path) -> Written {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("csv") => Written::Rows(Format::Csv),
        Some("tsv" | "tab") => Written::Rows(Format::Tsv),
        Some("jsonl" | "ndjson") => Written::Rows(Format::Jsonl),
        Some("parquet") => Written::Rows(Format::Parquet),
        _ => Written::Grid(MatrixFormat::for_path(path)),
    }
}

/// Writes the view (`result` cut to it, `rules` its rules in order) as `path`'s
/// extension says; returns what was written, in words (`CSV rows`, `a Markdown grid`).
/// `labels` are the source rows' labels (the rows name their selection).
pub fn write<W: Write + Send>(
    w: W,
    result: &SelectionResult,
    rules: &[Rule],
    labels: Arc<Vec<String>>,
    path: &Path,
    transposed: bool,
) -> io::Result<&'static str> {
    match for_path(path) {
        Written::Rows(format) => {
            rows(w, result, format, labels)?;
            Ok(match format {
                Format::Csv => "CSV rows, a row per target",
                Format::Tsv => "TSV rows, a row per target",
                Format::Jsonl => "JSON Lines, a line per target",
                _ => "Parquet, a row per target",
            })
        }
        Written::Grid(format) => {
            let mut w = w;
            if transposed {
                super::matrix::write_transposed(&mut w, result, rules, format, true)?;
            } else {
                super::matrix::write(&mut w, result, rules, format, true)?;
            }
            Ok(match (format, transposed) {
                (MatrixFormat::Md, false) => "a Markdown grid",
                (MatrixFormat::Md, true) => "a Markdown grid, a row per target",
                (MatrixFormat::Json, _) => "the grid as JSON",
                (_, false) => "an aligned grid",
                (_, true) => "an aligned grid, a row per target",
            })
        }
    }
}

/// The view as TSV rows (a row per target, a column per rule): what `Y` copies, to
/// paste into a spreadsheet as cells.
pub fn tsv<W: Write + Send>(
    w: W,
    result: &SelectionResult,
    labels: Arc<Vec<String>>,
) -> io::Result<()> {
    rows(w, result, Format::Tsv, labels)
}

fn rows<W: Write + Send>(
    w: W,
    result: &SelectionResult,
    format: Format,
    labels: Arc<Vec<String>>,
) -> io::Result<()> {
    let mut printer = PrinterBuilder::new(format)
        .all(true)
        .rows(None, None, labels)
        .build(w);
    printer.begin(&result.names, result.page_id(), "selection")?;
    printer.selection(result)?;
    printer.finish()
}

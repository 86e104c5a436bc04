//! The printers of `evaluate`'s results: one per output [`Format`], each made by a
//! builder, all behind one trait, [`ResultSink`] (a page's header, its selections one at
//! a time, the end). They stream: none keeps a selection past the call that hands it
//! over, and none builds a JSON tree of a result.
//!
//! | format              | printer      | one selection            | every selection (`--all`)   |
//! |---------------------|--------------|--------------------------|-----------------------------|
//! | `json`              | [`Json`]     | the result, pretty       | an array of results         |
//! | `jsonl`             | [`Jsonl`]    | a line per target        | a tidy line per selection × target |
//! | `summary`           | [`Summary`]  | a line per target        | a line per selection        |
//! | `table`             | [`Table`]    | a table                  | a table per selection       |
//! | `csv`, `tsv`        | [`Csv`]      | a record per target      | a record per selection × target |
//! | `md`                | [`Markdown`] | a table of one row       | a row per selection         |
//! | `parquet`           | [`tidy::Tidy`] of [`ParquetRows`] | a row per target | a row per selection × target |
//! | `counts`            | [`Counts`]   | a line of verdict counts | a line per selection (`--by`: per selection × value) |
//!
//! CSV, TSV, Parquet and JSON Lines with `--all` write the same tidy rows
//! ([`tidy`]): one per selection × target, typed columns, `--where` and `--limit`.
//!
//! [`PrinterBuilder`] picks the printer of a [`Format`].

mod counts;
mod delimited;
mod formatted;
mod json;
mod jsonl;
mod markdown;
mod parquet;
mod per_names;
mod sink;
mod summary;
mod table;
pub mod tidy;

use std::io::Write;

pub use counts::{Counts, CountsBuilder};
pub use delimited::{CSV_HEADER, Csv, CsvBuilder};
pub use json::{Json, JsonBuilder};
pub use jsonl::{Jsonl, JsonlBuilder};
pub use markdown::{Markdown, MarkdownBuilder};
pub use parquet::{ParquetRows, write_values as parquet_values};
pub use sink::ResultSink;
pub use summary::{Summary, SummaryBuilder};
pub use table::{Table, TableBuilder};

/// Output formats of `evaluate`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The result JSON (with `--all`: an array of results)
    Json,
    /// A table per selection: each target's verdict, score, reason and failing rules
    #[value(alias = "text")]
    Table,
    /// One record per selection × target (text cells guarded against spreadsheet
    /// formulas: see --no-formula-guard)
    Csv,
    /// As csv, tab-separated
    Tsv,
    /// A Markdown table of verdict glyphs and scores, one row per selection
    #[value(alias = "markdown")]
    Md,
    /// JSON Lines: one object per target (with `--all`: one result per selection)
    Jsonl,
    /// Compact JSON: per target its id, verdict, score, reason and failing rule ids
    /// (with `--all`: one line per selection)
    Summary,
    /// Apache Parquet: the csv records with typed columns (verdicts integers, scores
    /// floats, rule outcomes booleans); to -o FILE, or to stdout when it is not a
    /// terminal
    Parquet,
    /// Verdict counts without the pairs: per selection a JSON line with its verdict,
    /// recommendation and how many targets are at 2, 1 and 0 (`--by FIELD`: a line
    /// per selection × value of a target summary field)
    Counts,
}

impl Format {
    /// Whether the format writes tidy rows (one per selection × target), which
    /// `--where` and `--limit` filter.
    pub fn is_tidy(self, all: bool) -> bool {
        matches!(self, Format::Csv | Format::Tsv | Format::Parquet)
            || (all && self == Format::Jsonl)
    }
}

/// Builds the printer of a [`Format`], configured for one selection or for every
/// selection of a page.
#[derive(Clone, Debug)]
pub struct PrinterBuilder {
    format: Format,
    all: bool,
    formula_guard: bool,
    filter: Option<std::sync::Arc<crate::app::expr::Filter>>,
    limit: Option<usize>,
    labels: std::sync::Arc<Vec<String>>,
    by: Option<String>,
}

impl PrinterBuilder {
    /// The printer of `format` for one selection, CSV guarded against formulas.
    pub fn new(format: Format) -> PrinterBuilder {
        PrinterBuilder {
            format,
            all: false,
            formula_guard: true,
            filter: None,
            limit: None,
            labels: Default::default(),
            by: None,
        }
    }

    /// `counts` only: count per value of this target summary field (`--by FIELD`).
    pub fn by(&mut self, field: Option<String>) -> &mut PrinterBuilder {
        self.by = field;
        self
    }

    /// Print every selection of a page (`--all`): JSON becomes an array, JSON Lines and
    /// summaries a line per selection.
    pub fn all(&mut self, yes: bool) -> &mut PrinterBuilder {
        self.all = yes;
        self
    }

    /// Guard CSV and TSV text cells against spreadsheet formulas
    /// ([`CsvBuilder::formula_guard`]); on by default.
    pub fn formula_guard(&mut self, yes: bool) -> &mut PrinterBuilder {
        self.formula_guard = yes;
        self
    }

    /// Tidy rows only ([`Format::is_tidy`]): keep those `filter` passes (`--where`), at
    /// most `limit` (`--limit`); `labels` are the source rows' labels, by selection
    /// index.
    pub fn rows(
        &mut self,
        filter: Option<std::sync::Arc<crate::app::expr::Filter>>,
        limit: Option<usize>,
        labels: std::sync::Arc<Vec<String>>,
    ) -> &mut PrinterBuilder {
        self.filter = filter;
        self.limit = limit;
        self.labels = labels;
        self
    }

    /// The printer, writing to `w`.
    pub fn build<'w, W: Write + Send + 'w>(&self, w: W) -> Box<dyn ResultSink + 'w> {
        let tidy =
            |writer| tidy::Tidy::new(writer, self.filter.clone(), self.limit, self.labels.clone());
        match self.format {
            Format::Json => Box::new(JsonBuilder::new().array(self.all).build(w)),
            Format::Jsonl if self.all => Box::new(tidy(tidy::JsonRows::new(w))),
            Format::Jsonl => Box::new(JsonlBuilder::new().build(w)),
            Format::Parquet => Box::new(tidy::Tidy::new(
                ParquetRows::new(w),
                self.filter.clone(),
                self.limit,
                self.labels.clone(),
            )),
            Format::Summary => Box::new(SummaryBuilder::new().per_selection(self.all).build(w)),
            Format::Table => Box::new(TableBuilder::new().build(w)),
            Format::Csv | Format::Tsv => Box::new(
                CsvBuilder::new()
                    .tabs(self.format == Format::Tsv)
                    .formula_guard(self.formula_guard)
                    .rows(self.filter.clone(), self.limit, self.labels.clone())
                    .build(w),
            ),
            Format::Md => Box::new(MarkdownBuilder::new().build(w)),
            Format::Counts => Box::new(CountsBuilder::new().by(self.by.clone()).build(w)),
        }
    }
}

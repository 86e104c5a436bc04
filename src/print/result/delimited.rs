//! The CSV printer (`evaluate --format csv`, and `tsv` with tabs): a header, then one
//! tidy record per selection × target ([`super::tidy`]): the selection's key, verdict
//! and whether the target is its recommended one, the target's id, verdict, score,
//! reason and failing rule ids, then the labels, the summary fields and one column per
//! rule. Text cells are guarded against spreadsheet formulas unless told not to.

use std::io::Write;
use std::sync::Arc;

use super::tidy::{CsvRows, LEADING, Tidy};
use crate::app::expr::Filter;

/// Builds a [`Csv`] printer.
#[derive(Clone, Debug)]
pub struct CsvBuilder {
    tabs: bool,
    formula_guard: bool,
    filter: Option<Arc<Filter>>,
    limit: Option<usize>,
    labels: Arc<Vec<String>>,
}

impl Default for CsvBuilder {
    fn default() -> CsvBuilder {
        CsvBuilder {
            tabs: false,
            formula_guard: true,
            filter: None,
            limit: None,
            labels: Arc::default(),
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

    /// Put a `'` before text a spreadsheet would run as a formula
    /// ([`crate::print::csv_text`]); on by default (`--no-formula-guard` turns it off).
    pub fn formula_guard(&mut self, yes: bool) -> &mut CsvBuilder {
        self.formula_guard = yes;
        self
    }

    /// Keep only the rows `filter` passes (`--where`), at most `limit` (`--limit`);
    /// `labels` are the source rows' labels by selection index.
    pub fn rows(
        &mut self,
        filter: Option<Arc<Filter>>,
        limit: Option<usize>,
        labels: Arc<Vec<String>>,
    ) -> &mut CsvBuilder {
        self.filter = filter;
        self.limit = limit;
        self.labels = labels;
        self
    }

    /// The printer, writing to `w` (buffered: the output is whole after
    /// [`super::ResultSink::finish`]).
    pub fn build<W: Write>(&self, w: W) -> Csv<W> {
        Tidy::new(
            CsvRows::new(w, self.tabs, self.formula_guard),
            self.filter.clone(),
            self.limit,
            self.labels.clone(),
        )
    }
}

/// Prints CSV or TSV records: the header at [`super::ResultSink::begin`], a record per
/// target of each selection.
pub type Csv<W> = Tidy<CsvRows<W>>;

/// The first columns of the [`Csv`] printer's records (those of earlier releases, in
/// their order; the labels, summary fields and rule columns follow).
pub const CSV_HEADER: [&str; 8] = LEADING;

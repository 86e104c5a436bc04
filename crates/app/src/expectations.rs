//! Expectations from a table: check a table of expected outcomes (CSV, TSV, JSON
//! Lines, JSON, Parquet, Arrow, Excel) against a page, and pin the current outcomes as
//! such a table. See [`rulebench_core::expect`] for the columns.

use std::sync::Arc;

use rulebench_core::dataset::{KeyCase, ReadOptions};
use rulebench_core::expect::{self, ExpectReport, Pinned, TableRows};
use rulebench_core::matrix::Matrix;
use rulebench_core::model::{Page, Side};
use rulebench_core::result::{Names, SelectionResult};

use super::dataset::{DataInput, Reading, read_rows};
use super::{App, Result, timestamp};

/// Which source rows `--pin-to` writes: one, or every one.
fn selected(page: &Page, select: Option<&str>) -> Result<Vec<usize>> {
    Ok(match select {
        None | Some(rulebench_core::assertions::ALL_SOURCES) => {
            (0..page.source.rows.len()).collect()
        }
        Some(key) => vec![App::find_row(page, Side::Source, key)?],
    })
}

/// Evaluates a page's selections one at a time on one matrix (sources that read the
/// same values share an evaluation).
struct Selections<'p> {
    page: &'p Page,
    matrix: Matrix,
    names: Arc<Names>,
    revision: i64,
    at: String,
}

impl<'p> Selections<'p> {
    fn new(page: &'p Page, revision: i64) -> Result<Self> {
        let matrix = Matrix::new(page)?;
        let names = Arc::new(Names::of_matrix(page, &matrix));
        Ok(Selections {
            page,
            matrix,
            names,
            revision,
            at: timestamp(),
        })
    }

    fn result(&mut self, s: usize) -> SelectionResult {
        SelectionResult::new(
            self.page,
            self.names.clone(),
            self.matrix.evaluate(s),
            self.revision,
            &self.at,
        )
    }
}

/// Checks the table at `input` against `page` at `revision`.
fn check(
    page: &Page,
    revision: i64,
    input: DataInput<'_>,
    read: &ReadOptions,
) -> Result<ExpectReport> {
    let how = Reading {
        key: &[],
        key_case: KeyCase::Sensitive,
        read,
        skip_bad: false,
    };
    let parsed = read_rows(input, &how, &mut |_| {})?;
    let file = input.shown();
    let rows: Vec<_> = parsed.lines.iter().copied().zip(parsed.rows).collect();
    let table = TableRows {
        file: &file,
        fields: &parsed.fields,
        rows: &rows,
        place: &parsed.place,
    };
    let expectations = expect::read(page, table)?;
    drop(rows);
    // Each source is evaluated once, for every row that names it.
    let mut order: Vec<usize> = (0..expectations.rows.len()).collect();
    order.sort_by_key(|&i| expectations.rows[i].source);
    let mut selections = Selections::new(page, revision)?;
    let mut outcomes = vec![None; order.len()];
    let mut current: Option<SelectionResult> = None;
    for i in order {
        let e = &expectations.rows[i];
        if current
            .as_ref()
            .is_none_or(|r| r.eval.selection != e.source)
        {
            current = Some(selections.result(e.source));
        }
        let result = current.as_ref().expect("evaluated above");
        outcomes[i] = Some(expect::check(page, e, result, &file, &parsed.place));
    }
    let results: Vec<_> = outcomes
        .into_iter()
        .map(|o| o.expect("every row"))
        .collect();
    let passed = results.iter().filter(|r| r.passed).count();
    Ok(ExpectReport {
        page_id: page.id.clone(),
        revision,
        file,
        passed,
        failed: results.len() - passed,
        ignored_columns: expectations.ignored,
        results,
    })
}

fn pinned(page: &Page, revision: i64, select: Option<&str>) -> Result<Vec<Pinned>> {
    let rows = selected(page, select)?;
    let mut selections = Selections::new(page, revision)?;
    let mut out = Vec::with_capacity(rows.len() * page.target.rows.len());
    for s in rows {
        out.extend(Pinned::of(page, &selections.result(s)));
    }
    Ok(out)
}

impl App {
    /// Checks a table of expected outcomes against a stored page's current revision:
    /// every row, each source evaluated once. A row that names no row of the page, or
    /// holds what its column cannot, refuses the table (every such row listed).
    pub fn check_expectations(
        &self,
        page_id: &str,
        input: DataInput<'_>,
        read: &ReadOptions,
    ) -> Result<ExpectReport> {
        let (page, revision) = self.page(page_id)?;
        check(&page, revision, input, read)
    }

    /// [`App::check_expectations`] on a page file (revision 0, nothing stored).
    pub fn check_expectations_text(
        text: &str,
        origin: &str,
        input: DataInput<'_>,
        read: &ReadOptions,
    ) -> Result<ExpectReport> {
        let (page, _) = Self::parse_page(text, origin)?;
        check(&page, 0, input, read)
    }

    /// The current outcome of every target for one source row (`select`), or for every
    /// one, as rows of an expectations table.
    pub fn pin_expectations(&self, page_id: &str, select: Option<&str>) -> Result<Vec<Pinned>> {
        let (page, revision) = self.page(page_id)?;
        pinned(&page, revision, select)
    }

    /// [`App::pin_expectations`] on a page file.
    pub fn pin_expectations_text(
        text: &str,
        origin: &str,
        select: Option<&str>,
    ) -> Result<Vec<Pinned>> {
        let (page, _) = Self::parse_page(text, origin)?;
        pinned(&page, 0, select)
    }
}

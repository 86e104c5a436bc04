//! Expectations from a table: check a table of expected outcomes (CSV, TSV, JSON
//! Lines, JSON, Parquet, Arrow, Excel) against a page, and pin the current outcomes as
//! such a table. See [`rulebench_core::expect`] for the columns.

use std::sync::Arc;

use std::path::Path;

use serde::Serialize;

use rulebench_core::dataset::{KeyCase, ReadOptions};
use rulebench_core::expect::{self, ExpectReport, Pinned, TableRows};
use rulebench_core::matrix::Matrix;
use rulebench_core::model::{ExpectationTable, Page, Side};
use rulebench_core::result::{Names, SelectionResult};
use rulebench_store as store;

use super::dataset::{DataInput, Reading, link_base, link_path, read_rows};
use super::{App, AppError, Result, timestamp};

/// One linked table checked: its file, and its report — or why it could not be read
/// (gone, or no longer a table of this page's rows).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkedRun {
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<ExpectReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl LinkedRun {
    /// Read, and every row as expected.
    pub fn passed(&self) -> bool {
        self.report.as_ref().is_some_and(ExpectReport::all_passed)
    }
}

/// Checks every table linked to `page` (`base`: where a relative path points from) on
/// `matrix` (the page's; `None`: one made for them all), table by table while `go_on`
/// says so (the background work stops for a newer state).
pub(crate) fn check_linked(
    page: &Page,
    revision: i64,
    base: &Path,
    matrix: Option<&mut Matrix>,
    go_on: &mut dyn FnMut() -> bool,
) -> Vec<LinkedRun> {
    if page.expectations.is_empty() {
        return Vec::new();
    }
    let mut own = None;
    let matrix = match matrix {
        Some(m) => Ok(m),
        None => Matrix::new(page).map(|m| own.insert(m)),
    };
    let matrix = match matrix {
        Ok(m) => m,
        Err(e) => {
            return page
                .expectations
                .iter()
                .map(|t| LinkedRun {
                    file: t.file.clone(),
                    report: None,
                    error: Some(e.to_string()),
                })
                .collect();
        }
    };
    let mut out = Vec::with_capacity(page.expectations.len());
    for t in &page.expectations {
        if !go_on() {
            break;
        }
        let path = base.join(&t.file);
        out.push(
            match check(page, revision, DataInput::Linked(&path), &t.read, matrix) {
                Ok(report) => LinkedRun {
                    file: t.file.clone(),
                    report: Some(report),
                    error: None,
                },
                Err(e) => LinkedRun {
                    file: t.file.clone(),
                    report: None,
                    error: Some(e.to_string()),
                },
            },
        );
    }
    out
}

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
struct Selections<'p, 'm> {
    page: &'p Page,
    matrix: &'m mut Matrix,
    names: Arc<Names>,
    revision: i64,
    at: String,
}

impl<'p, 'm> Selections<'p, 'm> {
    fn new(page: &'p Page, revision: i64, matrix: &'m mut Matrix) -> Self {
        let names = Arc::new(Names::of_matrix(page, matrix));
        Selections {
            page,
            matrix,
            names,
            revision,
            at: timestamp(),
        }
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

/// Checks the table at `input` against `page` at `revision`, evaluated on `matrix`
/// (the page's).
fn check(
    page: &Page,
    revision: i64,
    input: DataInput<'_>,
    read: &ReadOptions,
    matrix: &mut Matrix,
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
    let mut selections = Selections::new(page, revision, matrix);
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
    let mut matrix = Matrix::new(page)?;
    let mut selections = Selections::new(page, revision, &mut matrix);
    let mut out = Vec::with_capacity(rows.len() * page.target.rows.len());
    for s in rows {
        out.extend(Pinned::of(page, &selections.result(s)));
    }
    Ok(out)
}

impl App {
    /// Links a table of expected outcomes to a stored page (one revision): it is checked
    /// first — a table that does not read against the page is refused and nothing is
    /// linked — then kept (absolute) with how it is read, replacing an earlier link of
    /// the same file. Returns the check and the revision.
    pub fn link_expectations(
        &mut self,
        page_id: &str,
        file: &Path,
        read: &ReadOptions,
    ) -> Result<(ExpectReport, i64)> {
        let shown = link_path(file);
        let path = std::path::PathBuf::from(&shown);
        let report = self.check_expectations(page_id, DataInput::Linked(&path), read)?;
        let checked_at = report.revision;
        let what = format!("linked expectations {shown}");
        let table = ExpectationTable {
            file: shown.clone(),
            read: read.clone(),
        };
        let revision = self
            .store
            .change_checked(page_id, &what, |tx, revision| -> Result<()> {
                // Linked only at the revision it was checked at: a change made meanwhile
                // may leave it no longer reading against the page.
                if revision != checked_at + 1 {
                    return Err(AppError::Usage(format!(
                        "{}: the page changed while the table was checked (revision {}); link it again",
                        shown,
                        revision - 1
                    )));
                }
                let mut tables = store::ops::expectation_tables(tx, page_id)?;
                match tables.iter_mut().find(|t| t.file == shown) {
                    Some(t) => *t = table,
                    None => tables.push(table),
                }
                store::ops::write_expectation_tables(tx, page_id, &tables)?;
                Ok(())
            })?;
        Ok((report, revision))
    }

    /// Unlinks a table from a stored page (one revision); `file` as linked or as a path
    /// to it.
    pub fn unlink_expectations(&mut self, page_id: &str, file: &Path) -> Result<i64> {
        let shown = link_path(file);
        let given = file.display().to_string();
        let what = format!("unlinked expectations {shown}");
        self.store
            .change_checked(page_id, &what, |tx, _| -> Result<()> {
                let mut tables = store::ops::expectation_tables(tx, page_id)?;
                // As linked, as a path to it, or (else) by its name when one table has
                // that name.
                let by_name = || {
                    let name = file.file_name()?;
                    let mut hits = tables
                        .iter()
                        .enumerate()
                        .filter(|(_, t)| Path::new(&t.file).file_name() == Some(name));
                    match (hits.next(), hits.next()) {
                        (Some((i, _)), None) => Some(i),
                        _ => None,
                    }
                };
                let Some(i) = tables
                    .iter()
                    .position(|t| {
                        t.file == shown || t.file == given || link_path(Path::new(&t.file)) == shown
                    })
                    .or_else(by_name)
                else {
                    let linked: Vec<&str> = tables.iter().map(|t| t.file.as_str()).collect();
                    return Err(AppError::NotFound {
                        what: "linked table",
                        id: given.clone(),
                        hint: Some(if linked.is_empty() {
                            "the page links no table".to_owned()
                        } else {
                            format!("linked: {}", linked.join(", "))
                        }),
                    });
                };
                tables.remove(i);
                store::ops::write_expectation_tables(tx, page_id, &tables)?;
                Ok(())
            })
    }

    /// The tables of expected outcomes a stored page links (as stored: absolute).
    pub fn linked_tables(&self, page_id: &str) -> Result<Vec<std::path::PathBuf>> {
        let Some(head) = self.store.load_head(page_id)? else {
            return Err(self.missing_page(page_id));
        };
        Ok(head
            .page
            .expectations
            .iter()
            .map(|t| std::path::PathBuf::from(&t.file))
            .collect())
    }

    /// Checks every table linked to a stored page, at its current revision.
    pub fn check_linked(&self, page_id: &str) -> Result<Vec<LinkedRun>> {
        // A page that links no table is not loaded (its rows may be many).
        let Some(head) = self.store.load_head(page_id)? else {
            return Err(self.missing_page(page_id));
        };
        if head.page.expectations.is_empty() {
            return Ok(Vec::new());
        }
        let (page, revision) = self.page(page_id)?;
        Ok(check_linked(
            &page,
            revision,
            Path::new(""),
            None,
            &mut || true,
        ))
    }

    /// Checks every table a page file links (a relative path from the file's
    /// directory).
    pub fn check_linked_text(text: &str, origin: &str) -> Result<Vec<LinkedRun>> {
        let (page, _) = Self::parse_page(text, origin)?;
        Ok(check_linked(
            &page,
            0,
            &link_base(origin),
            None,
            &mut || true,
        ))
    }

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
        check(&page, revision, input, read, &mut Matrix::new(&page)?)
    }

    /// [`App::check_expectations`] on a page file (revision 0, nothing stored).
    pub fn check_expectations_text(
        text: &str,
        origin: &str,
        input: DataInput<'_>,
        read: &ReadOptions,
    ) -> Result<ExpectReport> {
        let (page, _) = Self::parse_page(text, origin)?;
        check(&page, 0, input, read, &mut Matrix::new(&page)?)
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

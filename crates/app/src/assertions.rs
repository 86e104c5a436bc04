//! The verdict-assertion use cases: run a stored page's assertions (results
//! persisted), run a page file's in memory, pin the current outcome, edit the list.

use std::sync::Arc;

use serde_json::Value;

use super::{App, AppError, Result, timestamp};
use rulebench_core::assertions::{self, ALL_SOURCES, Assertion, Limits, Report};
use rulebench_core::diag::{Diagnostic, did_you_mean};
use rulebench_core::matrix::Matrix;
use rulebench_core::model::{Page, Side, key_hash};
use rulebench_core::result::{Names, SelectionResult};
use rulebench_store::{self as store, StoredAssertionResult};

/// The coverage of a page's rules by its assertions, with the page and how long it
/// took.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CoverageReport {
    pub page_id: String,
    pub revision: i64,
    pub took_ms: f64,
    #[serde(flatten)]
    pub coverage: rulebench_core::coverage::Coverage,
}

/// What pinning did.
#[derive(Debug, Clone, PartialEq)]
pub struct Pinned {
    /// The page's revision afterwards (unchanged when every pin was already there).
    pub revision: i64,
    /// How many source rows were pinned.
    pub selections: usize,
    /// Pins that were new.
    pub added: usize,
    /// Pins that replaced an assertion with the same id (changed or not).
    pub replaced: usize,
    /// Whether the page's assertions changed (and so a revision was made).
    pub changed: bool,
}

fn invalid(origin: &str, diagnostics: Vec<Diagnostic>) -> AppError {
    AppError::Invalid {
        origin: origin.to_owned(),
        diagnostics,
    }
}

impl App {
    /// Runs every assertion of a stored page on the results of its current revision
    /// (served from the result cache when there) and persists the results.
    pub fn run_assertions(&mut self, page_id: &str) -> Result<Report> {
        self.run_assertions_with(page_id, &Limits::default())
    }

    /// [`App::run_assertions`] with other limits. Cached results of the revision are
    /// read; misses are evaluated one selection at a time on one matrix and not cached
    /// (a run over every source would otherwise fill the database).
    pub fn run_assertions_with(&mut self, page_id: &str, limits: &Limits) -> Result<Report> {
        // Assertions name source rows; the target rows are read by the engine alone.
        // Every read of the run in one read transaction: one state of the page.
        let snapshot = self.store.read_snapshot()?;
        let (page, revision) = self.page_without(page_id, Side::Target)?;
        let compiled = assertions::compile_all(&page, limits).map_err(|d| invalid(&page.id, d))?;
        let mut source = ResultSource::new(&page, revision);
        let results =
            assertions::run_compiled(&compiled, &page, limits, |s| source.result(self, s))?;
        drop(snapshot);
        let at = timestamp();
        let report = Report::new(&page.id, revision, &at, results);
        self.store
            .store_assertion_results(&page.id, revision, &at, &report.results)?;
        Ok(report)
    }

    /// Runs the assertions of a page file in memory (revision 0); nothing is stored.
    pub fn test_text(text: &str, origin: &str) -> Result<Report> {
        Self::test_text_with(text, origin, &Limits::default())
    }

    /// [`App::test_text`] with other limits.
    pub fn test_text_with(text: &str, origin: &str, limits: &Limits) -> Result<Report> {
        let (page, _) = Self::parse_page(text, origin)?;
        assertions::run_in_memory(&page, 0, &timestamp(), limits)
            .map_err(|d| invalid(origin, d.into_iter().map(|d| d.locate_in(text)).collect()))
    }

    /// The coverage of a stored page's rules by its assertions (conditions over the
    /// pairs they look at, then mutants), at its current revision.
    pub fn coverage(&self, page_id: &str) -> Result<CoverageReport> {
        let (page, revision) = self.page(page_id)?;
        Self::coverage_of(&page, revision, &page.id)
    }

    /// [`App::coverage`] of a page file (revision 0).
    pub fn coverage_text(text: &str, origin: &str) -> Result<CoverageReport> {
        let (page, _) = Self::parse_page(text, origin)?;
        Self::coverage_of(&page, 0, origin).map_err(|e| match e {
            AppError::Invalid {
                origin,
                diagnostics,
            } => AppError::Invalid {
                diagnostics: diagnostics.into_iter().map(|d| d.locate_in(text)).collect(),
                origin,
            },
            e => e,
        })
    }

    fn coverage_of(page: &Page, revision: i64, origin: &str) -> Result<CoverageReport> {
        let started = std::time::Instant::now();
        let coverage = rulebench_core::coverage::coverage(page, &Limits::default())
            .map_err(|d| invalid(origin, d))?;
        Ok(CoverageReport {
            page_id: page.id.clone(),
            revision,
            took_ms: started.elapsed().as_secs_f64() * 1000.0,
            coverage,
        })
    }

    /// The persisted results of a page's latest assertion run.
    pub fn assertion_results(&self, page_id: &str) -> Result<Vec<StoredAssertionResult>> {
        self.page(page_id)?;
        Ok(self.store.assertion_results(page_id)?)
    }

    /// Replaces a page's assertions: ids are filled, each `select` is stored as its row's
    /// key, everything is validated first; one new revision. Returns the assertions as
    /// saved.
    pub fn set_assertions(
        &mut self,
        page_id: &str,
        list: Vec<Assertion>,
    ) -> Result<(Vec<Assertion>, i64)> {
        let ((), saved, revision) = self.edit_assertions(page_id, "assertions", |all| {
            *all = list;
            Ok(())
        })?;
        Ok((saved, revision))
    }

    /// Adds an assertion (or replaces the one with its id). Returns its id and the revision.
    pub fn put_assertion(&mut self, page_id: &str, assertion: Assertion) -> Result<(String, i64)> {
        self.replace_assertion(page_id, None, assertion)
    }

    /// Replaces the assertion `replacing` (in place, even when the new one has another
    /// id: a rename is one revision), or adds or replaces by the assertion's own id.
    pub fn replace_assertion(
        &mut self,
        page_id: &str,
        replacing: Option<&str>,
        assertion: Assertion,
    ) -> Result<(String, i64)> {
        self.replace_assertion_over(page_id, replacing, assertion, None)
    }

    /// [`App::replace_assertion`] over the stored assertion its edit started from
    /// (`base`, as JSON): when the stored one is another now — changed or removed
    /// elsewhere meanwhile — nothing is written and the save is refused with an
    /// [`AppError::Conflict`] (mine, theirs, the base).
    pub fn replace_assertion_over(
        &mut self,
        page_id: &str,
        replacing: Option<&str>,
        assertion: Assertion,
        base: Option<&Value>,
    ) -> Result<(String, i64)> {
        let wanted = replacing.unwrap_or(&assertion.id).to_owned();
        let edited = self.edit_assertions(page_id, "saved assertion", |all| {
            let at = all
                .iter()
                .position(|a| !wanted.is_empty() && a.id == wanted);
            if let Some(base) = base {
                let theirs = at.map_or(Value::Null, |i| {
                    serde_json::to_value(&all[i]).expect("an assertion serializes")
                });
                if &theirs != base {
                    return Err(AppError::Conflict(Box::new(super::Conflict {
                        page_id: page_id.to_owned(),
                        what: super::ConflictOn::Assertion(wanted.clone()),
                        mine: serde_json::to_value(&assertion).expect("an assertion serializes"),
                        theirs,
                        base: base.clone(),
                        revision: 0,
                        author: None,
                    })));
                }
            }
            Ok(match at {
                Some(i) => {
                    all[i] = assertion;
                    i
                }
                None => {
                    all.push(assertion);
                    all.len() - 1
                }
            })
        });
        let (index, saved, revision) = match edited {
            Err(AppError::Conflict(mut c)) => {
                // Who made theirs, as the log says now (the newest entry first).
                if let Ok(Some((revision, author))) = self.store.last_revision(page_id) {
                    c.revision = revision;
                    c.author = author;
                }
                return Err(AppError::Conflict(c));
            }
            other => other?,
        };
        Ok((saved[index].id.clone(), revision))
    }

    /// Removes an assertion by id.
    pub fn remove_assertion(&mut self, page_id: &str, assertion_id: &str) -> Result<i64> {
        let what = format!("removed assertion {assertion_id}");
        let ((), _, revision) = self.edit_assertions(page_id, &what, |all| {
            let Some(i) = all.iter().position(|a| a.id == assertion_id) else {
                let ids: Vec<&str> = all.iter().map(|a| a.id.as_str()).collect();
                return Err(AppError::NotFound {
                    what: "assertion",
                    id: assertion_id.to_owned(),
                    hint: did_you_mean(assertion_id, ids.iter().copied())
                        .map(|s| format!("did you mean `{s}`?")),
                });
            };
            all.remove(i);
            Ok(())
        })?;
        Ok(revision)
    }

    /// Edits a page's assertions in one transaction: the stored list is read inside it,
    /// edited, normalised, validated and written, so a concurrent edit is never lost.
    /// Returns what `edit` returned, the list as saved and the new revision.
    pub(crate) fn edit_assertions<T>(
        &mut self,
        page_id: &str,
        what: &str,
        edit: impl FnOnce(&mut Vec<Assertion>) -> Result<T>,
    ) -> Result<(T, Vec<Assertion>, i64)> {
        // The page (without its target rows) gives validation its source rows.
        let (mut page, _) = self.page_without(page_id, Side::Target)?;
        let mut out = None;
        let revision = self
            .store
            .change_checked(page_id, what, |tx, _| -> Result<()> {
                page.assertions = store::ops::assertions(tx, page_id)?;
                out = Some(edit(&mut page.assertions)?);
                assertions::normalize(&mut page);
                let diags = assertions::validate(&page, &Limits::default());
                if !diags.is_empty() {
                    return Err(invalid(&page.id, diags));
                }
                store::ops::set_assertions(tx, page_id, &page.assertions)?;
                Ok(())
            })?;
        Ok((out.expect("set by the change"), page.assertions, revision))
    }

    /// Pins the current outcome of one selection (`select`: a source row, or `*` / `None`
    /// for every source): every target's verdict, the selection verdict and the
    /// recommendation (the "import from last actual output"). Pins replace
    /// assertions with the same id; the page gets a new revision when anything changed.
    pub fn pin_assertions(&mut self, page_id: &str, select: Option<&str>) -> Result<Pinned> {
        let snapshot = self.store.read_snapshot()?;
        let (page, revision) = self.page_without(page_id, Side::Target)?;
        let rows: Vec<usize> = match select {
            None | Some(ALL_SOURCES) => (0..page.source.rows.len()).collect(),
            Some(key) => vec![Self::find_row(&page, Side::Source, key)?],
        };
        // Not cached: the pins make a new revision (and bad input must leave no trace).
        let mut source = ResultSource::new(&page, revision);
        let mut next = page.clone();
        let mut pins = Vec::new();
        // The merged list holds every pin's id: once the pins alone pass the page's
        // limit, no merge can fit, and the work stops there (not after every selection).
        // Pins of one id replace each other (ids come from the rows' keys, which two
        // rows may share once made slugs): each id counts once, at its last size.
        let limits = Limits::default();
        let mut sizes: std::collections::HashMap<String, usize> = Default::default();
        let mut bytes = 0;
        for (n, &s) in rows.iter().enumerate() {
            let result = source.result(self, s)?;
            let pinned = assertions::pin(&page, &result);
            for p in &pinned {
                let size = serde_json::to_string(p).map_or(0, |t| t.len() + 1);
                bytes += size;
                bytes -= sizes.insert(p.id.clone(), size).unwrap_or(0);
            }
            if bytes > limits.max_assertions_bytes {
                let mut d = assertions::too_large(bytes, &limits);
                d.message = format!(
                    "the pins of {} selection(s) of {} are already {bytes} bytes; the \
                     limit is {} bytes per page",
                    n + 1,
                    rows.len(),
                    limits.max_assertions_bytes
                );
                return Err(invalid(&page.id, vec![d]));
            }
            pins.extend(pinned);
        }
        let (replaced, added) = assertions::merge(&mut next.assertions, pins.clone());
        // The pins are written in a transaction of their own (IMMEDIATE).
        drop(snapshot);
        let changed = next.assertions != page.assertions;
        let revision = if changed {
            let what = format!("pinned {} selection(s)", rows.len());
            // The pins are merged into the list as stored when the change runs, and only
            // while the page is at the revision they were computed at (pins of outcomes
            // another change moved would fail at once): else the person pins again.
            let expected = self.store.expected_revision();
            self.store
                .expect_revision(Some(expected.unwrap_or(revision)));
            let edited = self.edit_assertions(page_id, &what, |all| {
                assertions::merge(all, pins);
                Ok(())
            });
            self.store.expect_revision(expected);
            let ((), _, revision) = edited?;
            revision
        } else {
            revision
        };
        Ok(Pinned {
            revision,
            selections: rows.len(),
            added,
            replaced,
            changed,
        })
    }
}

/// Results of a page's selections at one revision: from the result cache when there,
/// else evaluated on one matrix built on first need (from the stored target rows: the
/// page is loaded without them).
struct ResultSource<'p> {
    page: &'p Page,
    revision: i64,
    matrix: Option<(Matrix, Arc<Names>)>,
    at: String,
}

impl<'p> ResultSource<'p> {
    fn new(page: &'p Page, revision: i64) -> Self {
        ResultSource {
            page,
            revision,
            matrix: None,
            at: timestamp(),
        }
    }

    /// The result of source row `s` (read only: nothing is cached).
    fn result(&mut self, app: &App, s: usize) -> Result<SelectionResult> {
        let page = self.page;
        let hash = key_hash(&page.source.row_key(&page.source.rows[s]));
        if let Some(hit) = app.cached(&page.id, &hash, self.revision, s)? {
            return Ok(hit);
        }
        if self.matrix.is_none() {
            self.matrix = Some(app.lean_matrix(page)?);
        }
        let (m, names) = self.matrix.as_mut().expect("built above");
        Ok(SelectionResult::new(
            page,
            names.clone(),
            m.evaluate(s),
            self.revision,
            &self.at,
        ))
    }
}

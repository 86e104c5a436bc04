//! The workspace's assertions: run live on the matrix (no SQLite), pin, add, remove.

use super::workspace::Session;
use super::{AppError, Result};
use rulebench_core::assertions::{self, Assertion, Limits, Report};
use rulebench_core::result::{Names, SelectionResult};

impl Session {
    /// Runs the page's assertions on the current (possibly unsaved) state.
    pub fn run_assertions(&mut self) -> Result<Report> {
        let limits = Limits::default();
        let compiled = assertions::compile_all(&self.page, &limits).map_err(|diagnostics| {
            AppError::Invalid {
                origin: "assertions".into(),
                diagnostics,
            }
        })?;
        let at = super::timestamp();
        let revision = self.revision;
        let (page, matrix) = self.page_and_matrix();
        let names = std::sync::Arc::new(Names::of(page));
        let results = assertions::run_compiled(&compiled, page, &limits, |s| {
            Ok::<_, std::convert::Infallible>(SelectionResult::new(
                page,
                names.clone(),
                matrix.evaluate(s),
                revision,
                &at,
            ))
        })
        .unwrap_or_else(|never| match never {});
        Ok(Report::new(&page.id, revision, &at, results))
    }

    /// Re-reads the page's assertions and revision after a change made through the self.app.
    pub(super) fn reload_assertions(&mut self) -> Result<()> {
        // Only the assertions changed: the rows are not read again.
        let (page, revision) = self
            .app
            .page_without(&self.page.id, rulebench_core::model::Side::Target)?;
        self.page.assertions = page.assertions;
        self.revision = revision;
        Ok(())
    }

    /// Pins the current verdicts of the selection; returns how many pins were new.
    pub fn pin_selection(&mut self) -> Result<usize> {
        let key = self
            .page
            .source
            .row_key(&self.page.source.rows[self.selection]);
        let pinned = self.app.pin_assertions(&self.page.id, Some(&key))?;
        self.reload_assertions()?;
        Ok(pinned.added)
    }

    /// Adds or replaces an assertion (validated); returns its id.
    pub fn put_assertion(&mut self, assertion: Assertion) -> Result<String> {
        self.replace_assertion(None, assertion)
    }

    /// Replaces assertion `replacing` with `assertion` (a rename is one revision), or
    /// adds or replaces by its id; returns its id.
    pub fn replace_assertion(
        &mut self,
        replacing: Option<&str>,
        assertion: Assertion,
    ) -> Result<String> {
        self.replace_assertion_over(replacing, assertion, None)
    }

    /// [`Session::replace_assertion`] over the stored assertion its edit started from
    /// (`base`): one changed or removed elsewhere meanwhile is a conflict, waiting for
    /// the person's choice ([`Session::resolve`]).
    pub fn replace_assertion_over(
        &mut self,
        replacing: Option<&str>,
        assertion: Assertion,
        base: Option<&serde_json::Value>,
    ) -> Result<String> {
        let saved = self
            .app
            .replace_assertion_over(&self.page.id, replacing, assertion, base);
        let (id, _) = self.noting_conflict(saved)?;
        self.reload_assertions()?;
        Ok(id)
    }

    pub fn remove_assertion(&mut self, id: &str) -> Result<()> {
        self.app.remove_assertion(&self.page.id, id)?;
        self.reload_assertions()
    }
}

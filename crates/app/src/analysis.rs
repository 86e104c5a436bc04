//! The analysis use case (`rulebench analyze`): what can be decided about a page's rules
//! for any row its schema allows, and about its current rows, each claim with a
//! witness. See [`rulebench_core::analyze`] for the method.

use serde::Serialize;

use rulebench_core::analyze::{self, Analysis};
use rulebench_core::matrix::Matrix;
use rulebench_core::model::Page;
use rulebench_core::schema::Schema;

use super::{App, Result};

/// A page's analysis with its name and revision.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnalysisReport {
    pub page_id: String,
    /// The page's revision (0: a page file, in memory).
    pub revision: i64,
    pub rules: usize,
    #[serde(flatten)]
    pub analysis: Analysis,
}

fn report(page: &Page, revision: i64) -> Result<AnalysisReport> {
    let mut matrix = Matrix::new(page)?;
    let schema = Schema::of(page);
    Ok(AnalysisReport {
        page_id: page.id.clone(),
        revision,
        rules: page.rules.len(),
        analysis: analyze::analyze(page, &schema, &mut matrix),
    })
}

impl App {
    /// Analyses a stored page at its current revision.
    pub fn analyze(&self, page_id: &str) -> Result<AnalysisReport> {
        let (page, revision) = self.page(page_id)?;
        report(&page, revision)
    }

    /// Analyses a page file (revision 0, nothing stored).
    pub fn analyze_text(text: &str, origin: &str) -> Result<AnalysisReport> {
        let (page, _) = Self::parse_page(text, origin)?;
        report(&page, 0)
    }
}

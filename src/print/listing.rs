//! Text renderings: glyphs and aligned tables (results stream through `print`).

use crate::app::PageSummary;

/// Glyph of a verdict: ● full, ◐ partial, ○ none.
pub fn glyph(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Full => "●",
        Verdict::Partial => "◐",
        Verdict::None => "○",
    }
}

pub use crate::app::text::sanitize;
use crate::app::types::Verdict;

pub use crate::print::render_table;

pub fn pages_table(pages: &[PageSummary]) -> String {
    let header: Vec<String> = [
        "ID", "NAME", "RULES", "SOURCES", "TARGETS", "REVISION", "UPDATED",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = pages
        .iter()
        .map(|p| {
            vec![
                sanitize(&p.id),
                sanitize(&p.name),
                p.rules.to_string(),
                p.sources.to_string(),
                p.targets.to_string(),
                p.revision.to_string(),
                p.updated_at.clone(),
            ]
        })
        .collect();
    render_table(&header, &rows)
}

/// `rulebench page log`: one line per revision, newest first.
pub fn revisions_table(log: &[crate::app::history::RevisionEntry]) -> String {
    let header: Vec<String> = ["REVISION", "WHEN", "WHO", "CHANGE"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = log
        .iter()
        .map(|r| {
            vec![
                r.revision.to_string(),
                sanitize(&r.at),
                sanitize(r.author.as_deref().unwrap_or("-")),
                sanitize(&r.change),
            ]
        })
        .collect();
    render_table(&header, &rows)
}

/// `rulebench db`: where the database is, its version and size, then its pages.
pub fn db_info(info: &crate::app::DbInfo) -> String {
    let mut out = format!(
        "database  {}\nschema    version {}\nsize      {:.1} KiB{}\npages     {}\n",
        sanitize(&info.path.display().to_string()),
        info.schema_version,
        info.bytes as f64 / 1024.0,
        if info.read_only { " (read-only)" } else { "" },
        info.pages.len()
    );
    if !info.pages.is_empty() {
        out.push('\n');
        out.push_str(&pages_table(&info.pages));
    }
    out
}

/// `rulebench assertion list`: one line per assertion.
pub fn assertions_table(list: &[crate::app::types::Assertion]) -> String {
    let header: Vec<String> = ["ID", "SELECT", "PATH", "MATCHER", "EXPECTED", "DESCRIPTION"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|a| {
            let matcher = format!(
                "{}{}{}",
                if a.not { "not " } else { "" },
                a.matcher,
                if a.path_match == crate::app::types::PathMatch::All {
                    " (all)"
                } else {
                    ""
                }
            );
            vec![
                sanitize(&a.id),
                sanitize(&a.select),
                sanitize(&a.path),
                sanitize(&matcher),
                a.expected
                    .as_ref()
                    .map_or(String::new(), |v| sanitize(&v.to_string())),
                sanitize(a.description.as_deref().unwrap_or("")),
            ]
        })
        .collect();
    render_table(&header, &rows)
}

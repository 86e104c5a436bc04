//! Text renderings: glyphs and aligned tables (results stream through `print`).

use crate::app::PageSummary;

/// Glyph of a verdict: ● full, ◐ partial, ○ none.
pub fn glyph(verdict: u64) -> &'static str {
    match verdict {
        2 => "●",
        1 => "◐",
        _ => "○",
    }
}

pub use crate::app::types::sanitize;

/// Columns measured in display width (CJK and emoji take two), not in characters.
pub(super) fn render_table(header: &[String], rows: &[Vec<String>]) -> String {
    use unicode_width::UnicodeWidthStr;
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].width())
                .chain([header[i].width()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let mut s: String = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w.saturating_sub(c.width()))))
            .collect::<Vec<_>>()
            .join("  ");
        s.truncate(s.trim_end().len());
        s.push('\n');
        s
    };
    let mut out = line(header);
    out.push_str(&line(
        &widths.iter().map(|w| "─".repeat(*w)).collect::<Vec<_>>(),
    ));
    for r in rows {
        out.push_str(&line(r));
    }
    out
}

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

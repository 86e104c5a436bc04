//! Printers both fronts use: the command line prints with them, and the workbench
//! exports with the same ones (the matrix grid, aligned tables, CSV cells guarded
//! against formulas). They render the typed result; nothing here reads or writes.

pub mod analysis;
pub mod coverage;
pub mod diff;
pub mod expect;
pub mod explain;
pub mod listing;
pub mod matrix;
pub mod report;
pub mod result;
pub mod view;
pub mod xml;

use std::io::Write;

pub use crate::app::text::sanitize;

/// Columns measured in display width (CJK and emoji take two), not in characters.
pub fn render_table(header: &[String], rows: &[Vec<String>]) -> String {
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

/// A CSV writer's error as an I/O error, keeping the I/O error's own kind when it is
/// one: a closed pipe stays `BrokenPipe` (a reader that stopped, not a failure).
pub fn csv_io(e: csv::Error) -> std::io::Error {
    if e.is_io_error()
        && let csv::ErrorKind::Io(io) = e.into_kind()
    {
        return io;
    }
    std::io::Error::other("a CSV record could not be written")
}

/// A JSON writer's error as an I/O error, keeping the I/O error's kind when it is one
/// (a closed pipe stays `BrokenPipe`).
pub fn json_io(e: serde_json::Error) -> std::io::Error {
    match e.io_error_kind() {
        Some(kind) => std::io::Error::new(kind, e),
        None => std::io::Error::other(e),
    }
}

/// A CSV writer, or a TSV one.
pub fn csv_writer<W: Write>(w: W, tabs: bool) -> csv::Writer<W> {
    csv::WriterBuilder::new()
        .delimiter(if tabs { b'\t' } else { b',' })
        .from_writer(w)
}

/// A text cell for CSV: terminal controls escaped (as in tables) and, with `guard`, a
/// leading `'` on text a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, or a
/// tab or carriage return first: the OWASP advice against CSV injection).
pub fn csv_text(text: &str, guard: bool) -> String {
    let text = sanitize(text);
    // A number (`-1.5`, `+3`) is data a spreadsheet reads as a number: left alone.
    let number = text.trim().parse::<f64>().is_ok();
    if guard && !number && text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text
    }
}

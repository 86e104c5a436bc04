//! The Markdown printer (`evaluate --format md`): a heading with the page's name, then
//! one table of a row per selection (its key, verdict and recommended target) and a
//! column per target (the verdict glyph and score), then a legend of the glyphs.

use std::io::{self, Write};

use super::sink::ResultSink;
use crate::app::types::{Names, SelectionResult};
use crate::print::listing::glyph;
use crate::print::sanitize;

/// Builds a [`Markdown`] printer (it has no options).
#[derive(Clone, Debug, Default)]
pub struct MarkdownBuilder {}

impl MarkdownBuilder {
    /// A Markdown printer.
    pub fn new() -> MarkdownBuilder {
        MarkdownBuilder::default()
    }

    /// The printer, writing to `w`.
    pub fn build<W: Write>(&self, w: W) -> Markdown<W> {
        Markdown { w }
    }
}

/// Prints a Markdown table: its head at [`ResultSink::begin`], a row per selection, the
/// legend at [`ResultSink::finish`].
#[derive(Debug)]
pub struct Markdown<W> {
    w: W,
}

impl<W: Write> ResultSink for Markdown<W> {
    fn begin(&mut self, names: &Names, page_name: &str, source_name: &str) -> io::Result<()> {
        markdown_head(&mut self.w, page_name, source_name, names)
    }

    fn selection(&mut self, r: &SelectionResult) -> io::Result<()> {
        markdown_row(&mut self.w, r)
    }

    fn finish(&mut self) -> io::Result<()> {
        markdown_foot(&mut self.w)
    }
}

fn md_cell(s: &str) -> String {
    sanitize(s).replace('|', "\\|")
}

/// The head of the Markdown table of every selection × target (`--all --format md`).
fn markdown_head<W: Write>(
    w: &mut W,
    page_name: &str,
    source_name: &str,
    names: &Names,
) -> io::Result<()> {
    write!(w, "# {}\n\n", md_cell(page_name))?;
    let ids: Vec<String> = names.targets.iter().map(|t| md_cell(&t.id)).collect();
    writeln!(
        w,
        "| {} | selection | recommended | {} |",
        md_cell(source_name),
        ids.join(" | ")
    )?;
    writeln!(w, "|---|---|---|{}", "---|".repeat(ids.len()))
}

/// One selection as a row of the Markdown table.
fn markdown_row<W: Write>(w: &mut W, r: &SelectionResult) -> io::Result<()> {
    let v = r.selection_verdict();
    write!(
        w,
        "| {} | {} {v} | {} |",
        md_cell(&r.selection_key),
        glyph(v),
        md_cell(r.recommended_id().unwrap_or("—")),
    )?;
    for t in 0..r.target_count() {
        let d = r.device(t);
        write!(w, " {} {:.2} |", glyph(d.verdict), d.score)?;
    }
    w.write_all(b"\n")
}

/// The legend under the Markdown table.
fn markdown_foot<W: Write>(w: &mut W) -> io::Result<()> {
    w.write_all(
        "\n● full (2) · ◐ partial (1) · ○ incompatible (0); cells show verdict and score.\n"
            .as_bytes(),
    )
}

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
        Markdown {
            w,
            line: Vec::new(),
            scores: std::collections::HashMap::new(),
        }
    }
}

/// Prints a Markdown table: its head at [`ResultSink::begin`], a row per selection, the
/// legend at [`ResultSink::finish`].
#[derive(Debug)]
pub struct Markdown<W> {
    w: W,
    /// The row being written (one `write_all` per row).
    line: Vec<u8>,
    /// Each score's cell text (`{:.2}`) by its bits: scores take few values, and
    /// formatting one costs more than the rest of its cell.
    scores: std::collections::HashMap<u64, Box<str>>,
}

impl<W: Write> ResultSink for Markdown<W> {
    fn begin(&mut self, names: &Names, page_name: &str, source_name: &str) -> io::Result<()> {
        markdown_head(&mut self.w, page_name, source_name, names)
    }

    fn selection(&mut self, r: &SelectionResult) -> io::Result<()> {
        self.line.clear();
        markdown_row(&mut self.line, &mut self.scores, r)?;
        self.w.write_all(&self.line)
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
fn markdown_row(
    w: &mut Vec<u8>,
    scores: &mut std::collections::HashMap<u64, Box<str>>,
    r: &SelectionResult,
) -> io::Result<()> {
    let v = r.selection_verdict();
    write!(
        w,
        "| {} | {} {v} | {} |",
        md_cell(&r.selection_key),
        glyph(v),
        md_cell(r.recommended_id().unwrap_or("—")),
    )?;
    if scores.len() > 4096 {
        scores.clear();
    }
    for t in 0..r.target_count() {
        let d = r.device(t);
        let score = scores
            .entry(d.score.to_bits())
            .or_insert_with(|| format!("{:.2}", d.score).into());
        w.push(b' ');
        w.extend_from_slice(glyph(d.verdict).as_bytes());
        w.push(b' ');
        w.extend_from_slice(score.as_bytes());
        w.extend_from_slice(b" |");
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

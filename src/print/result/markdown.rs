//! The Markdown printer (`evaluate --format md`): a heading with the page's name, then
//! one table of a row per selection (its key, verdict and recommended target) and a
//! column per target (the verdict glyph and score), then a legend of the glyphs.

use std::io::{self, Write};

use super::formatted::Formatted;
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
            cells: Cells::default(),
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
    cells: Cells,
}

/// Each target's cell (` ● 0.50 |`: its verdict's glyph and its score to two places),
/// made once per verdict and score ([`Formatted`], a lane per verdict).
#[derive(Debug)]
struct Cells(Formatted<CELL>);

const CELL: usize = 32;

impl Default for Cells {
    fn default() -> Cells {
        Cells(Formatted::new(3))
    }
}

impl Cells {
    /// Puts the cell of `d` at the end of `w`.
    #[inline]
    fn put(&mut self, w: &mut Vec<u8>, d: &crate::app::types::DeviceVerdict) {
        let cell = self
            .0
            .get(d.score.to_bits(), usize::from(d.verdict.number()), || {
                format!(" {} {:.2} |", glyph(d.verdict), d.score)
            });
        match cell {
            Ok((text, len)) => {
                let at = w.len();
                w.extend_from_slice(text);
                w.truncate(at + len);
            }
            Err(long) => w.extend_from_slice(long.as_bytes()),
        }
    }
}

impl<W: Write> ResultSink for Markdown<W> {
    fn begin(&mut self, names: &Names, page_name: &str, source_name: &str) -> io::Result<()> {
        markdown_head(&mut self.w, page_name, source_name, names)
    }

    fn selection(&mut self, r: &SelectionResult) -> io::Result<()> {
        self.line.clear();
        markdown_row(&mut self.line, &mut self.cells, r)?;
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
fn markdown_row(w: &mut Vec<u8>, cells: &mut Cells, r: &SelectionResult) -> io::Result<()> {
    let v = r.selection_verdict();
    write!(
        w,
        "| {} | {} {v} | {} |",
        md_cell(&r.selection_key),
        glyph(v),
        md_cell(r.recommended_id().unwrap_or("—")),
    )?;
    w.reserve(r.target_count() * 16 + CELL);
    for d in r.eval.devices.iter() {
        cells.put(w, d);
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

#[cfg(test)]
mod tests {
    use super::{Cells, glyph};
    use crate::app::types::DeviceVerdict;
    use rulebench_core::verdict::{Reason, Verdict};

    /// Cells read from the table are each target's own, whichever slot they share:
    /// 3,000 targets of 700 scores (more than the table's slots) and every verdict,
    /// each asked for twice.
    #[test]
    fn cells_made_once_are_each_targets_own() {
        let mut cells = Cells::default();
        let verdicts = [Verdict::None, Verdict::Partial, Verdict::Full];
        let targets: Vec<DeviceVerdict> = (0..3000u32)
            .map(|i| DeviceVerdict {
                verdict: verdicts[(i * 7 / 3) as usize % 3],
                score: f64::from(i % 700) / 699.0,
                reason: Reason::Partial,
            })
            .collect();
        for round in 0..2 {
            for d in &targets {
                let mut w = Vec::new();
                cells.put(&mut w, d);
                let expected = format!(" {} {:.2} |", glyph(d.verdict), d.score);
                assert_eq!(String::from_utf8(w).unwrap(), expected, "round {round}");
            }
        }
    }
}

//! The table printer (`evaluate --format table`): per selection a head line (the
//! selection verdict, the recommended target, revision and cache), then an aligned table
//! of a line per target: its verdict, score, reason and failing rules, the recommended
//! one starred. With `--all`, a blank line between selections.

use std::io::{self, Write};

use super::sink::ResultSink;
use crate::app::types::SelectionResult;
use crate::print::listing::glyph;
use crate::print::{render_table, sanitize};

/// Builds a [`Table`] printer (it has no options).
#[derive(Clone, Debug, Default)]
pub struct TableBuilder {}

impl TableBuilder {
    /// A table printer.
    pub fn new() -> TableBuilder {
        TableBuilder::default()
    }

    /// The printer, writing to `w`.
    pub fn build<W: Write>(&self, w: W) -> Table<W> {
        Table { w, count: 0 }
    }
}

/// Prints a table per selection.
#[derive(Debug)]
pub struct Table<W> {
    w: W,
    /// Selections written so far.
    count: usize,
}

impl<W: Write> ResultSink for Table<W> {
    fn selection(&mut self, r: &SelectionResult) -> io::Result<()> {
        if self.count > 0 {
            self.w.write_all(b"\n")?;
        }
        self.count += 1;
        table(&mut self.w, r)
    }
}

/// One selection as a table: a line per target, failing rules named.
fn table<W: Write>(w: &mut W, r: &SelectionResult) -> io::Result<()> {
    write!(
        w,
        "{} {}  selection verdict {}  recommended {}  (revision {}, cache {})\n\n",
        sanitize(r.page_id()),
        sanitize(&r.selection_key),
        r.selection_verdict(),
        r.recommended_id()
            .map_or_else(|| "none".to_owned(), sanitize),
        r.revision,
        r.cache.as_str(),
    )?;
    let header: Vec<String> = ["", "TARGET", "VERDICT", "SCORE", "REASON", "FAILING RULES"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = (0..r.target_count())
        .map(|t| {
            let d = r.device(t);
            let failing: Vec<String> = r.failing_rules(t).map(sanitize).collect();
            vec![
                if r.eval.recommended == Some(t) {
                    "★".into()
                } else {
                    String::new()
                },
                sanitize(&r.names.targets[t].id),
                format!("{} {}", glyph(d.verdict), d.verdict),
                format!("{:.2}", d.score),
                d.reason.as_str().to_owned(),
                failing.join(", "),
            ]
        })
        .collect();
    w.write_all(render_table(&header, &rows).as_bytes())
}

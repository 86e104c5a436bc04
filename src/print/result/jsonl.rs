//! The JSON Lines printer (`evaluate --format jsonl`): for one selection, a line of
//! compact JSON per target (the selection key, then the target's entry of `targets[]`);
//! with `--all`, a line per selection holding its whole result JSON, compact.

use std::io::{self, Write};

use serde_json::Value;

use super::json::{Fragments, write_result};
use super::sink::ResultSink;
use crate::app::types::{Names, SelectionResult};

/// Builds a [`Jsonl`] printer.
#[derive(Clone, Debug, Default)]
pub struct JsonlBuilder {
    per_selection: bool,
}

impl JsonlBuilder {
    /// A printer of one line per target.
    pub fn new() -> JsonlBuilder {
        JsonlBuilder::default()
    }

    /// One line per selection, its whole result (`--all`), rather than one per target.
    pub fn per_selection(&mut self, yes: bool) -> &mut JsonlBuilder {
        self.per_selection = yes;
        self
    }

    /// The printer, writing to `w`.
    pub fn build<W: Write>(&self, w: W) -> Jsonl<W> {
        Jsonl {
            w,
            per_selection: self.per_selection,
            fragments: None,
        }
    }
}

/// Prints JSON Lines: a line per target, or a line per selection
/// ([`JsonlBuilder::per_selection`]).
#[derive(Debug)]
pub struct Jsonl<W> {
    w: W,
    per_selection: bool,
    /// The page's compact fragments (per selection only), made at
    /// [`ResultSink::begin`] or from the first selection's names.
    fragments: Option<Fragments>,
}

impl<W: Write> ResultSink for Jsonl<W> {
    fn begin(&mut self, names: &Names, _page_name: &str, _source_name: &str) -> io::Result<()> {
        if self.per_selection {
            self.fragments = Some(Fragments::new(names, None));
        }
        Ok(())
    }

    fn selection(&mut self, r: &SelectionResult) -> io::Result<()> {
        if !self.per_selection {
            return target_lines(&mut self.w, r);
        }
        let f = self
            .fragments
            .get_or_insert_with(|| Fragments::new(&r.names, None));
        write_result(&mut self.w, r, f)?;
        self.w.write_all(b"\n")
    }
}

/// One line of compact JSON per target: the selection key, then the target's entry of
/// `targets[]` (`--select … --format jsonl`).
fn target_lines<W: Write>(w: &mut W, r: &SelectionResult) -> io::Result<()> {
    let all = crate::app::types::Needs::all();
    for t in 0..r.target_count() {
        let mut entry = serde_json::Map::new();
        entry.insert("selectionKey".into(), Value::from(r.selection_key.clone()));
        entry.extend(r.target_value(t, &all));
        let text = serde_json::to_string(&entry).map_err(io::Error::other)?;
        w.write_all(crate::app::text::json_safe(&text).as_bytes())?;
        w.write_all(b"\n")?;
    }
    Ok(())
}

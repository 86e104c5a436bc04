//! The trait every printer of `evaluate`'s results implements: a page's header, then
//! its selections one at a time (streamed, never collected), then the end.

use std::io;

use crate::app::types::{Names, SelectionResult};

/// Receives the results of one page's selections and prints them in one format.
///
/// Call [`begin`](ResultSink::begin) once, [`selection`](ResultSink::selection) once per
/// result as it comes, then [`finish`](ResultSink::finish) once: the whole output has
/// been written when `finish` returns (a printer may buffer until then). A printer keeps
/// at most a batch of results past the call that hands them over (the summary printer
/// makes its bytes a batch at a time), so memory stays bounded by a batch, not by the
/// page.
pub trait ResultSink {
    /// Starts the output of a page's results, labelled by `names` (the page's rules and
    /// targets), `page_name` and `source_name` (the heads of a Markdown table).
    fn begin(&mut self, names: &Names, page_name: &str, source_name: &str) -> io::Result<()> {
        let _ = (names, page_name, source_name);
        Ok(())
    }

    /// Prints one selection's result.
    fn selection(&mut self, r: &SelectionResult) -> io::Result<()>;

    /// Ends the output (closes the JSON array, writes the Markdown legend, flushes CSV).
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Whether more selections would print anything (`--limit` reached: no).
    fn wants_more(&self) -> bool {
        true
    }

    /// Whether this printer reads only each selection's verdict, recommendation and
    /// verdict counts, never a target's verdict: then results may come without them
    /// (`SelectionEval::devices` empty), which a page of many sources computes far
    /// faster. Asked once, after [`begin`](ResultSink::begin).
    fn verdicts_only(&self) -> bool {
        false
    }
}

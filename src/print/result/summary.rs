//! The summary printer (`evaluate --format summary`): a selection's result as compact
//! JSON, its header and, per target, its id, verdict, score, reason and failing rule ids.
//! For one selection each target is on a line of its own; with `--all` each selection
//! is one line.

use std::io::{self, Write};

use serde_json::Value;

use super::json::{json_string, number, write_str};
use super::sink::ResultSink;
use crate::app::types::{Outcome, SelectionResult};

/// Builds a [`Summary`] printer.
#[derive(Clone, Debug, Default)]
pub struct SummaryBuilder {
    per_selection: bool,
}

impl SummaryBuilder {
    /// A printer of a selection's summary with a line per target.
    pub fn new() -> SummaryBuilder {
        SummaryBuilder::default()
    }

    /// Each selection's summary on one line (`--all`), rather than a line per target.
    pub fn per_selection(&mut self, yes: bool) -> &mut SummaryBuilder {
        self.per_selection = yes;
        self
    }

    /// The printer, writing to `w`.
    pub fn build<W: Write>(&self, w: W) -> Summary<W> {
        Summary {
            w,
            per_selection: self.per_selection,
        }
    }
}

/// Prints each selection's summary as compact JSON, a line per target or a line per
/// selection ([`SummaryBuilder::per_selection`]).
#[derive(Debug)]
pub struct Summary<W> {
    w: W,
    per_selection: bool,
}

impl<W: Write> ResultSink for Summary<W> {
    fn selection(&mut self, r: &SelectionResult) -> io::Result<()> {
        summary(&mut self.w, r, self.per_selection)
    }
}

/// The summary of one selection as compact JSON: the header and, per target, its id,
/// verdict, score, reason and failing rule ids (one target per line unless `one_line`).
fn summary<W: Write>(w: &mut W, r: &SelectionResult, one_line: bool) -> io::Result<()> {
    let rule_ids: Vec<Vec<u8>> = r.names.rules.iter().map(|x| json_string(&x.id)).collect();
    let columns: Vec<&[Outcome]> = r.eval.columns.iter().map(|c| &c.outcome[..]).collect();
    let nl: &[u8] = if one_line { b"" } else { b"\n" };
    let mut head = serde_json::Map::new();
    head.insert("pageId".into(), Value::from(r.page_id()));
    head.insert("revisionId".into(), Value::from(r.revision));
    head.insert("cache".into(), Value::from(r.cache.as_str()));
    head.insert("selectionKey".into(), Value::from(r.selection_key.clone()));
    head.insert(
        "selectionVerdict".into(),
        Value::from(r.selection_verdict()),
    );
    head.insert(
        "recommendedTargetId".into(),
        r.recommended_id().map_or(Value::Null, Value::from),
    );
    head.insert("evaluatedAt".into(), Value::from(r.evaluated_at.clone()));
    let text = serde_json::to_string(&head).map_err(io::Error::other)?;
    let text = crate::app::text::json_safe(&text).into_owned();
    // `{…}` → `{…,"targets":[`
    w.write_all(&text.as_bytes()[..text.len() - 1])?;
    w.write_all(b",\"targets\":[")?;
    for t in 0..r.target_count() {
        if t > 0 {
            w.write_all(b",")?;
        }
        w.write_all(nl)?;
        let d = r.device(t);
        w.write_all(b"{\"id\":")?;
        write_str(w, &r.names.targets[t].id)?;
        write!(w, ",\"verdict\":{},\"score\":", d.verdict)?;
        number(w, d.score)?;
        write!(w, ",\"reason\":\"{}\",\"failing\":[", d.reason.as_str())?;
        let mut first = true;
        for (id, column) in rule_ids.iter().zip(&columns) {
            if column[t].counted() == Some(false) {
                if !first {
                    w.write_all(b",")?;
                }
                first = false;
                w.write_all(id)?;
            }
        }
        w.write_all(b"]}")?;
    }
    w.write_all(nl)?;
    w.write_all(b"]}\n")
}

//! The summary printer (`evaluate --format summary`): a selection's result as compact
//! JSON, its header and, per target, its id, verdict, score, reason and failing rule ids.
//! For one selection each target is on a line of its own; with `--all` each selection
//! is one line.

use std::io::{self, Write};

use serde_json::Value;

use super::json::{json_string, number};
use super::per_names::PerNames;
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
            fixed: PerNames::default(),
            out: Vec::new(),
        }
    }
}

/// Prints each selection's summary as compact JSON, a line per target or a line per
/// selection ([`SummaryBuilder::per_selection`]).
#[derive(Debug)]
pub struct Summary<W> {
    w: W,
    per_selection: bool,
    /// What the names give, made once per run: per target `{"id":…,"verdict":`, per
    /// rule its id as a JSON string.
    fixed: PerNames<Fixed>,
    /// The selection being written (one `write_all` per selection).
    out: Vec<u8>,
}

#[derive(Debug)]
struct Fixed {
    targets: Vec<Vec<u8>>,
    rules: Vec<Vec<u8>>,
}

impl<W: Write> ResultSink for Summary<W> {
    fn selection(&mut self, r: &SelectionResult) -> io::Result<()> {
        let fixed = self.fixed.of(&r.names, || Fixed {
            targets: r
                .names
                .targets
                .iter()
                .map(|t| {
                    let mut b = b"{\"id\":".to_vec();
                    b.extend_from_slice(&json_string(&t.id));
                    b.extend_from_slice(b",\"verdict\":");
                    b
                })
                .collect(),
            rules: r.names.rules.iter().map(|x| json_string(&x.id)).collect(),
        });
        self.out.clear();
        summary(&mut self.out, r, fixed, self.per_selection)?;
        self.w.write_all(&self.out)
    }
}

/// The summary of one selection as compact JSON: the header and, per target, its id,
/// verdict, score, reason and failing rule ids (one target per line unless `one_line`).
fn summary(
    out: &mut Vec<u8>,
    r: &SelectionResult,
    fixed: &Fixed,
    one_line: bool,
) -> io::Result<()> {
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
    let text = crate::app::text::json_safe(&text);
    // `{…}` → `{…,"targets":[`
    out.extend_from_slice(&text.as_bytes()[..text.len() - 1]);
    out.extend_from_slice(b",\"targets\":[");
    for t in 0..r.target_count() {
        if t > 0 {
            out.push(b',');
        }
        out.extend_from_slice(nl);
        let d = r.device(t);
        out.extend_from_slice(&fixed.targets[t]);
        out.push(b'0' + d.verdict.number());
        out.extend_from_slice(b",\"score\":");
        number(out, d.score)?;
        out.extend_from_slice(b",\"reason\":\"");
        out.extend_from_slice(d.reason.as_str().as_bytes());
        out.extend_from_slice(b"\",\"failing\":[");
        let mut first = true;
        for (id, column) in fixed.rules.iter().zip(&columns) {
            if column[t].counted() == Some(false) {
                if !first {
                    out.push(b',');
                }
                first = false;
                out.extend_from_slice(id);
            }
        }
        out.extend_from_slice(b"]}");
    }
    out.extend_from_slice(nl);
    out.extend_from_slice(b"]}\n");
    Ok(())
}

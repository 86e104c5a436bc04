//! Aggregates without pairs: per selection, how many targets are at 2, 1 and 0, its
//! verdict and its recommendation, one JSON line each; with `--by FIELD`, one line per
//! selection × value of a target summary field. Computed from the evaluation's verdicts
//! as they come, never from printed rows.

use std::collections::HashMap;
use std::io::{self, Write};

use serde_json::Value;

use super::json::{json_string, write_str};
use super::sink::ResultSink;
use crate::app::types::{Names, SelectionResult, Verdict};

/// Builds a [`Counts`] printer.
#[derive(Debug, Default, Clone)]
pub struct CountsBuilder {
    by: Option<String>,
}

impl CountsBuilder {
    pub fn new() -> CountsBuilder {
        CountsBuilder::default()
    }

    /// Count per value of this target summary (or label) field (`--by FIELD`).
    pub fn by(&mut self, field: Option<String>) -> &mut CountsBuilder {
        self.by = field;
        self
    }

    pub fn build<W: Write>(&self, w: W) -> Counts<W> {
        Counts {
            w,
            by: self.by.clone(),
            groups: None,
            line: Vec::with_capacity(256),
        }
    }
}

/// The targets grouped by a field's value: the group of each target, and each
/// group's `"FIELD":value` text, in order of first appearance.
#[derive(Debug)]
struct Groups {
    of: Vec<u32>,
    heads: Vec<Vec<u8>>,
}

impl Groups {
    fn of(names: &Names, field: &str) -> io::Result<Groups> {
        let at = names.shown.iter().position(|f| f == field).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "--by {field}: not a summary field of the targets (they are: {})",
                    if names.shown.is_empty() {
                        "none".to_owned()
                    } else {
                        names.shown.join(", ")
                    }
                ),
            )
        })?;
        let key = json_string(field);
        let mut index: HashMap<String, u32> = HashMap::new();
        let mut heads = Vec::new();
        let of = names
            .targets
            .iter()
            .map(|t| {
                let value = t.shown.get(at).unwrap_or(&Value::Null);
                let text = crate::app::text::json_safe(&value.to_string()).into_owned();
                let next = index.len() as u32;
                *index.entry(text.clone()).or_insert_with(|| {
                    let mut head = key.clone();
                    head.push(b':');
                    head.extend_from_slice(text.as_bytes());
                    heads.push(head);
                    next
                })
            })
            .collect();
        Ok(Groups { of, heads })
    }
}

/// Prints per selection (and per group of targets) the number of targets at each
/// verdict.
#[derive(Debug)]
pub struct Counts<W> {
    w: W,
    by: Option<String>,
    groups: Option<Groups>,
    /// The line being written (one `write_all` per line).
    line: Vec<u8>,
}

impl<W: Write> Counts<W> {
    fn line(
        &mut self,
        r: &SelectionResult,
        head: Option<&[u8]>,
        tally: [usize; 3],
    ) -> io::Result<()> {
        let l = &mut self.line;
        l.clear();
        l.extend_from_slice(b"{\"selectionKey\":");
        write_str(l, &r.selection_key)?;
        write!(l, ",\"selectionVerdict\":{}", r.selection_verdict())?;
        l.extend_from_slice(b",\"recommendedTargetId\":");
        match r.recommended_id() {
            Some(id) => write_str(l, id)?,
            None => l.extend_from_slice(b"null"),
        }
        if let Some(head) = head {
            l.push(b',');
            l.extend_from_slice(head);
        }
        let [none, partial, full] = tally;
        writeln!(
            l,
            ",\"targets\":{},\"full\":{full},\"partial\":{partial},\"none\":{none}}}",
            full + partial + none
        )?;
        self.w.write_all(l)
    }
}

impl<W: Write> ResultSink for Counts<W> {
    fn begin(&mut self, names: &Names, _page_name: &str, _source_name: &str) -> io::Result<()> {
        if let Some(field) = &self.by {
            self.groups = Some(Groups::of(names, field)?);
        }
        Ok(())
    }

    fn selection(&mut self, r: &SelectionResult) -> io::Result<()> {
        let index = |v: Verdict| usize::from(v.number());
        match self.groups.take() {
            None => self.line(r, None, r.eval.verdict_counts),
            Some(groups) => {
                let mut tallies = vec![[0usize; 3]; groups.heads.len()];
                for (d, &g) in r.eval.devices.iter().zip(&groups.of) {
                    tallies[g as usize][index(d.verdict)] += 1;
                }
                let out = groups
                    .heads
                    .iter()
                    .zip(tallies)
                    .try_for_each(|(head, tally)| self.line(r, Some(head), tally));
                self.groups = Some(groups);
                out
            }
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    /// Without `--by`, a line needs the selection's counts alone.
    fn verdicts_only(&self) -> bool {
        self.by.is_none()
    }
}

//! The summary printer (`evaluate --format summary`): a selection's result as compact
//! JSON, its header and, per target, its id, verdict, score, reason and failing rule ids.
//! For one selection each target is on a line of its own; with `--all` each selection
//! is one line.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::Value;

use super::json::{json_string, number};
use super::per_names::PerNames;
use super::sink::ResultSink;
use crate::app::types::{Column, DeviceVerdict, Names, Outcome, SelectionResult};

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
            bodies: Bodies::default(),
            pending: Vec::new(),
        }
    }
}

/// Prints each selection's summary as compact JSON, a line per target or a line per
/// selection ([`SummaryBuilder::per_selection`]).
#[derive(Debug)]
pub struct Summary<W: Write> {
    w: W,
    per_selection: bool,
    /// What the names give, made once per run: per target `{"id":…,"verdict":`, per
    /// rule its id as a JSON string.
    fixed: PerNames<Fixed>,
    bodies: Bodies,
    /// Selections waiting to be written, a batch at a time: their bytes are made on
    /// every core (the bytes, not the verdicts, are most of a summary's cost).
    pending: Vec<SelectionResult>,
}

/// Selections made at once: up to this many targets' worth (the bytes of a batch are
/// held until written), and at most [`BATCH`] selections.
const BATCH_TARGETS: usize = 1 << 16;
const BATCH: usize = 64;
/// Targets whose failing rules are gathered at once.
const BLOCK: usize = 1024;

/// Below this many targets in a batch, it is made on the calling thread.
const PARALLEL_FROM: usize = 4096;

/// The bytes of a selection's targets already written, by the evaluation they were
/// made from: sources that read the same values get the very same verdicts and columns
/// from the matrix (shared, not copied), so they share these bytes too, and a page of
/// 100,000 sources with a few hundred distinct projections is written at the speed of
/// its bytes. Each entry holds what it was made from, so an address is never reused
/// while its bytes are kept.
#[derive(Debug, Default)]
struct Bodies {
    /// By the address of the verdicts (kept alive by the entry).
    kept: HashMap<usize, Body>,
    bytes: usize,
}

#[derive(Debug)]
struct Body {
    names: Arc<Names>,
    devices: Arc<[DeviceVerdict]>,
    columns: Vec<Arc<Column>>,
    text: Vec<u8>,
}

/// The memory bodies may hold (past it, new ones are written and not kept): their
/// bytes, and the verdicts and columns each keeps alive (counted in full, though the
/// matrix mostly shares them).
const BODY_BYTES: usize = 64 << 20;

impl Bodies {
    /// The kept body of `r`'s evaluation.
    fn of(&self, r: &SelectionResult) -> Option<&[u8]> {
        let b = self.kept.get(&(r.eval.devices.as_ptr() as usize))?;
        let same = Arc::ptr_eq(&b.names, &r.names)
            && Arc::ptr_eq(&b.devices, &r.eval.devices)
            && b.columns.len() == r.eval.columns.len()
            && b.columns
                .iter()
                .zip(&r.eval.columns)
                .all(|(a, b)| Arc::ptr_eq(a, b));
        same.then_some(&b.text[..])
    }

    fn keep(&mut self, r: &SelectionResult, text: &[u8]) {
        // Kept only when the matrix shares its evaluation: a selection evaluated on
        // its own (a page whose sources each read their own values) will not recur.
        let held = text.len()
            + std::mem::size_of_val(&*r.eval.devices)
            + r.eval
                .columns
                .iter()
                .map(|c| c.outcome.len())
                .sum::<usize>();
        if !r.eval.shared || r.eval.devices.is_empty() || self.bytes + held > BODY_BYTES {
            return;
        }
        self.bytes += held;
        self.kept.insert(
            r.eval.devices.as_ptr() as usize,
            Body {
                names: r.names.clone(),
                devices: r.eval.devices.clone(),
                columns: r.eval.columns.clone(),
                text: text.to_vec(),
            },
        );
    }
}

#[derive(Debug)]
struct Fixed {
    targets: Vec<Vec<u8>>,
    rules: Vec<Vec<u8>>,
}

impl Fixed {
    fn of(names: &Names) -> Fixed {
        Fixed {
            targets: names
                .targets
                .iter()
                .map(|t| {
                    let mut b = b"{\"id\":".to_vec();
                    b.extend_from_slice(&json_string(&t.id));
                    b.extend_from_slice(b",\"verdict\":");
                    b
                })
                .collect(),
            rules: names.rules.iter().map(|x| json_string(&x.id)).collect(),
        }
    }
}

impl<W: Write> Summary<W> {
    /// Writes the waiting selections in order; the bytes of those whose body is not
    /// kept are made on every core when the batch is large.
    fn write_pending(&mut self) -> io::Result<()> {
        let Some(first) = self.pending.first() else {
            return Ok(());
        };
        let names = first.names.clone();
        let pending = std::mem::take(&mut self.pending);
        let fixed = self.fixed.of(&names, || Fixed::of(&names));
        let (bodies, per_selection) = (&self.bodies, self.per_selection);
        // Each selection's head, and its body unless one is kept: the bytes, and where
        // the body made starts (`None`: the kept one follows).
        let make = |r: &SelectionResult| -> io::Result<(Vec<u8>, Option<usize>)> {
            let mut out = Vec::new();
            head(&mut out, r)?;
            if bodies.of(r).is_some() {
                return Ok((out, None));
            }
            let at = out.len();
            body(&mut out, r, fixed, per_selection)?;
            Ok((out, Some(at)))
        };
        let targets: usize = pending.iter().map(SelectionResult::target_count).sum();
        let made: Vec<io::Result<(Vec<u8>, Option<usize>)>> = if targets >= PARALLEL_FROM {
            pending.par_iter().map(make).collect()
        } else {
            pending.iter().map(make).collect()
        };
        for (r, made) in pending.iter().zip(made) {
            let (text, at) = made?;
            self.w.write_all(&text)?;
            match at {
                Some(at) => self.bodies.keep(r, &text[at..]),
                None => self
                    .w
                    .write_all(self.bodies.of(r).expect("kept when made"))?,
            }
        }
        Ok(())
    }
}

impl<W: Write> ResultSink for Summary<W> {
    fn selection(&mut self, r: &SelectionResult) -> io::Result<()> {
        // A batch holds results of one page's names.
        if self
            .pending
            .first()
            .is_some_and(|p| !Arc::ptr_eq(&p.names, &r.names))
        {
            self.write_pending()?;
        }
        self.pending.push(r.clone());
        let targets: usize = self.pending.iter().map(SelectionResult::target_count).sum();
        if self.pending.len() >= BATCH || targets >= BATCH_TARGETS {
            self.write_pending()?;
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.write_pending()
    }
}

/// Selections handed over and not yet written go out when the printer is dropped
/// without [`ResultSink::finish`] (errors are lost then).
impl<W: Write> Drop for Summary<W> {
    fn drop(&mut self) {
        let _ = self.write_pending();
    }
}

/// The summary's header of one selection: `{…,"targets":[`.
fn head(out: &mut Vec<u8>, r: &SelectionResult) -> io::Result<()> {
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
    Ok(())
}

/// The rest of one selection's summary: per target, its id, verdict, score, reason and
/// failing rule ids (one target per line unless `one_line`), and the end.
fn body(out: &mut Vec<u8>, r: &SelectionResult, fixed: &Fixed, one_line: bool) -> io::Result<()> {
    let columns: Vec<&[Outcome]> = r.eval.columns.iter().map(|c| &c.outcome[..]).collect();
    let nl: &[u8] = if one_line { b"" } else { b"\n" };
    let n = r.target_count();
    // Room for most bodies at once (growing a body of megabytes copies it again and
    // again).
    out.reserve(n * 160);
    // The failing rules of a block of targets as bits, rule by rule (column-major,
    // branch-free); each target's ids are then read off its set bits.
    let words = columns.len().div_ceil(64);
    let mut failing = vec![0u64; BLOCK * words];
    for from in (0..n).step_by(BLOCK) {
        let block = BLOCK.min(n - from);
        failing.fill(0);
        for (i, column) in columns.iter().enumerate() {
            let (w, bit) = (i / 64, i % 64);
            for (k, &o) in column[from..from + block].iter().enumerate() {
                failing[k * words + w] |= u64::from(o.fails()) << bit;
            }
        }
        for k in 0..block {
            let t = from + k;
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
            for (w, &word) in failing[k * words..(k + 1) * words].iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let i = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    if !first {
                        out.push(b',');
                    }
                    first = false;
                    out.extend_from_slice(&fixed.rules[i]);
                }
            }
            out.extend_from_slice(b"]}");
        }
    }
    out.extend_from_slice(nl);
    out.extend_from_slice(b"]}\n");
    Ok(())
}

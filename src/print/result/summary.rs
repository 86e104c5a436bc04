//! The summary printer (`evaluate --format summary`): a selection's result as compact
//! JSON, its header and, per target, its id, verdict, score, reason and failing rule ids.
//! For one selection each target is on a line of its own; with `--all` each selection
//! is one line.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::{Arc, Mutex, mpsc};

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
            spare: Arc::default(),
            in_flight: None,
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
    /// rule `,"id"` padded to a fixed width.
    fixed: PerNames<Arc<Fixed>>,
    bodies: Bodies,
    /// Selections waiting to be written, a batch at a time: their bytes are made on
    /// every core (the bytes, not the verdicts, are most of a summary's cost).
    pending: Vec<SelectionResult>,
    /// Buffers written out, emptied, for the batches to come.
    spare: Arc<Mutex<Vec<Vec<u8>>>>,
    /// The batch being made on the thread pool while the caller evaluates the next
    /// one: its selections and their bytes, when they are made.
    in_flight: Option<mpsc::Receiver<Made>>,
}

/// A batch's selections, and per selection its bytes (or why they could not be made)
/// and where the body made starts (`None`: the kept one follows).
type Made = (
    Vec<SelectionResult>,
    Vec<io::Result<(Vec<u8>, Option<usize>)>>,
);

/// The most the spare buffers hold, all together.
const SPARE_BYTES: usize = 64 << 20;

/// Selections made at once: up to this many targets' worth (the bytes of a batch are
/// held until written), and at most [`BATCH`] selections.
const BATCH_TARGETS: usize = 1 << 15;
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
        if !r.eval.shared
            || r.eval.devices.is_empty()
            || self.bytes + held > BODY_BYTES
            || self.of(r).is_some()
        {
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
    /// The longest of `targets`.
    longest_target: usize,
    /// Per rule, `,"id"` padded with zeros to [`Fixed::width`] bytes, one after
    /// another: a failing rule's id is one copy of a constant size (its real length,
    /// `lens`, is then kept), not a copy of a length known only when it runs.
    ids: Vec<u8>,
    /// Where each rule's `,"id"` starts in `ids`, and its length.
    starts: Vec<usize>,
    lens: Vec<usize>,
    /// 16, 32 or 64: the padded width of `ids`; 0 when an id is longer (each is then
    /// copied at its length).
    width: usize,
}

impl Fixed {
    fn of(names: &Names) -> Fixed {
        let targets: Vec<Vec<u8>> = names
            .targets
            .iter()
            .map(|t| {
                let mut b = b"{\"id\":".to_vec();
                b.extend_from_slice(&json_string(&t.id));
                b.extend_from_slice(b",\"verdict\":");
                b
            })
            .collect();
        let chunks: Vec<Vec<u8>> = names
            .rules
            .iter()
            .map(|x| {
                let mut c = vec![b','];
                c.extend_from_slice(&json_string(&x.id));
                c
            })
            .collect();
        let longest = chunks.iter().map(Vec::len).max().unwrap_or(0);
        let width = [16, 32, 64]
            .into_iter()
            .find(|w| longest <= *w)
            .unwrap_or(0);
        let mut ids = Vec::new();
        let mut starts = Vec::new();
        for c in &chunks {
            starts.push(ids.len());
            ids.extend_from_slice(c);
            ids.resize(ids.len() + width.saturating_sub(c.len()), 0);
        }
        Fixed {
            longest_target: targets.iter().map(Vec::len).max().unwrap_or(0),
            targets,
            lens: chunks.iter().map(Vec::len).collect(),
            starts,
            ids,
            width,
        }
    }

    /// The most bytes one target's part of a body takes: its id and verdict, the
    /// score, the reason and every rule failing (at the padded width).
    fn target_bound(&self) -> usize {
        let per_rule = if self.width > 0 {
            self.width
        } else {
            self.lens.iter().copied().max().unwrap_or(0)
        };
        self.longest_target + 128 + self.lens.len() * per_rule
    }
}

impl<W: Write> Summary<W> {
    /// Writes the batch being made (waiting for it), then hands the waiting selections
    /// to the thread pool as the next batch: their bytes are made there, on every core
    /// when the batch is large, while the caller evaluates the selections after them.
    fn write_pending(&mut self) -> io::Result<()> {
        self.write_in_flight()?;
        let Some(first) = self.pending.first() else {
            return Ok(());
        };
        let names = first.names.clone();
        let batch = std::mem::take(&mut self.pending);
        let fixed = self
            .fixed
            .of(&names, || Arc::new(Fixed::of(&names)))
            .clone();
        // Bodies kept from batches already written are not made again.
        let kept: Vec<bool> = batch.iter().map(|r| self.bodies.of(r).is_some()).collect();
        let (per_selection, spare) = (self.per_selection, self.spare.clone());
        let (tx, rx) = mpsc::channel();
        self.in_flight = Some(rx);
        let job = move || {
            let make =
                |(r, kept): (&SelectionResult, &bool)| -> io::Result<(Vec<u8>, Option<usize>)> {
                    let mut out = spare
                        .lock()
                        .map_err(|_| io::Error::other("a printer thread panicked"))?
                        .pop()
                        .unwrap_or_default();
                    head(&mut out, r)?;
                    if *kept {
                        return Ok((out, None));
                    }
                    let at = out.len();
                    body(&mut out, r, &fixed, per_selection)?;
                    Ok((out, Some(at)))
                };
            let targets: usize = batch.iter().map(SelectionResult::target_count).sum();
            let made = if targets >= PARALLEL_FROM {
                batch.par_iter().zip(&kept).map(make).collect()
            } else {
                batch.iter().zip(&kept).map(make).collect()
            };
            // The printer may be gone (dropped on an error): nothing to write then.
            let _ = tx.send((batch, made));
        };
        // A printer on one of the pool's own threads makes the batch there: waiting
        // for a job on the pool from inside it could wait for ever.
        if rayon::current_thread_index().is_some() {
            job();
        } else {
            rayon::spawn(job);
        }
        Ok(())
    }

    /// Waits for the batch being made and writes it, keeping the bodies that may
    /// recur and the buffers for the batches to come.
    fn write_in_flight(&mut self) -> io::Result<()> {
        let Some(rx) = self.in_flight.take() else {
            return Ok(());
        };
        let (batch, made) = rx
            .recv()
            .map_err(|_| io::Error::other("a printer thread panicked"))?;
        let mut written = Vec::new();
        for (r, made) in batch.iter().zip(made) {
            let (text, at) = made?;
            self.w.write_all(&text)?;
            match at {
                Some(at) => self.bodies.keep(r, &text[at..]),
                None => self
                    .w
                    .write_all(self.bodies.of(r).expect("kept when made"))?,
            }
            written.push(text);
        }
        // Buffers are made again for the next batch without faulting their pages in
        // again (a body of megabytes).
        let mut spare = self
            .spare
            .lock()
            .map_err(|_| io::Error::other("a printer thread panicked"))?;
        let mut held: usize = spare.iter().map(Vec::capacity).sum();
        for mut text in written {
            if held + text.capacity() <= SPARE_BYTES {
                held += text.capacity();
                text.clear();
                spare.push(text);
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
        self.write_pending()?;
        self.write_in_flight()
    }
}

/// Selections handed over and not yet written go out when the printer is dropped
/// without [`ResultSink::finish`] (errors are lost then).
impl<W: Write> Drop for Summary<W> {
    fn drop(&mut self) {
        let _ = self.write_pending();
        let _ = self.write_in_flight();
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
///
/// Each target's bytes are put at a cursor in a scratch buffer of this thread (kept
/// between calls, so never faulted in again) and copied out a few dozen kilobytes at a
/// time: a failing rule's id is one copy of a constant size ([`Fixed::ids`]), which
/// the compiler makes a move or two, where a `Vec` would call `memcpy` for each.
fn body(out: &mut Vec<u8>, r: &SelectionResult, fixed: &Fixed, one_line: bool) -> io::Result<()> {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with_borrow_mut(|scratch| {
        let need = FLUSH + fixed.target_bound();
        if scratch.len() < need {
            scratch.resize(need, 0);
        }
        body_in(out, scratch, r, fixed, one_line)
    })
}

/// Bytes gathered in the scratch buffer before they are copied out.
const FLUSH: usize = 32 << 10;

fn body_in(
    out: &mut Vec<u8>,
    buf: &mut [u8],
    r: &SelectionResult,
    fixed: &Fixed,
    one_line: bool,
) -> io::Result<()> {
    let columns: Vec<&[Outcome]> = r.eval.columns.iter().map(|c| &c.outcome[..]).collect();
    let n = r.target_count();
    // Room for most bodies at once (growing a body of megabytes copies it again and
    // again).
    out.reserve(n * 160);
    let mut pos = 0;
    let put = |buf: &mut [u8], pos: &mut usize, bytes: &[u8]| {
        buf[*pos..*pos + bytes.len()].copy_from_slice(bytes);
        *pos += bytes.len();
    };
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
            if pos >= FLUSH {
                out.extend_from_slice(&buf[..pos]);
                pos = 0;
            }
            let t = from + k;
            if t > 0 {
                put(buf, &mut pos, b",");
            }
            if !one_line {
                put(buf, &mut pos, b"\n");
            }
            let d = r.device(t);
            put(buf, &mut pos, &fixed.targets[t]);
            put(buf, &mut pos, &[b'0' + d.verdict.number()]);
            put(buf, &mut pos, b",\"score\":");
            let mut rest = &mut buf[pos..];
            let room = rest.len();
            number(&mut rest, d.score)?;
            pos += room - rest.len();
            put(buf, &mut pos, b",\"reason\":\"");
            put(buf, &mut pos, d.reason.as_str().as_bytes());
            put(buf, &mut pos, b"\",\"failing\":");
            // Each id is written with a comma before it; the first comma becomes `[`.
            let open = pos;
            let bits = &failing[k * words..(k + 1) * words];
            pos = match fixed.width {
                16 => ids::<16>(buf, pos, bits, fixed),
                32 => ids::<32>(buf, pos, bits, fixed),
                64 => ids::<64>(buf, pos, bits, fixed),
                _ => ids_at_length(buf, pos, bits, fixed),
            };
            if pos == open {
                put(buf, &mut pos, b"[");
            } else {
                buf[open] = b'[';
            }
            put(buf, &mut pos, b"]}");
        }
    }
    out.extend_from_slice(&buf[..pos]);
    if !one_line {
        out.push(b'\n');
    }
    out.extend_from_slice(b"]}\n");
    Ok(())
}

/// Writes the ids of the set `bits` at `pos` in `buf`, each `,"id"` one copy of `W`
/// bytes; returns the cursor after the last one's real length.
fn ids<const W: usize>(buf: &mut [u8], mut pos: usize, bits: &[u64], fixed: &Fixed) -> usize {
    for (w, &word) in bits.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            let i = w * 64 + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let chunk: &[u8; W] = fixed.ids[i * W..(i + 1) * W]
                .try_into()
                .expect("a padded id");
            buf[pos..pos + W].copy_from_slice(chunk);
            pos += fixed.lens[i];
        }
    }
    pos
}

/// [`ids`] for ids longer than 63 bytes: each copied at its length.
fn ids_at_length(buf: &mut [u8], mut pos: usize, bits: &[u64], fixed: &Fixed) -> usize {
    for (w, &word) in bits.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            let i = w * 64 + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let id = &fixed.ids[fixed.starts[i]..fixed.starts[i] + fixed.lens[i]];
            buf[pos..pos + id.len()].copy_from_slice(id);
            pos += id.len();
        }
    }
    pos
}

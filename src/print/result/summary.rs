//! The summary printer (`evaluate --format summary`): a selection's result as compact
//! JSON, its header and, per target, its id, verdict, score, reason and failing rule ids.
//! For one selection each target is on a line of its own; with `--all` each selection
//! is one line.

use std::collections::HashMap;
use std::io::{self, IoSlice, Write};
use std::sync::{Arc, Mutex, mpsc};

use rayon::prelude::*;
use serde_json::Value;

use super::json::{SCORE_WIDTH, Scores, json_string, with_scores};
use super::per_names::PerNames;
use super::sink::ResultSink;
use crate::app::types::{Column, DeviceVerdict, Names, SelectionResult};

/// The hasher of the profiles' maps (keys made here, not by users).
type Hash = foldhash::fast::FixedState;

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
            profiles: self.per_selection.then(Profiles::default),
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
    /// The bodies made so far, to write again (`--all` only); with the batch being
    /// made while it is.
    profiles: Option<Profiles>,
    /// Selections waiting to be written, a batch at a time: their bytes are made on
    /// every core (the bytes, not the verdicts, are most of a summary's cost).
    pending: Vec<SelectionResult>,
    /// Buffers written out, kept for the batches to come (their bytes written over).
    spare: Arc<Mutex<Vec<Vec<u8>>>>,
    /// The batch being made on the thread pool while the caller evaluates the next
    /// one: its bytes, when they are made.
    in_flight: Option<mpsc::Receiver<Made>>,
}

/// Per selection of a batch, what was made of it (or why it could not be made), and
/// the profiles, with the batch's new ones.
type Made = (Vec<io::Result<Piece>>, Option<Profiles>);

/// What was made of one selection.
enum Piece {
    /// Its summary, whole: the bytes before the `usize` (the rest is room).
    Text(Vec<u8>, usize),
    /// Its header; its body is a profile's, but for its overridden targets' lines
    /// (by target).
    Profile(Vec<u8>, u32, Vec<(usize, Box<[u8]>)>),
}

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

/// The bodies of an `--all` run, made once per profile and written again for every
/// selection of it: sources whose rules read the same values get the very same
/// columns from the matrix (shared, not copied), and a selection's body — per target
/// its id, verdict, score, reason and failing rules — follows from its columns and
/// the page's policies. A page of 100,000 sources has a few thousand profiles, and a
/// profile's targets take a few dozen distinct lines each: a body is kept as its
/// targets' line numbers (4 bytes a target, not the 185 of its text), and written
/// from the lines with vectored writes (a body past the output's buffer goes to
/// `writev` without a copy).
///
/// Kept for one page's names at one revision (another empties it), within
/// [`BODY_BYTES`]. A profile's lines are its columns' verdicts before any override: a
/// selection with overrides of its own is written from its profile but for its
/// overridden targets, whose lines are made for it.
#[derive(Debug, Default)]
struct Profiles {
    of: Option<(Arc<Names>, i64)>,
    /// Each column seen, by its address, and its number: held, so that no other
    /// column is ever made at that address while the profiles are kept.
    columns: HashMap<usize, (Arc<Column>, u32), Hash>,
    /// Each profile's number, by its columns' numbers (`None`: seen once, and made
    /// as text).
    known: HashMap<Box<[u32]>, Option<u32>, Hash>,
    /// How many profiles have numbers.
    count: u32,
    /// How many lines were looked up, and how many of them were new.
    looked_up: usize,
    fresh: usize,
    /// Per profile, per target, its line's number: profile `p`'s at `p × n…`.
    bodies: Vec<u32>,
    /// Per target, its distinct lines' numbers, by what decides the line: the failing
    /// rules' bits, then the verdict and reason, then the score's bits.
    targets: Vec<HashMap<Box<[u64]>, u32, Hash>>,
    /// Every target's distinct lines, `,{"id":…,"failing":[…]}` (a slice each, for a
    /// vectored write), by their numbers.
    lines: Vec<Box<[u8]>>,
    /// What all this holds, roughly.
    bytes: usize,
}

/// What a selection of a batch is made as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Plan {
    Text,
    /// A profile already kept.
    Known(u32),
    /// A profile this batch makes (the first selection of it in the batch).
    New(u32),
}

/// The memory the profiles may hold: past it, new profiles are made as text and not
/// kept (those kept are still written from their lines).
const BODY_BYTES: usize = 64 << 20;

/// What a profile's number costs beyond its targets' line numbers (its key, the
/// map's slot), roughly; and a line's (its key and slot).
const PROFILE_OVERHEAD: usize = 64;
const LINE_OVERHEAD: usize = 48;
/// What a target's index of lines costs before it holds any.
const INDEX_BYTES: usize = 48;

impl Profiles {
    /// Which selections of `batch` are of a kept profile, which make a new one, and
    /// which are made as text. A new profile needs room for its targets' line numbers
    /// and, at worst, a new line for each of them (`line_bound` bytes at most each).
    fn plan(&mut self, batch: &[SelectionResult], line_bound: usize) -> Vec<Plan> {
        let Some(first) = batch.first() else {
            return Vec::new();
        };
        let n = first.names.targets.len();
        if !self.of.as_ref().is_some_and(|(names, revision)| {
            Arc::ptr_eq(names, &first.names) && *revision == first.revision
        }) {
            *self = Profiles {
                of: Some((first.names.clone(), first.revision)),
                ..Profiles::default()
            };
        }
        // The targets' indexes are made with the first profile.
        let indexes = if self.targets.is_empty() {
            n * INDEX_BYTES
        } else {
            0
        };
        let worst = n * (4 + line_bound) + indexes;
        let mut key = Vec::new();
        batch
            .iter()
            .map(|r| {
                // A profile's body is its columns' under the page's policies, for
                // every target and rule, before the selection's own overrides (which
                // force the verdicts of their targets, and of no other).
                let whole = Arc::ptr_eq(&r.names, &first.names)
                    && r.revision == first.revision
                    && r.target_count() == n
                    && r.eval.columns.len() == r.names.rules.len()
                    && r.eval.columns.iter().all(|c| c.outcome.len() == n)
                    && forced_by_overrides_alone(r);
                let room = self.bytes + worst <= BODY_BYTES;
                if !whole || !self.key(r, room, &mut key) {
                    return Plan::Text;
                }
                match self.known.get_mut(&key[..]) {
                    Some(Some(p)) => Plan::Known(*p),
                    // Seen once: made again, this time as a profile.
                    Some(seen) if room => {
                        let p = self.count;
                        self.count += 1;
                        *seen = Some(p);
                        self.bytes += 4 * n;
                        self.index(n);
                        Plan::New(p)
                    }
                    Some(_) => Plan::Text,
                    // Seen first: made as text, and as a profile if seen again (a
                    // page whose sources each read their own values has as many
                    // lines as pairs) — or at once when the profiles made so far
                    // found most of their lines made already.
                    None if room => {
                        let eager =
                            n > 0 && self.looked_up >= 4 * n && self.fresh * 4 <= self.looked_up;
                        let p = eager.then(|| {
                            self.count += 1;
                            self.index(n);
                            self.count - 1
                        });
                        self.known.insert(key.clone().into_boxed_slice(), p);
                        self.bytes += PROFILE_OVERHEAD + 4 * key.len() + p.map_or(0, |_| 4 * n);
                        p.map_or(Plan::Text, Plan::New)
                    }
                    None => Plan::Text,
                }
            })
            .collect()
    }

    /// Makes the `n` targets' indexes of lines, if they are not made.
    fn index(&mut self, n: usize) {
        if self.targets.is_empty() {
            self.targets = (0..n).map(|_| HashMap::default()).collect();
            self.bytes += n * INDEX_BYTES;
        }
    }

    /// Puts `r`'s columns' numbers in `key`, numbering new columns when `room`;
    /// false when a column is new and there is no room.
    fn key(&mut self, r: &SelectionResult, room: bool, key: &mut Vec<u32>) -> bool {
        key.clear();
        for column in &r.eval.columns {
            let at = Arc::as_ptr(column) as usize;
            let number = match self.columns.get(&at) {
                Some((_, number)) => *number,
                None if room => {
                    let number = u32::try_from(self.columns.len()).expect("columns within memory");
                    self.columns.insert(at, (column.clone(), number));
                    self.bytes += 96 + column.outcome.len();
                    number
                }
                None => return false,
            };
            key.push(number);
        }
        true
    }

    /// Makes the bodies of the profiles new in `batch` (in their numbers' order): each
    /// target's line looked up or made, targets a chunk at a time on every core.
    fn make(&mut self, batch: &[SelectionResult], plan: &[Plan], fixed: &Fixed) {
        let new: Vec<&SelectionResult> = batch
            .iter()
            .zip(plan)
            .filter(|(_, p)| matches!(p, Plan::New(_)))
            .map(|(r, _)| r)
            .collect();
        let Some(first) = new.first() else {
            return;
        };
        let n = first.target_count();
        let words = first.eval.columns.len().div_ceil(64);
        // Chunks of targets, each with its targets' indexes: per new profile, the
        // chunk's line numbers; and the lines new in the chunk (numbered from
        // `FRESH` until they are put after the lines kept).
        const CHUNK: usize = 256;
        const FRESH: u32 = 1 << 31;
        let mut made: Vec<(Vec<u32>, Vec<FreshLine>)> = self
            .targets
            .par_chunks_mut(CHUNK)
            .enumerate()
            .map(|(c, targets)| {
                let from = c * CHUNK;
                let mut numbers = Vec::with_capacity(new.len() * targets.len());
                let mut fresh = Vec::new();
                let mut failing = vec![0u64; targets.len() * words];
                let mut key = Vec::with_capacity(words + 2);
                let mut bits = vec![0; words];
                LINE.with_borrow_mut(|buf| {
                    with_scores(|scores| {
                        let need = fixed.target_bound();
                        if buf.len() < need {
                            buf.resize(need, 0);
                        }
                        let block = targets.len();
                        for r in &new {
                            failing_bits(&mut failing, r, from, block, words);
                            for (k, index) in targets.iter_mut().enumerate() {
                                let t = from + k;
                                // Before the selection's overrides: every selection of
                                // the profile writes these lines.
                                let d = &r.eval.devices.shared()[t];
                                let bits = bits_of(&failing, k, block, &mut bits);
                                key.clear();
                                key.extend_from_slice(bits);
                                key.push(u64::from(d.verdict.number()) | (d.reason as u64) << 8);
                                key.push(d.score.to_bits());
                                let number = match index.get(&key[..]) {
                                    Some(&number) => number,
                                    None => {
                                        let end = target(buf, 0, t, d, bits, fixed, scores, true);
                                        let number = FRESH
                                            | u32::try_from(fresh.len())
                                                .expect("lines within memory");
                                        let key: Box<[u64]> = key.clone().into();
                                        index.insert(key.clone(), number);
                                        fresh.push((t, key, buf[..end].into()));
                                        number
                                    }
                                };
                                numbers.push(number);
                            }
                        }
                    })
                });
                (numbers, fresh)
            })
            .collect();
        self.looked_up += new.len() * n;
        self.fresh += made.iter().map(|(_, fresh)| fresh.len()).sum::<usize>();
        // The new lines numbered after those kept, chunk by chunk.
        let mut bases = Vec::with_capacity(made.len());
        for (_, fresh) in &mut made {
            bases.push(u32::try_from(self.lines.len()).expect("lines within memory"));
            for (t, key, line) in fresh.drain(..) {
                let number = self.targets[t].get_mut(&key).expect("indexed when made");
                *number = u32::try_from(self.lines.len()).expect("lines within memory");
                self.bytes += line.len() + 8 * key.len() + LINE_OVERHEAD;
                self.lines.push(line);
            }
        }
        self.bodies.reserve(new.len() * n);
        for p in 0..new.len() {
            for (c, (numbers, _)) in made.iter().enumerate() {
                let len = CHUNK.min(n - c * CHUNK);
                self.bodies
                    .extend(numbers[p * len..(p + 1) * len].iter().map(|&number| {
                        if number & FRESH == 0 {
                            number
                        } else {
                            bases[c] + (number & !FRESH)
                        }
                    }));
            }
        }
    }

    /// Profile `p`'s body, as slices of its lines, after `head`; the lines of
    /// `forced` (by target) in place of the profile's for their targets.
    fn write<W: Write>(
        &self,
        w: &mut W,
        head: &[u8],
        p: u32,
        forced: &[(usize, Box<[u8]>)],
    ) -> io::Result<()> {
        let n = self.targets.len();
        let body = &self.bodies[p as usize * n..(p as usize + 1) * n];
        let mut slices = Vec::with_capacity(n + 2);
        slices.push(IoSlice::new(head));
        slices.extend(
            body.iter()
                .map(|&line| IoSlice::new(&self.lines[line as usize])),
        );
        for (t, line) in forced {
            slices[1 + t] = IoSlice::new(line);
        }
        slices.push(IoSlice::new(b"]}\n"));
        write_all_vectored(w, &mut slices)
    }
}

/// A line a chunk of targets made: its target, what decides it (its key in the
/// target's index) and its bytes.
type FreshLine = (usize, Box<[u64]>, Box<[u8]>);

/// Writes every byte of `slices`, as few writes as the writer takes.
fn write_all_vectored<W: Write>(w: &mut W, slices: &mut [IoSlice<'_>]) -> io::Result<()> {
    let mut slices = slices;
    IoSlice::advance_slices(&mut slices, 0);
    while !slices.is_empty() {
        // At most as many as one `writev` takes: a writer adds up the lengths of
        // all it is handed, every call.
        match w.write_vectored(&slices[..slices.len().min(1024)]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
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
        let mut profiles = self.profiles.take();
        let (per_selection, spare) = (self.per_selection, self.spare.clone());
        let (tx, rx) = mpsc::channel();
        self.in_flight = Some(rx);
        let job = move || {
            let plan = match profiles.as_mut() {
                Some(profiles) => {
                    let words = batch[0].eval.columns.len().div_ceil(64);
                    profiles.plan(
                        &batch,
                        fixed.target_bound() + 8 * (words + 2) + LINE_OVERHEAD,
                    )
                }
                None => vec![Plan::Text; batch.len()],
            };
            let make = |(r, plan): (&SelectionResult, &Plan)| -> io::Result<Piece> {
                if let Plan::Known(p) | Plan::New(p) = *plan {
                    let mut out = Vec::with_capacity(256);
                    head(&mut out, r)?;
                    return Ok(Piece::Profile(out, p, forced_lines(r, &fixed)));
                }
                // A buffer of a batch written, its bytes written over.
                let mut out = spare
                    .lock()
                    .map_err(|_| io::Error::other("a printer thread panicked"))?
                    .pop()
                    .unwrap_or_default();
                let mut text = Vec::with_capacity(256);
                head(&mut text, r)?;
                room(&mut out, text.len());
                out[..text.len()].copy_from_slice(&text);
                let end = body(&mut out, text.len(), r, &fixed, per_selection);
                Ok(Piece::Text(out, end))
            };
            let texts: usize = batch
                .iter()
                .zip(&plan)
                .filter(|(_, p)| matches!(p, Plan::Text))
                .map(|(r, _)| r.target_count())
                .sum();
            let made = if texts >= PARALLEL_FROM {
                batch.par_iter().zip(&plan).map(make).collect()
            } else {
                batch.iter().zip(&plan).map(make).collect()
            };
            if let Some(profiles) = profiles.as_mut() {
                profiles.make(&batch, &plan, &fixed);
            }
            // The printer may be gone (dropped on an error): nothing to write then.
            let _ = tx.send((made, profiles));
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

    /// Waits for the batch being made and writes it, keeping the profiles and the
    /// buffers for the batches to come.
    fn write_in_flight(&mut self) -> io::Result<()> {
        let Some(rx) = self.in_flight.take() else {
            return Ok(());
        };
        let (made, profiles) = rx
            .recv()
            .map_err(|_| io::Error::other("a printer thread panicked"))?;
        self.profiles = profiles;
        let mut written = Vec::new();
        for made in made {
            match made? {
                Piece::Text(text, end) => {
                    self.w.write_all(&text[..end])?;
                    written.push(text);
                }
                Piece::Profile(head, p, forced) => self
                    .profiles
                    .as_ref()
                    .expect("made with the profiles")
                    .write(&mut self.w, &head, p, &forced)?,
            }
        }
        // Buffers are kept for the next batches, their bytes written over: never
        // zeroed or faulted in again (a body of megabytes).
        let mut spare = self
            .spare
            .lock()
            .map_err(|_| io::Error::other("a printer thread panicked"))?;
        let mut held: usize = spare.iter().map(Vec::capacity).sum();
        for text in written {
            if held + text.capacity() <= SPARE_BYTES {
                held += text.capacity();
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

thread_local! {
    /// Where this thread puts a profile's new line.
    static LINE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The rest of one selection's summary, put in `out` at `pos`: per target, its id,
/// verdict, score, reason and failing rule ids (one target per line unless
/// `one_line`), and the end. Returns the cursor after it.
///
/// `out` is room, its length what it has of it (a buffer kept between batches keeps
/// its bytes, which are written over and never zeroed or faulted in again), grown only
/// past it. Each target's bytes are put at the cursor: a failing rule's id is one copy
/// of a constant size ([`Fixed::ids`]), which the compiler makes a move or two, where
/// a `Vec` would call `memcpy` for each.
fn body(
    out: &mut Vec<u8>,
    pos: usize,
    r: &SelectionResult,
    fixed: &Fixed,
    one_line: bool,
) -> usize {
    with_scores(|scores| body_in(out, pos, scores, r, fixed, one_line))
}

/// Makes `out` at least `len` bytes long.
fn room(out: &mut Vec<u8>, len: usize) {
    if out.len() < len {
        out.resize(len, 0);
    }
}

fn body_in(
    out: &mut Vec<u8>,
    mut pos: usize,
    scores: &mut Scores,
    r: &SelectionResult,
    fixed: &Fixed,
    one_line: bool,
) -> usize {
    let n = r.target_count();
    let bound = fixed.target_bound();
    let start = pos;
    let words = r.eval.columns.len().div_ceil(64);
    let mut failing = vec![0u64; BLOCK * words];
    let mut bits = vec![0; words];
    for from in (0..n).step_by(BLOCK) {
        let block = BLOCK.min(n - from);
        failing_bits(&mut failing, r, from, block, words);
        for k in 0..block {
            let t = from + k;
            if out.len() < pos + bound {
                // Room for the targets left at the bytes a target took so far (a
                // body of megabytes grown a little at a time is copied again and
                // again; grown too much, it holds pages it does not use).
                let per_target = (pos - start) / t.max(1) + 16;
                room(out, pos + bound + (n - t) * per_target.max(64));
            }
            let bits = bits_of(&failing, k, block, &mut bits);
            pos = target(out, pos, t, r.device(t), bits, fixed, scores, one_line);
        }
    }
    let end: &[u8] = if one_line { b"]}\n" } else { b"\n]}\n" };
    room(out, pos + end.len());
    out[pos..pos + end.len()].copy_from_slice(end);
    pos + end.len()
}

/// Whether the selection's targets' verdicts are those its columns give but for its
/// overrides' targets, forced: its body is its profile's, but for those targets. (A
/// result read from the cache holds every verdict as it was written, overridden or not.)
fn forced_by_overrides_alone(r: &SelectionResult) -> bool {
    let overridden = r.eval.devices.overridden().iter().map(|(t, _)| *t);
    r.eval
        .overrides
        .all()
        .iter()
        .map(|f| f.target)
        .eq(overridden)
}

/// The lines of a selection's overridden targets (as a profile's lines are made), by
/// target.
fn forced_lines(r: &SelectionResult, fixed: &Fixed) -> Vec<(usize, Box<[u8]>)> {
    let forced = r.eval.devices.overridden();
    if forced.is_empty() {
        return Vec::new();
    }
    let words = r.eval.columns.len().div_ceil(64);
    let (mut failing, mut bits) = (vec![0u64; words], vec![0; words]);
    // Made where a profile's new lines are (this thread's buffer), then copied out.
    LINE.with_borrow_mut(|buf| {
        room(buf, fixed.target_bound());
        with_scores(|scores| {
            forced
                .iter()
                .map(|(t, d)| {
                    failing_bits(&mut failing, r, *t, 1, words);
                    let bits = bits_of(&failing, 0, 1, &mut bits);
                    let end = target(buf, 0, *t, d, bits, fixed, scores, true);
                    (*t, buf[..end].into())
                })
                .collect()
        })
    })
}

/// The failing rules of targets `from..from + block` as bits, `words` words a target,
/// gathered rule by rule (branch-free): word `w` of target `k` at `w × block + k`, so
/// that each rule's pass over its column is a run the compiler vectorizes.
fn failing_bits(failing: &mut [u64], r: &SelectionResult, from: usize, block: usize, words: usize) {
    failing[..block * words].fill(0);
    for (i, column) in r.eval.columns.iter().enumerate() {
        let (w, bit) = (i / 64, i % 64);
        let row = &mut failing[w * block..(w + 1) * block];
        for (f, &o) in row.iter_mut().zip(&column.outcome[from..from + block]) {
            *f |= u64::from(o.fails()) << bit;
        }
    }
}

/// Target `k`'s words of `failing`, as [`failing_bits`] made them for `block` targets.
fn bits_of<'a>(failing: &[u64], k: usize, block: usize, bits: &'a mut [u64]) -> &'a [u64] {
    for (w, b) in bits.iter_mut().enumerate() {
        *b = failing[w * block + k];
    }
    bits
}

/// Puts target `t`'s part of a body at `pos` in `buf` (with room for
/// [`Fixed::target_bound`] bytes): the comma before it (and a newline unless
/// `one_line`), its id, verdict, score, reason and the failing rules of `bits`.
/// Returns the cursor after it.
#[allow(clippy::too_many_arguments)]
fn target(
    buf: &mut [u8],
    mut pos: usize,
    t: usize,
    d: &DeviceVerdict,
    bits: &[u64],
    fixed: &Fixed,
    scores: &mut Scores,
    one_line: bool,
) -> usize {
    let put = |buf: &mut [u8], pos: &mut usize, bytes: &[u8]| {
        buf[*pos..*pos + bytes.len()].copy_from_slice(bytes);
        *pos += bytes.len();
    };
    if t > 0 {
        put(buf, &mut pos, b",");
    }
    if !one_line {
        put(buf, &mut pos, b"\n");
    }
    put(buf, &mut pos, &fixed.targets[t]);
    put(buf, &mut pos, &[b'0' + d.verdict.number()]);
    put(buf, &mut pos, b",\"score\":");
    let (score, len) = scores.padded(d.score);
    buf[pos..pos + SCORE_WIDTH].copy_from_slice(score);
    pos += len;
    put(buf, &mut pos, b",\"reason\":\"");
    put(buf, &mut pos, d.reason.as_str().as_bytes());
    put(buf, &mut pos, b"\",\"failing\":");
    // Each id is written with a comma before it; the first comma becomes `[`.
    let open = pos;
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
    pos
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

/// [`ids`] for ids whose `,"id"` (escaped) is longer than 64 bytes: each copied at its length.
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

#[cfg(test)]
mod tests {
    use super::{BODY_BYTES, Plan, Profiles};
    use crate::app::synth::{self, Spread};
    use crate::app::types::SelectionResult;

    /// Sources that read the same values, of a page of 3,000 targets.
    fn twins() -> Vec<SelectionResult> {
        let dir = tempfile::tempdir().unwrap();
        let mut app = crate::app::App::open(&dir.path().join("rb.db")).unwrap();
        let mut page = synth::page(3000, 5, 6, Spread::Realistic, 4);
        synth::repeat_sources(&mut page, 1);
        app.import(&serde_json::to_string(&page).unwrap(), "twins.json", false)
            .unwrap();
        app.evaluate_all(&page.id).unwrap().collect()
    }

    /// A profile is made only while the memory left holds a new line for each of its
    /// targets: one whose lines could pass the budget is made as text, and nothing of
    /// it is kept.
    #[test]
    fn profiles_are_made_only_within_their_memory() {
        let batch = twins();
        // A new line could take a 1,000th of the budget: 3,000 of them do not fit.
        let plan = Profiles::default().plan(&batch, BODY_BYTES / 1000);
        assert!(plan.iter().all(|p| *p == Plan::Text), "{plan:?}");
        // With room, the second of the twins makes the profile and the rest are of it.
        let mut profiles = Profiles::default();
        let plan = profiles.plan(&batch, 200);
        assert_eq!(plan[..3], [Plan::Text, Plan::New(0), Plan::Known(0)]);
        assert!(profiles.bytes < BODY_BYTES);
    }
}

//! Work heavier than a frame, off the key thread: every source's selection verdict and
//! the page's assertions, recomputed after a change on a copy of the page that the
//! worker keeps in step.
//!
//! The workbench [`Jobs::submit`]s the page after every change; each submission gets
//! the next *generation*. The worker takes the newest of a burst (a short debounce),
//! brings its own page and matrix up to date (a changed rule recompiles that rule only;
//! rows are sent only when they changed), and answers with results tagged with the
//! generation they were computed for. [`Jobs::poll`] drops every result older than the
//! newest submission, so a slow result never overwrites a newer state. A computation
//! that sees a newer submission arriving stops and starts over on it.
//!
//! In [`Mode::Inline`] the same computation runs inside `submit` (scripted use and
//! tests that want each key's effect at once).

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::thread::JoinHandle;
use std::time::Duration;

use rulebench_core::assertions::{self, Limits, Report};
use rulebench_core::coverage::Coverage;

use super::expectations::LinkedRun;
use rulebench_core::matrix::Matrix;
use rulebench_core::model::{Override, Page, Row, Side};
use rulebench_core::result::{Names, SelectionResult};
use rulebench_core::verdict::Verdict;

/// How long the worker waits for more submissions before it computes.
const DEBOUNCE: Duration = Duration::from_millis(30);

/// Where the work runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// On a worker thread; results arrive through [`Jobs::poll`].
    Background,
    /// Inside [`Jobs::submit`].
    Inline,
}

/// A result, tagged with the generation of the page it was computed for.
#[derive(Debug, Clone)]
pub enum JobResult {
    /// The selection verdict of every source row, in row order.
    Verdicts {
        generation: u64,
        verdicts: Vec<Verdict>,
        /// Per rule, over every pair of the current rows: `Some(true)` when it passes
        /// for all of them, `Some(false)` when it fails for all, else `None` (the lint
        /// `constant-over-data`, live).
        constant: Vec<Option<bool>>,
        /// How long bringing the worker's page up to date and computing them took.
        took: Duration,
    },
    /// The page's assertions run on every selection they name; `None` when the page
    /// has none; an error when they do not compile.
    Tests {
        generation: u64,
        report: Option<Result<Report, String>>,
        /// How the assertions cover the rules (`test --coverage`), on a page small
        /// enough ([`COVERAGE_BUDGET`]) with assertions that compile.
        coverage: Option<Box<Coverage>>,
        /// The page's linked tables of expected outcomes, each checked (read again
        /// from its file: an edit of the table shows at the next run).
        linked: Vec<LinkedRun>,
        took: Duration,
    },
}

/// The most pairs × rules whose coverage the background work computes after each
/// change (past it, `rulebench test --coverage` does): the sample pages are far below.
pub const COVERAGE_BUDGET: usize = 200_000;

impl JobResult {
    pub fn generation(&self) -> u64 {
        match self {
            JobResult::Verdicts { generation, .. } | JobResult::Tests { generation, .. } => {
                *generation
            }
        }
    }

    /// A line for `--profile`: what, for which generation, how long.
    pub fn describe(&self) -> String {
        match self {
            JobResult::Verdicts {
                generation,
                verdicts,
                took,
                ..
            } => format!(
                "job=verdicts generation={generation} sources={} ms={:.3}",
                verdicts.len(),
                took.as_secs_f64() * 1e3
            ),
            JobResult::Tests {
                generation, took, ..
            } => format!(
                "job=assertions generation={generation} ms={:.3}",
                took.as_secs_f64() * 1e3
            ),
        }
    }
}

/// One submission: the page without its rows or overrides, the rows when they all
/// changed, the rows that cell edits changed (applied after them, in order), and the
/// overrides when they changed (a page may have 100,000: not copied per keystroke).
struct Snapshot {
    generation: u64,
    revision: i64,
    page: Page,
    rows: Option<Arc<(Vec<Row>, Vec<Row>)>>,
    cells: Vec<(Side, usize, Row)>,
    overrides: Option<Vec<Override>>,
}

/// The worker's copy of the page and its matrix.
#[derive(Default)]
struct Worker {
    page: Option<Page>,
    matrix: Option<Matrix>,
}

impl Worker {
    /// Brings the page and the matrix to a snapshot: rows replaced when sent, rules
    /// that changed recompiled, policies and overrides re-read.
    fn apply(&mut self, snap: &Snapshot) -> Result<(), String> {
        let mut page = snap.page.clone();
        let overrides_changed = snap.overrides.is_some();
        page.overrides = match (&snap.overrides, self.page.as_mut()) {
            (Some(overrides), _) => overrides.clone(),
            (None, Some(old)) => std::mem::take(&mut old.overrides),
            (None, None) => return Err("no overrides yet".into()),
        };
        match (&snap.rows, self.page.take()) {
            (Some(rows), _) => {
                page.source.rows = rows.0.clone();
                page.target.rows = rows.1.clone();
                self.matrix = None;
            }
            (None, Some(old)) => {
                page.source.rows = old.source.rows;
                page.target.rows = old.target.rows;
                if let Some(m) = &mut self.matrix {
                    if old.rules.len() == page.rules.len() {
                        for (i, (was, now)) in old.rules.iter().zip(&page.rules).enumerate() {
                            if was.logic != now.logic {
                                m.replace_rule(i, now).map_err(|e| e.to_string())?;
                            } else if was.required != now.required || was.weight != now.weight {
                                m.set_rule_weight(i, now.required, now.weight);
                            }
                        }
                        // Only what changed: policies empty the memo, and overrides are
                        // placed by hashing their keys (100,000 on some pages).
                        if old.device_policy != page.device_policy
                            || old.selection_policy != page.selection_policy
                        {
                            m.set_policies(&page.device_policy, &page.selection_policy);
                        }
                        if overrides_changed {
                            m.set_overrides(&page);
                        }
                    } else {
                        self.matrix = None;
                    }
                }
            }
            (None, None) => return Err("no rows yet".into()),
        }
        for (side, i, row) in &snap.cells {
            let Some(old) = page.dataset(*side).rows.get(*i) else {
                continue;
            };
            let changed: Vec<String> = row
                .iter()
                .filter(|(k, v)| old.get(*k) != Some(*v))
                .map(|(k, _)| k.clone())
                .chain(old.keys().filter(|k| !row.contains_key(*k)).cloned())
                .collect();
            page.dataset_mut(*side).rows[*i] = row.clone();
            if let Some(m) = &mut self.matrix {
                m.replace_row(*side, *i, page.dataset(*side), row, &changed);
            }
        }
        if self.matrix.is_none() {
            self.matrix = Some(Matrix::new(&page).map_err(|e| e.to_string())?);
        }
        self.page = Some(page);
        Ok(())
    }

    /// Every source's selection verdict; `None` when `stop` says a newer submission came.
    #[allow(clippy::type_complexity)]
    fn verdicts(
        &mut self,
        stop: &mut dyn FnMut() -> bool,
    ) -> Option<(Vec<Verdict>, Vec<Option<bool>>)> {
        let (Some(page), Some(m)) = (&self.page, &mut self.matrix) else {
            return Some((vec![], vec![]));
        };
        let nt = page.target.rows.len();
        let mut out = Vec::with_capacity(page.source.rows.len());
        // Per rule: seen a pass, seen a fail.
        let mut seen = vec![(false, false); page.rules.len()];
        for s in 0..page.source.rows.len() {
            if stop() {
                return None;
            }
            // The selection's verdict and the columns: no target's verdict is read.
            let eval = m.evaluate_verdicts(s);
            for (r, col) in eval.columns.iter().enumerate() {
                if let Some((pass, fail)) = seen.get_mut(r) {
                    *pass |= col.passes > 0;
                    *fail |= col.passes < nt;
                }
            }
            out.push(eval.selection_verdict);
        }
        let constant = if page.source.rows.is_empty() || nt == 0 {
            vec![None; page.rules.len()]
        } else {
            seen.iter()
                .map(|&(pass, fail)| (pass != fail).then_some(pass))
                .collect()
        };
        Some((out, constant))
    }

    /// The page's assertions on the current state.
    fn tests(&mut self, revision: i64) -> Option<Result<Report, String>> {
        let (Some(page), Some(m)) = (&self.page, &mut self.matrix) else {
            return None;
        };
        if page.assertions.is_empty() {
            return None;
        }
        let limits = Limits::default();
        let compiled = match assertions::compile_all(page, &limits) {
            Ok(c) => c,
            Err(d) => {
                let text: Vec<String> = d.iter().map(ToString::to_string).collect();
                return Some(Err(text.join("; ")));
            }
        };
        let at = super::timestamp();
        let names = Arc::new(Names::of(page));
        let results = assertions::run_compiled(&compiled, page, &limits, |s| {
            Ok::<_, std::convert::Infallible>(SelectionResult::new(
                page,
                names.clone(),
                m.evaluate(s),
                revision,
                &at,
            ))
        })
        .unwrap_or_else(|never| match never {});
        Some(Ok(Report::new(&page.id, revision, &at, results)))
    }

    /// Applies a snapshot and computes its results (`None` if stopped by a newer one).
    fn run(&mut self, snap: &Snapshot, stop: &mut dyn FnMut() -> bool) -> Option<Vec<JobResult>> {
        let generation = snap.generation;
        let started = std::time::Instant::now();
        if let Err(e) = self.apply(snap) {
            return Some(vec![JobResult::Tests {
                generation,
                report: Some(Err(e)),
                coverage: None,
                linked: Vec::new(),
                took: started.elapsed(),
            }]);
        }
        let (verdicts, constant) = self.verdicts(stop)?;
        let mut out = vec![JobResult::Verdicts {
            generation,
            verdicts,
            constant,
            took: started.elapsed(),
        }];
        if stop() {
            return None;
        }
        let started = std::time::Instant::now();
        let report = self.tests(snap.revision);
        let coverage = match (&report, &self.page) {
            (Some(Ok(_)), Some(page)) if !stop() => coverage_of(page),
            _ => None,
        };
        // On the worker's own matrix, table by table while no newer state waits.
        let linked = match (&self.page, &mut self.matrix) {
            (Some(page), matrix) if !stop() => super::expectations::check_linked(
                page,
                snap.revision,
                std::path::Path::new(""),
                matrix.as_mut(),
                &mut || !stop(),
            ),
            _ => Vec::new(),
        };
        out.push(JobResult::Tests {
            generation,
            report,
            coverage,
            linked,
            took: started.elapsed(),
        });
        Some(out)
    }
}

/// The coverage of a page's rules by its assertions, when the page is within
/// [`COVERAGE_BUDGET`].
fn coverage_of(page: &Page) -> Option<Box<Coverage>> {
    let pairs = page.source.rows.len() * page.target.rows.len();
    if pairs.saturating_mul(page.rules.len().max(1)) > COVERAGE_BUDGET {
        return None;
    }
    rulebench_core::coverage::coverage(page, &Limits::default())
        .ok()
        .map(Box::new)
}

/// The background work of one open page.
pub struct Jobs {
    mode: Mode,
    generation: u64,
    /// The generation the last results were computed for.
    done: u64,
    tx: Option<Sender<Snapshot>>,
    rx: Option<Receiver<JobResult>>,
    handle: Option<JoinHandle<()>>,
    inline: Worker,
    ready: Vec<JobResult>,
    /// What was submitted last: the page without rows or overrides, its revision, and
    /// the stamps of its rows and overrides ([`Jobs::sync`]).
    last: Option<(Page, i64, Stamps)>,
}

/// Names a state of a page's rows and one of its overrides: each changes whenever they
/// do (a reload, a cell edit; an override set or cleared). They are what tells the
/// background work that rows or overrides changed, so that a keystroke does not compare
/// a page's 100,000 overrides with the last ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stamps {
    pub rows: u64,
    pub overrides: u64,
}

impl Jobs {
    /// Starts the jobs of a page: its rows are copied to the worker once. `stamps` name
    /// this state of the rows and overrides (see [`Jobs::sync`]).
    pub fn start(mode: Mode, page: &Page, revision: i64, stamps: Stamps) -> Jobs {
        let mut jobs = Jobs {
            mode,
            generation: 0,
            done: 0,
            tx: None,
            rx: None,
            handle: None,
            inline: Worker::default(),
            ready: Vec::new(),
            last: None,
        };
        if mode == Mode::Background {
            let (tx, worker_rx) = mpsc::channel::<Snapshot>();
            let (worker_tx, rx) = mpsc::channel::<JobResult>();
            let handle = std::thread::Builder::new()
                .name("rulebench-jobs".into())
                .spawn(move || work(worker_rx, worker_tx))
                .expect("a thread for background jobs");
            jobs.tx = Some(tx);
            jobs.rx = Some(rx);
            jobs.handle = Some(handle);
        }
        jobs.sync(page, revision, stamps);
        jobs
    }

    /// The page changed: recompute in the background. `rows_changed` sends the rows
    /// too (a cell edit, a reload); otherwise only rules, policies, overrides and
    /// assertions travel. Returns the new generation.
    pub fn submit(&mut self, page: &Page, revision: i64, rows_changed: bool) -> u64 {
        self.send(page, revision, rows_changed, true, Vec::new())
    }

    fn send(
        &mut self,
        page: &Page,
        revision: i64,
        rows_changed: bool,
        overrides_changed: bool,
        cells: Vec<(Side, usize, Row)>,
    ) -> u64 {
        self.generation += 1;
        let rows =
            rows_changed.then(|| Arc::new((page.source.rows.clone(), page.target.rows.clone())));
        let snap = Snapshot {
            generation: self.generation,
            revision,
            page: page_meta(page),
            rows,
            cells: if rows_changed { Vec::new() } else { cells },
            // With the rows too: a worker that has no page yet gets all of it.
            overrides: (overrides_changed || rows_changed).then(|| page.overrides.clone()),
        };
        match self.mode {
            Mode::Inline => {
                if let Some(results) = self.inline.run(&snap, &mut || false) {
                    self.ready.extend(results);
                }
            }
            Mode::Background => {
                if let Some(tx) = &self.tx {
                    // A worker that died leaves the results stale; the panes say so.
                    let _ = tx.send(snap);
                }
            }
        }
        self.generation
    }

    /// Submits the page if it differs from the last submission: its rows when their
    /// stamp moved (a reload, a cell edit), its overrides when theirs did, and its
    /// rules, policies and assertions when any of them (or the revision) changed.
    /// Returns whether it submitted.
    pub fn sync(&mut self, page: &Page, revision: i64, stamps: Stamps) -> bool {
        self.sync_with(page, revision, stamps, Vec::new())
    }

    /// [`Jobs::sync`], with the rows that cell edits changed since the last call.
    pub fn sync_with(
        &mut self,
        page: &Page,
        revision: i64,
        stamps: Stamps,
        cells: Vec<(Side, usize, Row)>,
    ) -> bool {
        let rows_changed = self
            .last
            .as_ref()
            .is_none_or(|(_, _, s)| s.rows != stamps.rows);
        let overrides_changed = self
            .last
            .as_ref()
            .is_none_or(|(_, _, s)| s.overrides != stamps.overrides);
        let meta_changed = overrides_changed
            || self.last.as_ref().is_none_or(|(last, rev, _)| {
                *rev != revision
                    || last.rules != page.rules
                    || last.device_policy != page.device_policy
                    || last.selection_policy != page.selection_policy
                    || last.assertions != page.assertions
            });
        if !(rows_changed || meta_changed || !cells.is_empty()) {
            return false;
        }
        self.send(page, revision, rows_changed, overrides_changed, cells);
        self.last = Some((page_meta(page), revision, stamps));
        true
    }

    /// The newest generation submitted.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether results of the newest generation are still to come.
    pub fn pending(&self) -> bool {
        self.done < self.generation
    }

    /// Results that arrived, for the newest generation only: older ones are dropped.
    pub fn poll(&mut self) -> Vec<JobResult> {
        if let Some(rx) = &self.rx {
            while let Ok(r) = rx.try_recv() {
                self.ready.push(r);
            }
        }
        let current = self.generation;
        let fresh: Vec<JobResult> = std::mem::take(&mut self.ready)
            .into_iter()
            .filter(|r| r.generation() == current)
            .collect();
        if fresh.iter().any(|r| matches!(r, JobResult::Tests { .. })) {
            self.done = current;
        }
        fresh
    }

    /// Waits (up to `limit`) until the newest generation's results are in; returns them.
    pub fn settle(&mut self, limit: Duration) -> Vec<JobResult> {
        let deadline = std::time::Instant::now() + limit;
        let mut out = self.poll();
        while self.pending() && std::time::Instant::now() < deadline {
            if let Some(rx) = &self.rx {
                match rx.recv_timeout(Duration::from_millis(20)) {
                    Ok(r) => self.ready.push(r),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            }
            out.extend(self.poll());
        }
        out
    }
}

impl Drop for Jobs {
    fn drop(&mut self) {
        // Closing the channel ends the worker; it is not waited for (a long computation
        // ends on its own and its results go nowhere).
        self.tx = None;
        self.handle = None;
    }
}

/// A page without its rows or overrides (cloned per submission: rules, policies,
/// assertions).
fn page_meta(page: &Page) -> Page {
    Page {
        format: page.format.clone(),
        id: page.id.clone(),
        name: page.name.clone(),
        description: page.description.clone(),
        organization: page.organization.clone(),
        source: page.source.without_rows(),
        target: page.target.without_rows(),
        rules: page.rules.clone(),
        device_policy: page.device_policy.clone(),
        selection_policy: page.selection_policy.clone(),
        overrides: Vec::new(),
        assertions: page.assertions.clone(),
        expectations: page.expectations.clone(),
    }
}

/// The worker: newest submission of a burst, computed, its results sent.
fn work(rx: Receiver<Snapshot>, tx: Sender<JobResult>) {
    let mut worker = Worker::default();
    let mut next: Option<Snapshot> = None;
    loop {
        let mut snap = match next.take() {
            Some(s) => s,
            None => match rx.recv() {
                Ok(s) => s,
                Err(_) => return,
            },
        };
        // Debounce: take the newest of a burst, keeping the newest rows sent.
        loop {
            match rx.recv_timeout(DEBOUNCE) {
                Ok(newer) => snap = merge(snap, newer),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        let mut newer: Option<Snapshot> = None;
        let mut stop = || {
            if newer.is_some() {
                return true;
            }
            match rx.try_recv() {
                Ok(s) => {
                    newer = Some(s);
                    true
                }
                Err(TryRecvError::Empty) => false,
                Err(TryRecvError::Disconnected) => true,
            }
        };
        let results = worker.run(&snap, &mut stop);
        match newer {
            // Start over on the newer submission: this one's rows, if it brought any,
            // are in the worker's page already.
            Some(n) => next = Some(n),
            None => {
                for r in results.into_iter().flatten() {
                    if tx.send(r).is_err() {
                        return;
                    }
                }
            }
        }
    }
}

/// The newer of two submissions, with the newest rows either sent.
fn merge(older: Snapshot, mut newer: Snapshot) -> Snapshot {
    if newer.overrides.is_none() {
        newer.overrides = older.overrides;
    }
    if newer.rows.is_none() {
        newer.rows = older.rows;
        let mut cells = older.cells;
        cells.append(&mut newer.cells);
        newer.cells = cells;
    }
    newer
}

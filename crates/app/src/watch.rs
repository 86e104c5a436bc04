//! Live reload of linked dataset files.
//!
//! A [`Watcher`] watches the files a page's datasets link (`"file"` in the page file,
//! or `dataset import --link`) and reloads a dataset when its file changes: one
//! transaction, one new revision. Changes are debounced ([`DEBOUNCE`]). A file that
//! becomes invalid keeps the last good data; a deleted file is reported, never read as
//! empty. What happened arrives as [`Reload`] events on a channel that a front polls
//! (`rulebench watch` prints them; the workbench reloads its page).
//!
//! The watcher has its own database connection (SQLite in WAL mode lets the workbench
//! keep reading and writing meanwhile). Parent directories are watched rather than the
//! files, so editors that save by writing a new file and renaming it are seen too.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};

use super::dataset::Reloaded;
use super::{App, AppError, Result};
use rulebench_core::model::Side;

/// How long a file must stay quiet after a change before it is read.
pub const DEBOUNCE: Duration = Duration::from_millis(300);

/// How often the worker looks at its stop flag when nothing happens.
const TICK: Duration = Duration::from_millis(100);

/// What happened to a linked file.
#[derive(Debug, Clone, PartialEq)]
pub enum Reload {
    /// The file changed and its rows are stored as a new revision.
    Reloaded {
        side: Side,
        file: PathBuf,
        revision: i64,
        rows: usize,
    },
    /// The file cannot be imported (`message` says where and why); the last good data stays.
    Failed {
        side: Side,
        file: PathBuf,
        message: String,
    },
    /// The file is gone; the last good data stays.
    Deleted { side: Side, file: PathBuf },
    /// A reload is under way: `fraction` of it (0.0–1.0) is done.
    Progress {
        side: Side,
        file: PathBuf,
        fraction: f64,
    },
    /// A linked table of expected outcomes changed (or went): check it again.
    Expectations { file: PathBuf },
}

/// Watches the linked files of one page until dropped.
pub struct Watcher {
    page_id: String,
    files: Vec<(Side, PathBuf)>,
    tables: Vec<PathBuf>,
    events: Receiver<Reload>,
    stop: Arc<AtomicBool>,
    notify: Option<RecommendedWatcher>,
    worker: Option<JoinHandle<()>>,
}

impl Watcher {
    /// Starts watching the linked files of `page_id` in the database at `db`. First
    /// brings each dataset in step with its file (a file changed while nobody watched
    /// is reloaded; a missing one is reported). Fails when the page links no file.
    pub fn start(db: &Path, page_id: &str) -> Result<Watcher> {
        let app = App::open(db)?;
        let files = app.linked_files(page_id)?;
        let tables = app.linked_tables(page_id)?;
        if files.is_empty() && tables.is_empty() {
            return Err(AppError::Usage(format!(
                "page `{page_id}` links no dataset file and no table of expected outcomes (hint: `rulebench dataset import {page_id} target FILE --link`, `rulebench test {page_id} --expect FILE --link`, or \"file\" on a dataset in the page file)"
            )));
        }
        let (raw_tx, raw_rx) = mpsc::channel();
        let mut notify = notify::recommended_watcher(raw_tx)
            .map_err(|e| AppError::Usage(format!("cannot watch files: {e}")))?;
        let mut dirs: Vec<PathBuf> = files.iter().map(|(_, f)| parent_dir(f)).collect();
        dirs.sort();
        dirs.dedup();
        for dir in &dirs {
            notify
                .watch(dir, RecursiveMode::NonRecursive)
                .map_err(|e| AppError::Usage(format!("cannot watch {}: {e}", dir.display())))?;
        }
        // A table whose directory cannot be watched (gone, another machine's path) is
        // not watched; the rest are (its check says what is wrong with it).
        let mut table_dirs: Vec<PathBuf> = tables.iter().map(|f| parent_dir(f)).collect();
        table_dirs.sort();
        table_dirs.dedup();
        for dir in table_dirs.iter().filter(|d| !dirs.contains(d)) {
            let _ = notify.watch(dir, RecursiveMode::NonRecursive);
        }
        let (tx, events) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let worker = {
            let (stop, page_id) = (stop.clone(), page_id.to_owned());
            let (files, tables) = (files.clone(), tables.clone());
            std::thread::Builder::new()
                .name(format!("watch {page_id}"))
                .spawn(move || Worker::new(app, page_id, files, tables, tx).run(&raw_rx, &stop))
                .map_err(|e| AppError::Usage(format!("cannot start the watcher: {e}")))?
        };
        Ok(Watcher {
            page_id: page_id.to_owned(),
            files,
            tables,
            events,
            stop,
            notify: Some(notify),
            worker: Some(worker),
        })
    }

    pub fn page_id(&self) -> &str {
        &self.page_id
    }

    /// The watched files, by side.
    pub fn files(&self) -> &[(Side, PathBuf)] {
        &self.files
    }

    /// The watched tables of expected outcomes.
    pub fn tables(&self) -> &[PathBuf] {
        &self.tables
    }

    /// The next event, if one is waiting.
    pub fn try_recv(&self) -> Option<Reload> {
        self.events.try_recv().ok()
    }

    /// The next event, waiting at most `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Reload> {
        self.events.recv_timeout(timeout).ok()
    }

    /// The event channel itself (to iterate or select on).
    pub fn events(&self) -> &Receiver<Reload> {
        &self.events
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        drop(self.notify.take());
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

fn parent_dir(file: &Path) -> PathBuf {
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned())
}

/// The state of one file, so that a lasting condition is reported once.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Unknown,
    Good,
    Deleted,
    Failed(String),
}

struct Watched {
    side: Side,
    file: PathBuf,
    dir: PathBuf,
    state: State,
}

impl Watched {
    fn matches(&self, path: &Path) -> bool {
        same_file(path, &self.file, &self.dir)
    }
}

/// Whether an event's `path` is `file` (in `dir`, its directory as watched).
fn same_file(path: &Path, file: &Path, dir: &Path) -> bool {
    if path == file {
        return true;
    }
    if path.file_name() != file.file_name() {
        return false;
    }
    path.parent()
        .is_some_and(|p| p == dir || parent_dir(path) == dir)
}

struct Worker {
    app: App,
    page_id: String,
    files: Vec<Watched>,
    /// The tables of expected outcomes: (file, its directory).
    tables: Vec<(PathBuf, PathBuf)>,
    out: Sender<Reload>,
}

impl Worker {
    fn new(
        app: App,
        page_id: String,
        files: Vec<(Side, PathBuf)>,
        tables: Vec<PathBuf>,
        out: Sender<Reload>,
    ) -> Self {
        let tables = tables
            .into_iter()
            .map(|f| {
                let dir = parent_dir(&f);
                (f, dir)
            })
            .collect();
        let files = files
            .into_iter()
            .map(|(side, file)| Watched {
                side,
                dir: parent_dir(&file),
                file,
                state: State::Unknown,
            })
            .collect();
        Worker {
            app,
            page_id,
            files,
            tables,
            out,
        }
    }

    fn run(mut self, raw: &Receiver<notify::Result<notify::Event>>, stop: &AtomicBool) {
        for i in 0..self.files.len() {
            if self.sync(i).is_err() {
                return;
            }
        }
        let mut due: HashMap<usize, Instant> = HashMap::new();
        // Tables that changed, by index, and when they are quiet enough to check.
        let mut tables_due: HashMap<usize, Instant> = HashMap::new();
        while !stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            let wait = due
                .values()
                .chain(tables_due.values())
                .map(|t| t.saturating_duration_since(now))
                .min()
                .map_or(TICK, |d| d.min(TICK));
            match raw.recv_timeout(wait) {
                Ok(Ok(event)) => {
                    if !matches!(event.kind, EventKind::Access(_)) {
                        for (i, w) in self.files.iter().enumerate() {
                            if event.paths.iter().any(|p| w.matches(p)) {
                                due.insert(i, Instant::now() + DEBOUNCE);
                            }
                        }
                        for (i, (file, dir)) in self.tables.iter().enumerate() {
                            if event.paths.iter().any(|p| same_file(p, file, dir)) {
                                tables_due.insert(i, Instant::now() + DEBOUNCE);
                            }
                        }
                    }
                }
                Ok(Err(e)) => {
                    // The watch itself failed (e.g. the directory went away): say so once
                    // per file and look at every file again after a pause.
                    let messages: Vec<String> = self
                        .files
                        .iter()
                        .map(|w| format!("watching {}: {e}", w.file.display()))
                        .collect();
                    for (i, message) in messages.into_iter().enumerate() {
                        if self.failed(i, message, true).is_err() {
                            return;
                        }
                        due.insert(i, Instant::now() + DEBOUNCE);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            let now = Instant::now();
            let ready: Vec<usize> = due
                .iter()
                .filter(|(_, t)| **t <= now)
                .map(|(i, _)| *i)
                .collect();
            for i in ready {
                due.remove(&i);
                if self.sync(i).is_err() {
                    return;
                }
            }
            let ready: Vec<usize> = tables_due
                .iter()
                .filter(|(_, t)| **t <= now)
                .map(|(i, _)| *i)
                .collect();
            for i in ready {
                tables_due.remove(&i);
                let file = self.tables[i].0.clone();
                if self.send(Reload::Expectations { file }).is_err() {
                    return;
                }
            }
        }
    }

    fn send(&self, event: Reload) -> std::result::Result<(), ()> {
        self.out.send(event).map_err(|_| ())
    }

    /// Reports a failure; with `once`, not again while the same failure lasts.
    fn failed(&mut self, i: usize, message: String, once: bool) -> std::result::Result<(), ()> {
        let w = &self.files[i];
        if once && w.state == State::Failed(message.clone()) {
            return Ok(());
        }
        let event = Reload::Failed {
            side: w.side,
            file: w.file.clone(),
            message: message.clone(),
        };
        self.files[i].state = State::Failed(message);
        self.send(event)
    }

    /// Brings dataset `i` in step with its file. Err when nobody listens any more.
    fn sync(&mut self, i: usize) -> std::result::Result<(), ()> {
        let (side, file) = (self.files[i].side, self.files[i].file.clone());
        if !file.exists() {
            if self.files[i].state == State::Deleted {
                return Ok(());
            }
            self.files[i].state = State::Deleted;
            return self.send(Reload::Deleted { side, file });
        }
        let (out, app, page_id) = (&self.out, &mut self.app, &self.page_id);
        let mut last = -1.0;
        let mut report = |p: crate::dataset::Progress| {
            use crate::dataset::Progress as P;
            // Parsing is the first half, writing the second. Small files parse in a
            // blink (and most re-reads change nothing): only big ones report parsing.
            let fraction = match p {
                P::Parsing { total, .. } if total < 1_000_000 => return,
                P::Parsing { done, total } => 0.5 * done as f64 / total.max(1) as f64,
                P::Validating => 0.5,
                P::Writing { done, total } => 0.5 + 0.5 * done as f64 / total.max(1) as f64,
            };
            if fraction - last >= 0.05 {
                last = fraction;
                let _ = out.send(Reload::Progress {
                    side,
                    file: file.clone(),
                    fraction,
                });
            }
        };
        let outcome = app.reload_linked_with(page_id, side, &mut report);
        if last >= 0.0 && !matches!(outcome, Ok(Reloaded::Changed { .. })) {
            // Progress was shown but nothing will follow it: close it.
            let _ = self.send(Reload::Progress {
                side,
                file: file.clone(),
                fraction: 1.0,
            });
        }
        match outcome {
            Ok(Reloaded::Changed { revision, rows }) => {
                self.files[i].state = State::Good;
                self.send(Reload::Reloaded {
                    side,
                    file,
                    revision,
                    rows,
                })
            }
            Ok(Reloaded::Unchanged { .. }) => {
                self.files[i].state = State::Good;
                Ok(())
            }
            // Deleted between the look and the read: reported as deleted.
            Err(AppError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                self.files[i].state = State::Deleted;
                self.send(Reload::Deleted { side, file })
            }
            Err(e) => self.failed(i, e.to_string(), false),
        }
    }
}

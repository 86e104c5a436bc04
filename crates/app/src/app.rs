//! The application: one database, opened; pages imported, read, checked, exported and
//! changed, each change one transaction that says what it touched.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use rulebench_core::diag::{Diagnostic, did_you_mean, parse_json};
use rulebench_core::matrix::{ArenaRows, Matrix};
use rulebench_core::model::{Condition, KeyHash, Override, Page, Rule, Side, key_hash};
use rulebench_core::predicates::{self};
use rulebench_core::result::{Names, SelectionResult};
use rulebench_core::validate::{self, Schema};
use rulebench_store::{self as store, Store, StoreError};

use crate::conflict::{Conflict, ConflictOn};
use crate::error::{AppError, Result, some_of};
use crate::{export, policy};
use rulebench_store::PageSummary;

/// The sample pages every new database starts with (embedded in the binary).
pub const SAMPLE_PAGES: &[(&str, &str)] = &[
    (
        "sample-pages/llm-chat-clients.json",
        include_str!("../../../sample-pages/llm-chat-clients.json"),
    ),
    (
        "sample-pages/provider-capabilities.json",
        include_str!("../../../sample-pages/provider-capabilities.json"),
    ),
    (
        "sample-pages/loan-eligibility.json",
        include_str!("../../../sample-pages/loan-eligibility.json"),
    ),
];

/// A valid page's diagnostics with the lint that needs its data evaluated (a rule
/// constant over the current rows).
pub(crate) fn with_data_lint(page: &Page, mut diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    if !diags.iter().any(Diagnostic::is_error)
        && let Ok(mut matrix) = Matrix::new(page)
    {
        diags.extend(data_lints(page, &mut matrix));
    }
    diags
}

/// The warnings that need the page evaluated: rules constant over the current rows,
/// and the analysis (`rulebench analyze`) — a rule the analysis finds constant over any
/// row is said so once, by the analysis.
pub(crate) fn data_lints(page: &Page, matrix: &mut Matrix) -> Vec<Diagnostic> {
    use rulebench_core::analyze;
    let schema = rulebench_core::schema::Schema::of(page);
    let analysis = analyze::analyze(page, &schema, matrix);
    let constant: Vec<String> = analysis
        .findings
        .iter()
        .filter(|f| matches!(f.kind, analyze::Kind::NeverTrue | analyze::Kind::AlwaysTrue))
        .filter_map(|f| f.rule_index.map(|r| format!("/rules/{r}/logic")))
        .collect();
    let mut out: Vec<Diagnostic> = rulebench_core::lint::constant_over_data(page, matrix)
        .into_iter()
        .filter(|d| !constant.contains(&d.pointer))
        .collect();
    out.extend(analyze::diagnostics(&analysis));
    out
}

/// Where the database lives when neither `--db` nor `$RULEBENCH_DB` says.
pub fn default_db_path() -> PathBuf {
    directories::ProjectDirs::from("", "", "rulebench")
        .map(|d| d.data_dir().join("rulebench.db"))
        .unwrap_or_else(|| PathBuf::from("rulebench.db"))
}

/// Now, as the result JSON writes it.
pub fn timestamp() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The evaluations of every source row of a page, in row order ([`App::evaluate_all`]).
pub struct Evaluations {
    /// The page, without the rows of either side (they are in the matrix).
    page: Page,
    /// The source rows' keys, in order.
    keys: Vec<String>,
    revision: i64,
    matrix: Matrix,
    names: Arc<Names>,
    at: String,
    next: usize,
    /// Results without their targets' verdicts ([`Evaluations::verdicts_only`]).
    verdicts_only: bool,
}

impl Evaluations {
    /// Whether to yield results without their targets' verdicts: each selection's
    /// verdict, recommendation and verdict counts, with `devices` and `overrides`
    /// empty (what an aggregate reads; far faster on a page of many sources).
    pub fn verdicts_only(&mut self, yes: bool) {
        self.verdicts_only = yes;
    }

    /// The page evaluated, without its rows (`len` says how many sources it has).
    pub fn page(&self) -> &Page {
        &self.page
    }

    /// The names shared by every result.
    pub fn names(&self) -> &Arc<Names> {
        &self.names
    }

    /// How many selections there are.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Iterator for Evaluations {
    type Item = SelectionResult;

    fn next(&mut self) -> Option<SelectionResult> {
        let s = self.next;
        let key = self.keys.get(s)?.clone();
        self.next += 1;
        Some(SelectionResult {
            revision: self.revision,
            cache: rulebench_core::result::CacheState::Miss,
            selection_key: key,
            evaluated_at: self.at.clone(),
            names: self.names.clone(),
            eval: if self.verdicts_only {
                self.matrix.evaluate_verdicts(s)
            } else {
                self.matrix.evaluate(s)
            },
        })
    }
}

/// A side's stored rows (key, keyHash, JSON text) in the engine's form.
fn parse_stored(
    d: &rulebench_core::model::Dataset,
    stored: &[(String, String, String)],
    what: &str,
) -> Result<ArenaRows> {
    ArenaRows::parse(d, stored.iter().map(|(_, _, text)| text.as_str())).map_err(|message| {
        AppError::Store(StoreError::Unreadable {
            what: what.into(),
            message,
        })
    })
}

/// A source row from its stored text (`key` names it in the error).
fn source_row(key: &str, text: &str) -> Result<rulebench_core::model::Row> {
    serde_json::from_str(text).map_err(|e| {
        AppError::Store(StoreError::Unreadable {
            what: format!("source row {key}"),
            message: e.to_string(),
        })
    })
}

/// The label of a source row of `page` from its stored text.
fn source_label(page: &Page, key: &str, text: &str) -> Result<String> {
    Ok(page.source.row_label(&source_row(key, text)?))
}

/// What an import did.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub page_id: String,
    pub revision: i64,
    pub warnings: Vec<Diagnostic>,
}

/// The application: one open database.
pub struct App {
    pub(crate) store: Store,
}

/// A page named on the command line ([`App::load_ref`]).
#[derive(Debug, Clone, Copy)]
pub enum PageRef<'a> {
    /// A page file's text (embedded rows; linked files are not read).
    Text { text: &'a str, origin: &'a str },
    /// A stored page, by id, or a revision of one (`PAGE@N`, `PAGE@-K`).
    Stored(&'a str),
}

/// What `rulebench db` shows.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DbInfo {
    pub path: PathBuf,
    pub schema_version: i64,
    /// The file with its write-ahead log, in bytes.
    pub bytes: u64,
    pub read_only: bool,
    pub pages: Vec<PageSummary>,
}

/// How [`App::open_with`] treats a database that is not there yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenOptions {
    /// Create the file's directory when missing (the default location); a path the
    /// user named must be in a directory that exists.
    pub create_dir: bool,
    /// Seed a new database with the sample pages.
    pub seed: bool,
}

/// A page id as shell completion offers it, the shell inserting it into the command
/// line as typed text: a slug as it is; an id from before ids were slugs single-quoted
/// (the one quoting every supported shell reads literally); none for an id a shell or
/// terminal could read otherwise (a control, bidi or zero-width character, a quote or
/// a backslash): such a page is named by typing (and best renamed: `page rename`).
pub fn completion_word(id: &str) -> Option<String> {
    if rulebench_core::model::is_page_id(id) {
        return Some(id.to_owned());
    }
    if id.chars().any(rulebench_core::text::is_unsafe) || id.contains(['\'', '\\']) {
        return None;
    }
    Some(format!("'{id}'"))
}

/// A dataset cell as typed in the workbench (`field=value`): the value as JSON when it
/// reads as JSON that stays exact, else a string; JSON with a key written twice is
/// refused, as everywhere.
pub fn parse_cell(text: &str) -> std::result::Result<(String, Value), String> {
    use rulebench_core::diag::TextProblem;
    let usage = || "type field=value (the value as JSON, else a string)".to_owned();
    let (field, value) = text.split_once('=').ok_or_else(usage)?;
    let field = field.trim();
    if field.is_empty() {
        return Err(usage());
    }
    let value = value.trim();
    let problem = rulebench_core::diag::prescan(value, rulebench_core::diag::MAX_TEXT_DEPTH);
    if let Some((_, column, p @ TextProblem::DuplicateKey { .. })) = &problem {
        return Err(format!("{field}: column {column}: {}", p.message()));
    }
    let value = serde_json::from_str(value)
        .ok()
        .filter(|_| problem.is_none())
        .unwrap_or_else(|| Value::String(value.to_owned()));
    Ok((field.to_owned(), value))
}

/// Whether `path` is the database at `db` or one of SQLite's files beside it (by device
/// and inode where the system says; else by canonical path). Only `stat`s: nothing is
/// opened.
pub fn is_database_file(db: &Path, path: &Path) -> bool {
    let same = |a: &Path, b: &Path| -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
                return x.dev() == y.dev() && x.ino() == y.ino();
            }
        }
        match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        }
    };
    ["", "-wal", "-shm", "-journal"].iter().any(|suffix| {
        let mut s = db.as_os_str().to_owned();
        s.push(suffix);
        same(Path::new(&s), path)
    })
}

/// A database opened by [`App::open_with`], and what opening it did.
pub struct Opened {
    pub app: App,
    /// The database file was created now.
    pub created: bool,
    /// How many sample pages were seeded into it now.
    pub seeded: usize,
}

impl App {
    /// Opens a database, creating it (and its directory) and seeding it with the sample
    /// pages when new.
    pub fn open(path: &Path) -> Result<App> {
        Ok(Self::open_with(
            path,
            OpenOptions {
                create_dir: true,
                seed: true,
            },
        )?
        .app)
    }

    /// Opens a database as `options` say; reports whether it was created and seeded.
    pub fn open_with(path: &Path, options: OpenOptions) -> Result<Opened> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.is_dir()
        {
            if !options.create_dir {
                return Err(AppError::Usage(format!(
                    "database {}: the directory {} does not exist (create it, or choose another --db)",
                    path.display(),
                    dir.display()
                )));
            }
            std::fs::create_dir_all(dir).map_err(|source| AppError::Io {
                path: dir.display().to_string(),
                source,
            })?;
        }
        // A 0-byte file (say, made by `touch`) is a new database as much as a missing one.
        let created = std::fs::metadata(path).map_or(true, |m| m.len() == 0);
        // Whether the file may be written is asked of SQLite itself, never by opening the
        // file here: closing any descriptor of a file drops every POSIX lock this process
        // holds on it, the shared locks of its open connections included, and another
        // SQLite client then takes the database for unused and deletes its write-ahead
        // log under them (acknowledged saves lost).
        let store = match Store::open(path) {
            Ok(store) => store,
            Err(e) if !created && e.is_not_writable() => {
                // A file this process may not write, or one in a directory where its
                // write-ahead log cannot be made: the read commands work on it, changes
                // are refused naming the file.
                return Ok(Opened {
                    app: Self::open_read_only(path)?,
                    created: false,
                    seeded: 0,
                });
            }
            Err(e) => return Err(e.into()),
        };
        let mut app = App { store };
        let mut seeded = 0;
        if app.store.meta("seeded")?.is_none() && app.store.page_ids()?.is_empty() {
            if options.seed {
                for (origin, text) in SAMPLE_PAGES {
                    // Seeded from the embedded rows and linked to no file: the binary
                    // holds no path of the machine it was built on. (Importing
                    // `sample-pages/provider-capabilities.json` links its CSV.)
                    let mut page: Value = serde_json::from_str(text).expect("a sample page");
                    for side in ["source", "target"] {
                        if let Some(d) = page.get_mut(side).and_then(Value::as_object_mut) {
                            d.remove("file");
                        }
                    }
                    app.import_linked(&page.to_string(), origin, false, Path::new("."), false)?;
                    seeded += 1;
                }
            }
            // Seeded once (or chosen empty): removing every page later seeds nothing.
            app.store.set_meta("seeded", &timestamp())?;
        }
        Ok(Opened {
            app,
            created,
            seeded,
        })
    }

    /// Opens an existing database read-only ([`Store::open_read_only`]): no seeding,
    /// no migration, nothing written; changes are refused with a clear error.
    pub fn open_read_only(path: &Path) -> Result<App> {
        Ok(App {
            store: Store::open_read_only(path)?,
        })
    }

    /// Another connection to the same database (a session of its own, a background
    /// thread): no seeding, no migration left to do.
    pub fn reopen(&self) -> Result<App> {
        let path = self.store.path();
        Ok(App {
            store: if self.store.is_read_only() {
                Store::open_read_only(path)?
            } else {
                Store::open(path)?
            },
        })
    }

    /// Makes every later change refuse a page that is not at `revision` when the
    /// change runs, listing the revisions since (`--if-revision`; `None` clears it).
    pub fn expect_revision(&mut self, revision: Option<i64>) {
        self.store.expect_revision(revision);
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Whether the database was opened read-only (nothing can be saved).
    pub fn is_read_only(&self) -> bool {
        self.store.is_read_only()
    }

    pub fn pages(&self) -> Result<Vec<PageSummary>> {
        Ok(self.store.list_pages()?)
    }

    /// The database: its file, schema version, size and pages (`rulebench db`).
    pub fn info(&self) -> Result<DbInfo> {
        let path = self.store.path().to_path_buf();
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let with = |suffix: &str| {
            let mut s = path.clone().into_os_string();
            s.push(suffix);
            size(Path::new(&s))
        };
        Ok(DbInfo {
            bytes: size(&path) + with("-wal") + with("-shm"),
            schema_version: self.store.user_version()?,
            read_only: self.store.is_read_only(),
            pages: self.pages()?,
            path,
        })
    }

    /// A page named on the command line: a page file's text, or a stored page.
    pub fn load_ref(&self, r: PageRef<'_>) -> Result<Page> {
        match r {
            PageRef::Text { text, origin } => Ok(Self::parse_page(text, origin)?.0),
            PageRef::Stored(spec) => Ok(self.page_spec(spec)?.0),
        }
    }

    /// What changed from `old` to `new` and what it does to outcomes
    /// ([`rulebench_core::diff`]): every selection on both sides, or those named (by key,
    /// keyHash, id or label, found in `old`).
    pub fn diff(
        &self,
        old: PageRef<'_>,
        new: PageRef<'_>,
        select: Option<&str>,
    ) -> Result<rulebench_core::diff::PageDiff> {
        let (old, new) = (self.load_ref(old)?, self.load_ref(new)?);
        let which = match select {
            None => rulebench_core::diff::Selections::All,
            Some(sel) => {
                let s = Self::find_row(&old, Side::Source, sel)?;
                rulebench_core::diff::Selections::Keys(vec![
                    old.source.row_key(&old.source.rows[s]),
                ])
            }
        };
        rulebench_core::diff::diff(&old, &new, &which).map_err(AppError::Usage)
    }

    /// Deletes a page and everything it owns (rows, rules, history, cached results).
    pub fn delete_page(&mut self, id: &str) -> Result<()> {
        // Not there: `page` says so, with a did-you-mean.
        self.page(id)?;
        self.store.delete_page(id)?;
        Ok(())
    }

    /// Gives a page a new id (a slug: lowercase letters, digits and single hyphens, as
    /// rulebench makes them); returns the new revision.
    pub fn rename_page(&mut self, id: &str, new_id: &str) -> Result<i64> {
        if id == new_id {
            return Err(AppError::Usage(format!("page `{id}` has that id already")));
        }
        if !rulebench_core::model::is_page_id(new_id) {
            return Err(AppError::Usage(format!(
                "`{new_id}` is not a page id: use lowercase letters, digits and single hyphens (say `{}`)",
                rulebench_core::model::slugify(new_id)
            )));
        }
        self.page(id)?;
        match self.store.rename_page(id, new_id) {
            Ok(Some(revision)) => Ok(revision),
            Ok(None) => Err(AppError::NotFound {
                what: "page",
                id: id.to_owned(),
                hint: None,
            }),
            Err(store::StoreError::Unreadable { .. }) => Err(AppError::Usage(format!(
                "page `{new_id}` exists already (rename or remove it first: `rulebench page rm {new_id}`)"
            ))),
            Err(e) => Err(e.into()),
        }
    }

    /// Loads a page with its revision.
    pub fn page(&self, id: &str) -> Result<(Page, i64)> {
        match self.store.load(id)? {
            Some(s) => Ok((s.page, s.revision)),
            None => {
                let ids = self.store.page_ids()?;
                let hint = did_you_mean(id, ids.iter().map(String::as_str))
                    .map(|s| format!("did you mean `{s}`?"))
                    .or_else(|| Some(some_of("pages", &ids)));
                Err(AppError::NotFound {
                    what: "page",
                    id: id.to_owned(),
                    hint,
                })
            }
        }
    }

    /// Parses and validates a page file; errors carry line:col in `text`.
    pub fn parse_page(text: &str, origin: &str) -> Result<(Page, Vec<Diagnostic>)> {
        let invalid = |diagnostics| AppError::Invalid {
            origin: origin.to_owned(),
            diagnostics,
        };
        let (page, diags) = rulebench_core::read::page_all(text);
        match page {
            Some(page) if !diags.iter().any(Diagnostic::is_error) => Ok((page, diags)),
            _ => Err(invalid(diags)),
        }
    }

    /// Validates a stored page.
    pub fn check_page(&self, id: &str) -> Result<Vec<Diagnostic>> {
        Ok(self.check_page_with(id, None)?.diagnostics)
    }

    /// Validates a page file without importing it.
    pub fn check_text(text: &str) -> Vec<Diagnostic> {
        Self::check_text_with(text, None).diagnostics
    }

    /// Finds a source row by key, keyHash or id.
    pub fn find_row(page: &Page, side: Side, needle: &str) -> Result<usize> {
        let d = page.dataset(side);
        let what = if side == Side::Source {
            "source rows"
        } else {
            "target rows"
        };
        let named = d.rows_named(needle);
        if d.find_row(needle).is_none() && named.len() > 1 {
            let keys: Vec<String> = named.iter().map(|&i| d.row_key(&d.rows[i])).collect();
            return Err(AppError::Usage(format!(
                "`{needle}` is ambiguous: it names {} {what}: {} (name one by its key)",
                named.len(),
                keys.join(", ")
            )));
        }
        d.find_row(needle).ok_or_else(|| {
            let keys: Vec<String> = d.rows.iter().map(|r| d.row_key(r)).collect();
            // Rows are named by id, key or label: the closest id, else key, else label.
            let ids: Vec<String> = d.rows.iter().map(|r| d.row_id(r)).collect();
            let labels: Vec<String> = d.rows.iter().map(|r| d.row_label(r)).collect();
            let hint = [&ids, &keys, &labels]
                .into_iter()
                .find_map(|names| did_you_mean(needle, names.iter().map(String::as_str)))
                .map(|k| format!("did you mean `{k}`?"))
                .or_else(|| keys.first().map(|k| format!("keys look like `{k}`")));
            AppError::NotFound {
                what: if side == Side::Source {
                    "source row"
                } else {
                    "target row"
                },
                id: needle.to_owned(),
                hint,
            }
        })
    }

    /// Evaluates one selection, serving the cached result of the current revision when
    /// there is one (`"cache": "hit"`). A hit reads the page without its target rows and
    /// decodes the compact cache pages; a miss evaluates and stores them.
    pub fn evaluate(&mut self, page_id: &str, selection: &str) -> Result<SelectionResult> {
        // The page, the cache and the target rows are read in one read transaction (the
        // rows of a later revision under an earlier page mixed two states); the result
        // is cached after it, in a write transaction of its own.
        let snapshot = self.store.read_snapshot()?;
        // A source named by its key, keyHash or id is read alone: a page of 100,000
        // sources is not loaded to evaluate one.
        if let Some(head) = self.store.load_head_without_overrides(page_id)?
            && let Some((s, key, hash, text)) = self.one_source(&head.page, selection)?
        {
            let (mut page, revision) = (head.page, head.revision);
            if let Some(hit) = self.cached(page_id, &hash, revision, s)? {
                return Ok(hit);
            }
            page.source.rows = vec![source_row(&key, &text)?];
            // Only this source's overrides: the others name rows not loaded.
            page.overrides = self.store.source_overrides(page_id, &hash)?;
            let (mut matrix, names) = self.lean_matrix(&page)?;
            drop(snapshot);
            let mut result =
                SelectionResult::new(&page, names, matrix.evaluate(0), revision, &timestamp());
            result.eval.selection = s;
            self.store
                .store_result(page_id, &hash, revision, &result.cache_pages())?;
            return Ok(result);
        }
        let (head, revision) = self.page_without(page_id, Side::Target)?;
        let s = Self::find_row(&head, Side::Source, selection)?;
        let hash = key_hash(&head.source.row_key(&head.source.rows[s]));
        if let Some(hit) = self.cached(page_id, &hash, revision, s)? {
            return Ok(hit);
        }
        // The target rows go from their stored text straight to the engine's form.
        let (mut matrix, names) = self.lean_matrix(&head)?;
        drop(snapshot);
        let result = SelectionResult::new(&head, names, matrix.evaluate(s), revision, &timestamp());
        self.store
            .store_result(page_id, &hash, revision, &result.cache_pages())?;
        Ok(result)
    }

    /// The source row `needle` names, read alone, when its keyHash tells which without
    /// reading every row — the needle as a row key, as a keyHash, or (a key of one field)
    /// as an id — in the order [`App::find_row`] tries them: (index, key, keyHash, JSON
    /// text). `None`: the full search decides (a label, a key in another case or order).
    fn one_source(
        &self,
        head: &Page,
        needle: &str,
    ) -> Result<Option<(usize, String, String, String)>> {
        let d = &head.source;
        // A row key holds `=`: a needle without one can only be a keyHash or an id.
        let mut hashes = vec![key_hash(needle)];
        if needle.len() == 64 && needle.bytes().all(|b| b.is_ascii_hexdigit()) {
            hashes.push(needle.to_ascii_lowercase());
        }
        if let [field] = d.key.as_slice()
            && !needle.contains('=')
            && !needle.trim_start().starts_with('{')
        {
            let mut row = rulebench_core::model::Row::new();
            row.insert(field.clone(), Value::String(needle.to_owned()));
            hashes.push(key_hash(&d.row_key(&row)));
        }
        Ok(self.store.row_by_hash(&head.id, Side::Source, &hashes)?)
    }

    /// The cached result of a selection at a revision. A cache page this version cannot
    /// read (written by an older rulebench) is a miss, and is overwritten.
    pub(crate) fn cached(
        &self,
        page_id: &str,
        hash: &str,
        revision: i64,
        selection: usize,
    ) -> Result<Option<SelectionResult>> {
        Ok(self
            .store
            .cached_result(page_id, hash, revision)?
            .and_then(|texts| SelectionResult::from_cache_pages(&texts, selection).ok()))
    }

    /// The matrix and names of a page loaded without its target rows: the rows are read
    /// from their stored texts into the engine's form, never as JSON trees.
    pub(crate) fn lean_matrix(&self, head: &Page) -> Result<(Matrix, Arc<Names>)> {
        self.lean_matrix_with(head, None, None, None)
    }

    /// [`App::lean_matrix`], with the source rows given in the engine's form with their
    /// keyHashes (`None`: the page's own), the overrides by keyHash as the store
    /// keeps them (`None`: the page's own; `head` read without them otherwise), and the
    /// target rows as stored (`None`: read here).
    fn lean_matrix_with(
        &self,
        head: &Page,
        sources: Option<(ArenaRows, Vec<KeyHash>)>,
        forced: Option<Vec<rulebench_core::model::HashedOverride>>,
        targets: Option<Vec<(String, String, String)>>,
    ) -> Result<(Matrix, Arc<Names>)> {
        let stored = match targets {
            Some(stored) => stored,
            None => self.store.stored_rows(&head.id, Side::Target)?,
        };
        let rows = parse_stored(&head.target, &stored, "target row")?;
        let keys = stored
            .into_iter()
            .map(|(key, hash, _)| (key, hash))
            .collect();
        let mut matrix = match sources {
            Some((sources, hashes)) => {
                Matrix::with_rows(head, (sources, Some(hashes)), rows, keys)?
            }
            None => Matrix::with_targets(head, rows, keys)?,
        };
        let mut with_overrides = None;
        if let Some(forced) = forced
            && !matrix.set_override_hashes(head, forced)
        {
            // An override naming a row the page lacks is shown by its keys: the page's
            // own overrides are read for it.
            let mut page = head.clone();
            page.overrides = self
                .store
                .load_head(&head.id)?
                .map(|h| h.page.overrides)
                .unwrap_or_default();
            matrix.set_overrides(&page);
            with_overrides = Some(page);
        }
        let names = Arc::new(Names::of_matrix(
            with_overrides.as_ref().unwrap_or(head),
            &matrix,
        ));
        Ok((matrix, names))
    }

    /// The label of the source row whose key is `key` (one row read), or `None` when
    /// the page has no such row.
    pub fn source_label(&self, page_id: &str, key: &str) -> Result<Option<String>> {
        let Some(head) = self.store.load_head(page_id)? else {
            return Ok(None);
        };
        let Some((_, _, _, text)) =
            self.store
                .row_by_hash(page_id, Side::Source, &[key_hash(key)])?
        else {
            return Ok(None);
        };
        source_label(&head.page, key, &text).map(Some)
    }

    /// The labels of a page's source rows, by row (a tidy result's `selectionLabel`).
    /// Read row by row from the stored texts: no page of rows is held.
    pub fn source_labels(&self, page_id: &str) -> Result<Vec<String>> {
        let Some(head) = self.store.load_head(page_id)? else {
            return Err(self.missing_page(page_id));
        };
        self.store
            .stored_rows(page_id, Side::Source)?
            .iter()
            .map(|(key, _, text)| source_label(&head.page, key, text))
            .collect()
    }

    /// Every source row's evaluation, one at a time on one shared matrix (not cached):
    /// memory stays bounded by one selection.
    pub fn evaluate_all(&self, page_id: &str) -> Result<Evaluations> {
        Ok(self.evaluate_all_labelled(page_id, false)?.0)
    }

    /// [`App::evaluate_all`], and (with `labels`) the source rows' labels read from the
    /// same stored rows (a tidy result's `selectionLabel`), row by row.
    pub fn evaluate_all_labelled(
        &self,
        page_id: &str,
        labels: bool,
    ) -> Result<(Evaluations, Vec<String>)> {
        // Neither side's rows become JSON trees: both go from their stored texts into
        // the engine's arena, the sources with their keys and keyHashes.
        let snapshot = self.store.read_snapshot()?;
        // The overrides by keyHash alone: no key is read or hashed (0.1 s less for
        // 100,000 overrides).
        let Some(head) = self.store.load_head_without_overrides(page_id)? else {
            return Err(self.missing_page(page_id));
        };
        let (page, revision) = (head.page, head.revision);
        let stored = self.store.stored_rows(page_id, Side::Source)?;
        // The source rows are parsed on another core while this one reads the rest
        // from the store (100,000 sources: their parse hides the overrides' read).
        let (sources, read) = std::thread::scope(|scope| {
            let parsing = scope.spawn(|| parse_stored(&page.source, &stored, "source row"));
            let read = (|| -> Result<_> {
                let forced = self.store.override_hashes(page_id)?;
                let targets = self.store.stored_rows(page_id, Side::Target)?;
                Ok((forced, targets))
            })();
            let hashes: Vec<KeyHash> = stored
                .iter()
                .map(|(key, hash, _)| KeyHash::of_stored(key, hash))
                .collect();
            let parsed = parsing
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (
                parsed,
                read.map(|(forced, targets)| (forced, targets, hashes)),
            )
        });
        let (sources, (forced, targets, hashes)) = (sources?, read?);
        let labels = if labels {
            stored
                .iter()
                .map(|(key, _, text)| source_label(&page, key, text))
                .collect::<Result<_>>()?
        } else {
            vec![]
        };
        let keys = stored.into_iter().map(|(key, _, _)| key).collect();
        let (matrix, names) =
            self.lean_matrix_with(&page, Some((sources, hashes)), Some(forced), Some(targets))?;
        drop(snapshot);
        let evaluations = Evaluations {
            page,
            keys,
            revision,
            matrix,
            names,
            at: timestamp(),
            next: 0,
            verdicts_only: false,
        };
        Ok((evaluations, labels))
    }

    /// The error for a page the store does not have: `page` says so, with a
    /// did-you-mean.
    pub(crate) fn missing_page(&self, page_id: &str) -> AppError {
        self.page(page_id)
            .err()
            .unwrap_or_else(|| AppError::NotFound {
                what: "page",
                id: page_id.to_owned(),
                hint: None,
            })
    }

    /// A page without the rows of one side (their count is still known to the store).
    pub fn page_without(&self, id: &str, side: Side) -> Result<(Page, i64)> {
        match self.store.load_without(id, side)? {
            Some(s) => Ok((s.page, s.revision)),
            None => self.page(id),
        }
    }

    /// Parses and validates one rule for a page; errors carry line:col in `text`.
    /// One rule (not a family) of a rule file's text, checked against the page.
    pub fn parse_rule(page: &Page, text: &str, origin: &str) -> Result<(Rule, Vec<Diagnostic>)> {
        let (mut rules, diags) = Self::parse_rules(page, text, origin)?;
        match rules.len() {
            1 => Ok((rules.remove(0), diags)),
            n => Err(AppError::Usage(format!(
                "{origin}: a rule family ({n} rules), where one rule was expected"
            ))),
        }
    }

    /// A rule file's item checked against the page: one rule, or a family's members.
    pub fn parse_rules(
        page: &Page,
        text: &str,
        origin: &str,
    ) -> Result<(Vec<Rule>, Vec<Diagnostic>)> {
        let invalid = |diagnostics| AppError::Invalid {
            origin: origin.to_owned(),
            diagnostics,
        };
        let doc: Value = parse_json(text).map_err(|d| invalid(vec![*d]))?;
        let keys: Vec<Diagnostic> = validate::unknown_keys(&doc, Some("rule"))
            .into_iter()
            .map(|d| d.locate_in(text))
            .collect();
        if !keys.is_empty() {
            return Err(invalid(keys));
        }
        let list = predicates::read_rule(&doc)
            .map_err(|diags| invalid(diags.into_iter().map(|d| d.locate_in(text)).collect()))?;
        // One rule, or a family's members.
        let rules = rulebench_core::read::rules(text).map_err(|d| invalid(vec![*d]))?;
        let schema = Schema::of(page);
        let mut diags: Vec<Diagnostic> = Vec::new();
        for rule in &rules {
            let member = |d: Diagnostic| rulebench_core::family::of_member(d, rule);
            diags.extend(
                rulebench_core::check::rule_logic(
                    &rule.logic,
                    rule.applies_when.as_ref().map(|c| &c.logic),
                    &schema,
                )
                .into_iter()
                .map(|d| match &list {
                    Some(list) => Diagnostic {
                        pointer: predicates::source_pointer(list, &d.pointer),
                        ..d
                    },
                    None => d.under("/logic"),
                })
                .map(member)
                .map(|d| d.locate_in(text)),
            );
            // Every member's (a name made from a value may hold no letter or digit).
            diags.extend(
                validate::rule_fields(&rule.name, rule.weight)
                    .into_iter()
                    .map(member)
                    .map(|d| d.locate_in(text)),
            );
        }
        if diags.iter().any(Diagnostic::is_error) {
            return Err(invalid(diags));
        }
        Ok((rules, diags))
    }

    /// Adds a rule, or a rule family's members (or, with `replace`, overwrites the rules
    /// with their ids); returns the first.
    pub fn add_rule(
        &mut self,
        page_id: &str,
        text: &str,
        origin: &str,
        replace: bool,
    ) -> Result<(Rule, i64, Vec<Diagnostic>)> {
        let added = self.add_rules(page_id, text, origin, replace)?;
        let (rule, warnings, _) = added.rules.into_iter().next().expect("one rule at least");
        Ok((rule, added.revision, warnings))
    }

    /// Saves a validated rule: replaces rule `at`, or appends a new one within the
    /// plan tier's limit. One IMMEDIATE transaction, one new revision: the limit, the
    /// id's freshness and the position are read inside it, so two writers adding at
    /// once can neither pass the limit together nor take the same position.
    pub fn save_rule(&mut self, page: &Page, rule: &Rule, at: Option<usize>) -> Result<i64> {
        let limit = page.plan_tier().rule_limit();
        let what = format!(
            "{} rule {}",
            if at.is_some() { "changed" } else { "added" },
            rule.id
        );
        self.store.change_checked(&page.id, &what, |tx, rev| {
            let (count, exists) = store::ops::rule_count(tx, &page.id, &rule.id)?;
            if exists {
                refuse_member(tx, &page.id, &rule.id, Some(rule))?;
            }
            let ord = match at {
                Some(i) => i.min(count),
                None => {
                    if exists {
                        return Err(AppError::RuleExists {
                            page: page.id.clone(),
                            rule: rule.id.clone(),
                        });
                    }
                    if let Some(limit) = limit
                        && count >= limit
                    {
                        return Err(AppError::RuleLimit { limit });
                    }
                    count
                }
            };
            Ok(store::ops::put_rule(tx, page, rule, ord, rev)?)
        })
    }

    /// Removes a rule, or a rule family (named by its id) with all its members; one
    /// member alone is refused (it changes with its family).
    pub fn remove_rule(&mut self, page_id: &str, rule_id: &str) -> Result<i64> {
        let (page, _) = self.page(page_id)?;
        if let Some((_, rule)) = page.rule(rule_id)
            && let Some(m) = &rule.family
        {
            return Err(AppError::FamilyMember {
                page: page_id.to_owned(),
                rule: rule_id.to_owned(),
                family: m.family.id.clone(),
            });
        }
        let members: Vec<String> = page
            .rules
            .iter()
            .filter(|r| r.family.as_ref().is_some_and(|m| m.family.id == rule_id))
            .map(|r| r.id.clone())
            .collect();
        if page.rule(rule_id).is_none() && !members.is_empty() {
            return self.store.change_checked(
                page_id,
                &format!("removed rule family {rule_id} ({} rules)", members.len()),
                |tx, rev| -> Result<()> {
                    // Its members as stored now (one may have come meanwhile).
                    for r in store::ops::rules(tx, page_id)? {
                        if r.family.as_ref().is_some_and(|m| m.family.id == rule_id) {
                            store::ops::delete_rule(tx, page_id, &r.id, rev)?;
                        }
                    }
                    Ok(())
                },
            );
        }
        if page.rule(rule_id).is_none() {
            let ids: Vec<&str> = page.rules.iter().map(|r| r.id.as_str()).collect();
            return Err(AppError::NotFound {
                what: "rule",
                id: rule_id.to_owned(),
                hint: did_you_mean(rule_id, ids.iter().copied())
                    .map(|s| format!("did you mean `{s}`?"))
                    .or_else(|| Some(some_of("rules", &ids))),
            });
        }
        Ok(self
            .store
            .change(page_id, &format!("removed rule {rule_id}"), |tx, rev| {
                store::ops::delete_rule(tx, page_id, rule_id, rev)
            })?)
    }

    /// Sets an override for (source, target); rows are named by key, keyHash or id.
    pub fn set_override(
        &mut self,
        page_id: &str,
        source: &str,
        target: &str,
        value: bool,
        note: Option<String>,
    ) -> Result<i64> {
        let (page, _) = self.page(page_id)?;
        let s = Self::find_row(&page, Side::Source, source)?;
        let t = Self::find_row(&page, Side::Target, target)?;
        let o = Override {
            source_key: Some(page.source.row_key(&page.source.rows[s])),
            target_key: Some(page.target.row_key(&page.target.rows[t])),
            source_key_hash: None,
            target_key_hash: None,
            value,
            note,
        };
        let what = format!(
            "override {} × {} = {value}",
            o.source_key.as_deref().unwrap_or_default(),
            o.target_key.as_deref().unwrap_or_default()
        );
        let (sh, th) = (
            o.source_hash().unwrap_or_default(),
            o.target_hash().unwrap_or_default(),
        );
        let revision = self
            .store
            .change_if(page_id, &what, |tx, _| -> Result<bool> {
                // The same override again (value and note) changes nothing: no revision.
                if store::ops::override_of(tx, page_id, &sh, &th)?
                    == Some((o.value, o.note.clone()))
                {
                    return Ok(false);
                }
                store::ops::put_override(tx, page_id, &o)?;
                Ok(true)
            })?;
        match revision {
            Some(r) => Ok(r),
            None => Ok(self.store.revision(page_id)?.unwrap_or_default()),
        }
    }

    /// Sets (`Some`) or clears (`None`) the override of a pair named by its row keys, as
    /// the workbench knows them: one transaction, without loading the page. Clearing an
    /// override that is not there changes nothing and makes no revision.
    pub fn put_override_by_keys(
        &mut self,
        page_id: &str,
        source_key: &str,
        target_key: &str,
        value: Option<(bool, Option<String>)>,
    ) -> Result<i64> {
        let (sh, th) = (key_hash(source_key), key_hash(target_key));
        match value {
            Some((value, note)) => {
                let o = Override {
                    source_key: Some(source_key.to_owned()),
                    target_key: Some(target_key.to_owned()),
                    source_key_hash: None,
                    target_key_hash: None,
                    value,
                    note,
                };
                let what = format!("override {source_key} × {target_key} = {value}");
                Ok(self.store.change(page_id, &what, |tx, _| {
                    store::ops::put_override(tx, page_id, &o)
                })?)
            }
            None => {
                let what = format!("removed override {source_key} × {target_key}");
                Ok(self.store.change(page_id, &what, |tx, _| {
                    store::ops::delete_override(tx, page_id, &sh, &th).map(|_| ())
                })?)
            }
        }
    }

    pub fn remove_override(&mut self, page_id: &str, source: &str, target: &str) -> Result<i64> {
        let (page, _) = self.page(page_id)?;
        // A row is named as everywhere; a row that is gone (an orphaned override's) by
        // the override's own key, keyHash, or `field=value` of a one-field key. Each
        // side as (how messages name it, keyHash).
        let named = |side: Side, needle: &str| -> Result<(String, String)> {
            let d = page.dataset(side);
            match Self::find_row(&page, side, needle) {
                Ok(i) => {
                    let k = d.row_key(&d.rows[i]);
                    let h = key_hash(&k);
                    Ok((k, h))
                }
                Err(e) => page
                    .overrides
                    .iter()
                    .find_map(|o| {
                        let (key, hash) = match side {
                            Side::Source => (o.source_key.as_deref(), o.source_hash()),
                            Side::Target => (o.target_key.as_deref(), o.target_hash()),
                        };
                        let hash = hash?;
                        let by_key = key.is_some_and(|k| {
                            k == needle
                                || (d.key.len() == 1 && k == format!("{}={needle}", d.key[0]))
                        });
                        (by_key || hash.eq_ignore_ascii_case(needle))
                            .then(|| (key.map_or_else(|| hash.clone(), str::to_owned), hash))
                    })
                    .ok_or(e),
            }
        };
        let ((sk, sh), (tk, th)) = (named(Side::Source, source)?, named(Side::Target, target)?);
        if !page
            .overrides
            .iter()
            .any(|o| o.source_hash() == Some(sh.clone()) && o.target_hash() == Some(th.clone()))
        {
            return Err(AppError::NotFound {
                what: "override",
                id: format!("{sk} × {tk}"),
                hint: None,
            });
        }
        Ok(self.store.change(
            page_id,
            &format!("removed override {sk} × {tk}"),
            |tx, _| store::ops::delete_override(tx, page_id, &sh, &th).map(|_| ()),
        )?)
    }

    /// Sets policy values by name (`fullThreshold=0.9`, `requiredMode=…`, `mode=…`,
    /// `elseMode=…`, `strategy=…`). All or nothing, and only the values named: the
    /// stored policies are read, changed and written in one transaction, so concurrent
    /// changes of other values are kept.
    pub fn set_policy(&mut self, page_id: &str, assignments: &[String]) -> Result<(Policies, i64)> {
        if self.store.revision(page_id)?.is_none() {
            // Not there: `page` says so, with a did-you-mean.
            self.page(page_id)?;
        }
        if assignments.is_empty() {
            return Err(AppError::Usage(
                "policy set needs at least one NAME=VALUE".into(),
            ));
        }
        let mut out = None;
        let revision = self.store.change_if(
            page_id,
            &format!("policy {}", assignments.join(" ")),
            |tx, _| -> Result<bool> {
                let (mut device, mut selection) = store::ops::policies(tx, page_id)?;
                let before = (device.clone(), selection.clone());
                for a in assignments {
                    apply_policy(&mut device, &mut selection, a)?;
                }
                let diags = validate::validate_device_policy(&device);
                if !diags.is_empty() {
                    return Err(AppError::Invalid {
                        origin: "policy set".into(),
                        diagnostics: diags,
                    });
                }
                // The same values again change nothing and make no revision.
                let changed = (&device, &selection) != (&before.0, &before.1);
                if changed {
                    store::ops::write_policies(tx, page_id, &device, &selection)?;
                }
                out = Some(Policies {
                    device_policy: device,
                    selection_policy: selection,
                });
                Ok(changed)
            },
        )?;
        let revision = match revision {
            Some(r) => r,
            None => self.store.revision(page_id)?.unwrap_or_default(),
        };
        Ok((out.expect("set by the change"), revision))
    }
}

impl App {
    /// Saves the policy values named in `names` from `device` and `selection` over the
    /// stored policies, in one transaction: values changed elsewhere are kept. Returns
    /// the policies as saved and the revision.
    pub fn save_policy_values(
        &mut self,
        page_id: &str,
        device: &rulebench_core::model::DevicePolicy,
        selection: &rulebench_core::model::SelectionPolicy,
        names: &[crate::policy::PolicyField],
        base: Option<(
            &rulebench_core::model::DevicePolicy,
            &rulebench_core::model::SelectionPolicy,
        )>,
    ) -> Result<(Policies, i64)> {
        let mut out = None;
        let what = format!(
            "policy {}",
            names.iter().map(|f| f.name()).collect::<Vec<_>>().join(" ")
        );
        let revision = self
            .store
            .change_checked(page_id, &what, |tx, rev| -> Result<()> {
                let (mut d, mut s) = store::ops::policies(tx, page_id)?;
                // With `base` (the stored values the tuning started from), a value
                // changed elsewhere meanwhile is a conflict, never written over.
                if let Some(base) = base {
                    let moved: Vec<crate::policy::PolicyField> = policy::changed(base, (&d, &s))
                        .into_iter()
                        .filter(|n| names.contains(n))
                        .collect();
                    if !moved.is_empty() {
                        return Err(AppError::Conflict(Box::new(Conflict {
                            page_id: page_id.to_owned(),
                            what: ConflictOn::Policy(
                                moved.iter().map(|n| n.name().to_owned()).collect(),
                            ),
                            mine: policy::values(&moved, (device, selection)),
                            theirs: policy::values(&moved, (&d, &s)),
                            base: policy::values(&moved, base),
                            revision: rev - 1,
                            author: store::ops::last_author(tx, page_id)?,
                        })));
                    }
                }
                for &name in names {
                    policy::copy(name, (device, selection), (&mut d, &mut s));
                }
                let diags = validate::validate_device_policy(&d);
                if !diags.is_empty() {
                    return Err(AppError::Invalid {
                        origin: "policy".into(),
                        diagnostics: diags,
                    });
                }
                store::ops::write_policies(tx, page_id, &d, &s)?;
                out = Some(Policies {
                    device_policy: d,
                    selection_policy: s,
                });
                Ok(())
            })?;
        Ok((out.expect("set by the change"), revision))
    }

    /// Saves a rule's logic over the stored rule, in one transaction (its other fields
    /// stay as stored). Returns the rule as saved and the revision.
    ///
    /// With `base` (the stored logic the edit started from), a rule whose stored logic
    /// is another now — changed elsewhere meanwhile — is not written over: the save is
    /// refused with an [`AppError::Conflict`] holding mine, theirs and the base.
    pub fn save_rule_logic(
        &mut self,
        page_id: &str,
        rule_id: &str,
        logic: &Value,
        expression: Option<&str>,
        base: Option<&Value>,
    ) -> Result<(Rule, i64)> {
        let mut out = None;
        let revision = self.store.change_checked(
            page_id,
            &format!("changed rule {rule_id}"),
            |tx, rev| -> Result<()> {
                refuse_member(tx, page_id, rule_id, None)?;
                if let Some(base) = base {
                    let stored = store::ops::rule(tx, page_id, rule_id)?;
                    let theirs = stored.map_or(Value::Null, |r| r.logic);
                    if &theirs != base {
                        return Err(AppError::Conflict(Box::new(Conflict {
                            page_id: page_id.to_owned(),
                            what: ConflictOn::RuleLogic(rule_id.to_owned()),
                            mine: logic.clone(),
                            theirs,
                            base: base.clone(),
                            revision: rev - 1,
                            author: store::ops::last_author(tx, page_id)?,
                        })));
                    }
                }
                out = Some(store::ops::set_rule_logic(
                    tx, page_id, rule_id, logic, expression, rev,
                )?);
                Ok(())
            },
        )?;
        Ok((out.expect("set by the change"), revision))
    }

    /// Saves a rule's name, required flag, weight and category over the stored rule, in
    /// one transaction (its logic stays as stored). Its `appliesWhen` is written only
    /// with `condition_base` (the stored condition the edit started from): when the
    /// stored one is another now (changed elsewhere meanwhile), nothing is written and
    /// the edit is refused; without it the stored condition stays. Returns the rule as
    /// saved.
    pub fn save_rule_meta(
        &mut self,
        page_id: &str,
        rule: &Rule,
        condition_base: Option<Option<&Condition>>,
    ) -> Result<(Rule, i64)> {
        let mut out = None;
        let revision = self.store.change_checked(
            page_id,
            &format!("changed rule {}", rule.id),
            |tx, rev| -> Result<()> {
                refuse_member(tx, page_id, &rule.id, None)?;
                let stored = store::ops::rule(tx, page_id, &rule.id)?
                    .map(|r| r.applies_when)
                    .unwrap_or_default();
                let mut rule = rule.clone();
                match condition_base {
                    None => rule.applies_when = stored,
                    Some(base) if base != stored.as_ref() => {
                        return Err(AppError::Usage(format!(
                            "rule {}'s appliesWhen was changed elsewhere meanwhile (now {}): nothing was written; reopen the form to see it",
                            rule.id,
                            stored.as_ref().map_or("none".to_owned(), |c| c.as_written().to_string())
                        )));
                    }
                    Some(_) => {}
                }
                out = Some(store::ops::set_rule_meta(tx, page_id, &rule, rev)?);
                Ok(())
            },
        )?;
        Ok((out.expect("set by the change"), revision))
    }

    /// Refuses a path that is this database's file or one of SQLite's files beside it
    /// (`-wal`, `-shm`, `-journal`): read as data or written as output, it would be
    /// opened and closed outside SQLite (dropping this process's locks on it) or
    /// overwritten. Compared by device and inode, so any path to it counts.
    pub fn refuse_database_file(&self, path: &Path) -> Result<()> {
        if is_database_file(self.store.path(), path) {
            return Err(AppError::Usage(format!(
                "{}: that is the database file (or SQLite's file beside it): not a data file or an output",
                rulebench_core::text::sanitize(&path.display().to_string())
            )));
        }
        Ok(())
    }

    /// Writes an export (a matrix, a query) to `path` whole or not at all; the database
    /// file and SQLite's files beside it are refused.
    pub fn export_file(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        self.refuse_database_file(path)?;
        export::write_atomic(path, bytes)
    }

    /// Keeps an edit the person has not saved (a rule's text, tuned policy values, an
    /// assertion half-typed) for this user on a page, to be offered back on the next
    /// open after a quit, a crash or Ctrl-C. Not a page change.
    pub fn keep_draft(&self, page_id: &str, draft: &rulebench_store::KeptDraft) -> Result<()> {
        Ok(self.store.put_draft(page_id, draft)?)
    }

    /// Forgets a kept draft (saved, or let go).
    pub fn forget_draft(
        &self,
        page_id: &str,
        kind: rulebench_store::DraftKind,
        item: &str,
    ) -> Result<()> {
        Ok(self.store.delete_draft(page_id, kind, item)?)
    }

    /// Forgets every kept draft of this user on a page.
    pub fn forget_drafts(&self, page_id: &str) -> Result<()> {
        Ok(self.store.clear_drafts(page_id)?)
    }

    /// This user's kept drafts on a page, oldest first.
    /// Keeps the workbench's view of a page for this user (see
    /// [`rulebench_store::Store::put_view`]).
    pub fn keep_view(&self, page_id: &str, view: &serde_json::Value) -> Result<()> {
        Ok(self.store.put_view(page_id, &view.to_string())?)
    }

    /// The workbench's view of a page kept for this user, if any (unreadable JSON
    /// counts as none: it is only a view).
    pub fn kept_view(&self, page_id: &str) -> Result<Option<serde_json::Value>> {
        Ok(self
            .store
            .view(page_id)?
            .and_then(|v| serde_json::from_str(&v).ok()))
    }

    pub fn drafts(&self, page_id: &str) -> Result<Vec<rulebench_store::KeptDraft>> {
        Ok(self.store.drafts(page_id)?)
    }

    /// The page `old` was renamed to, when the revision log says so.
    pub fn renamed_to(&self, old: &str) -> Result<Option<String>> {
        Ok(self.store.renamed_to(old)?)
    }

    /// The stored revision of a page (`None`: no such page).
    pub fn revision(&self, page_id: &str) -> Result<Option<i64>> {
        Ok(self.store.revision(page_id)?)
    }
}

/// A page's two policies.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Policies {
    pub device_policy: rulebench_core::model::DevicePolicy,
    pub selection_policy: rulebench_core::model::SelectionPolicy,
}

pub(crate) fn apply_policy(
    device: &mut rulebench_core::model::DevicePolicy,
    selection: &mut rulebench_core::model::SelectionPolicy,
    assignment: &str,
) -> Result<()> {
    let Some((name, value)) = assignment.split_once('=') else {
        return Err(AppError::Usage(format!(
            "`{assignment}` is not NAME=VALUE (names: {})",
            policy::names().join(", ")
        )));
    };
    policy::set(device, selection, name, value).map_err(AppError::Usage)
}

/// A stored rule that is a member of a rule family is not changed alone (by `with`, a
/// rule that is not the same member of the same family): it changes with its family.
pub(crate) fn refuse_member(
    tx: &store::Transaction<'_>,
    page_id: &str,
    rule_id: &str,
    with: Option<&Rule>,
) -> Result<()> {
    let Some(stored) = store::ops::rule(tx, page_id, rule_id)? else {
        return Ok(());
    };
    match (&stored.family, with.and_then(|w| w.family.as_ref())) {
        (Some(m), Some(new)) if m.family.id == new.family.id => Ok(()),
        (Some(m), _) => Err(AppError::FamilyMember {
            page: page_id.to_owned(),
            rule: rule_id.to_owned(),
            family: m.family.id.clone(),
        }),
        (None, _) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    /// A page of 100 rules named a 1,000-character hint; the list now stops at 12.
    #[test]
    pub(crate) fn hints_list_at_most_twelve_names() {
        let ids: Vec<String> = (0..100).map(|i| format!("rule-{i:03}")).collect();
        let hint = super::some_of("rules", &ids);
        assert!(hint.starts_with("rules: rule-000, rule-001,"), "{hint}");
        assert!(hint.ends_with("rule-011 and 88 more"), "{hint}");
        assert_eq!(super::some_of("pages", &["a", "b"]), "pages: a, b");
    }
}

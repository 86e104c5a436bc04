//! SQLite storage: pages, rows, rules, overrides, revisions and the result cache.
//!
//! Append-only migrations on `PRAGMA user_version`; WAL; foreign keys; a busy timeout;
//! one transaction per change, and every change to a page increments its revision.

mod cache;
mod drafts;
mod history;
/// The change operations, for use inside [`Store::change`].
pub mod ops;

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde_json::Value;

use rulebench_core::assertions::{Assertion, AssertionResult};
use rulebench_core::dataset::StoredRow;
use rulebench_core::model::{Dataset, Override, PAGE_FORMAT, Page, Rule, Side, key_hash};

/// Storage failures.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database {path}: {source}")]
    Open {
        path: String,
        source: rusqlite::Error,
    },
    #[error("database: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("database holds invalid JSON in {what}: {source}")]
    Corrupt {
        what: String,
        source: serde_json::Error,
    },
    #[error("database schema version {found} is newer than this rulebench understands ({known})")]
    TooNew { found: i64, known: i64 },
    /// A change asked of a database opened read-only.
    #[error(
        "database {path} is read-only: {what} is not possible (hint: read commands work; make the file writable to change it)"
    )]
    ReadOnly { path: String, what: String },
    /// A read-only database whose schema is older than this build's.
    #[error(
        "database {path} is read-only and needs an upgrade of its schema (version {found} of {known}) (hint: open it once writable)"
    )]
    ReadOnlyOld {
        path: String,
        found: i64,
        known: i64,
    },
    /// A change made with an expected revision (`--if-revision N`) to a page that moved
    /// on meanwhile: nothing was written. `changes` are the revisions since, as the
    /// revision log says them (`5 policy fullThreshold by ana`).
    #[error(
        "page `{page}` is at revision {found}, not {expected}: nothing changed (hint: see what changed since, then run again with --if-revision {found}){}",
        changes.iter().map(|c| format!("\n  {c}")).collect::<String>()
    )]
    Moved {
        page: String,
        expected: i64,
        found: i64,
        changes: Vec<String>,
    },
    /// A change to a page that is not there (removed or renamed elsewhere).
    #[error("page `{page}` is not there any more (removed or renamed elsewhere): nothing changed")]
    PageGone { page: String },
    /// A database file this process may not write (opened read-only by SQLite).
    #[error("database {path} is not writable")]
    NotWritable { path: String },
    /// A stored row the engine cannot read.
    #[error("database holds an unreadable {what}: {message}")]
    Unreadable { what: String, message: String },
}

impl StoreError {
    /// Whether opening a database for writing failed because it may not be written
    /// (the file, or the directory its write-ahead log goes in).
    pub fn is_not_writable(&self) -> bool {
        use rusqlite::ErrorCode;
        let code = match self {
            StoreError::NotWritable { .. } => return true,
            StoreError::Open { source, .. } | StoreError::Sql(source) => source.sqlite_error_code(),
            _ => None,
        };
        matches!(code, Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen))
    }
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// Every table that holds a page's data by `page_id`, besides `pages` and `drafts`: the
/// one list (a rename moves them, a fingerprint counts them).
pub const PAGE_TABLES: &[&str] = &[
    "dataset_rows",
    "rules",
    "overrides",
    "revisions",
    "rule_history",
    "compat_results",
    "assertions",
    "assertion_results",
    "page_log",
    "row_log",
    "rule_log",
    "override_log",
    "assertion_log",
];

/// The oldest schema a read-only open reads without migrating it.
pub const MIN_READ_SCHEMA: i64 = 6;

/// The migrations, in order, each a `.sql` file of `src/store/migrations/` embedded at
/// build time. Append only: never edit one that has shipped (a test pins their text).
pub const MIGRATIONS: &[&str] = &[
    // 1: the first schema.
    include_str!("migrations/001_first_schema.sql"),
    // 2: the result cache is pruned by revision; a key-value table for the database itself.
    include_str!("migrations/002_result_cache_by_revision.sql"),
    // 3: verdict assertions and the results of their runs.
    include_str!("migrations/003_assertions.sql"),
    // 4: dataset rows clustered by (page, side, order), without the UNIQUE constraint on
    // (page, side, key_hash). Keys are checked unique (and case-aware, which SQL cannot)
    // before every write; nothing looks rows up by keyHash; and the constraint's index,
    // on random hashes, doubled the time of writing a large dataset.
    include_str!("migrations/004_rows_by_order.sql"),
    // 5: whole-page history. Every write to a page's head, rows, rules, overrides and
    // assertions is logged (by triggers, so no writer can forget) under the page's
    // revision at the time: the page at revision N is, per item, its latest log entry
    // at or before N (a NULL payload marks an item gone). A database made before this
    // migration starts its history at each page's current revision.
    include_str!("migrations/005_history.sql"),
    // 6: a rule authored in infix keeps its text (`expression`), and a rule may carry a
    // structured warning (`warning_json`), in the rules and their log; the rule
    // triggers are remade to carry them.
    include_str!("migrations/006_infix_and_warnings.sql"),
    // 7: drafts. What a person typed in the workbench and did not save (a rule's text,
    // valid or not; tuned policy values; an assertion half-typed), per page and user,
    // with the stored value the edit started from: offered back on the next open after
    // a quit, a crash or Ctrl-C. Not part of a page (no revision, no history).
    include_str!("migrations/007_drafts.sql"),
];

/// What kind of edit a [`KeptDraft`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DraftKind {
    /// A rule's text in the editor (`item`: the rule id).
    Rule,
    /// Tuned policy values (`item`: `policies`; the text a JSON object of them).
    Policy,
    /// An assertion in the JSON dialog (`item`: its id; empty for a new one).
    Assertion,
}

impl DraftKind {
    pub fn name(self) -> &'static str {
        match self {
            DraftKind::Rule => "rule",
            DraftKind::Policy => "policy",
            DraftKind::Assertion => "assertion",
        }
    }

    fn parse(s: &str) -> Option<DraftKind> {
        match s {
            "rule" => Some(DraftKind::Rule),
            "policy" => Some(DraftKind::Policy),
            "assertion" => Some(DraftKind::Assertion),
            _ => None,
        }
    }
}

/// An edit kept in the database without being saved to its page.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptDraft {
    pub kind: DraftKind,
    pub item: String,
    pub text: String,
    /// The rule's text is infix (the editor's F2 view), not JSONLogic.
    pub infix: bool,
    /// The stored value the edit started from (a save goes over it only).
    pub base: Option<Value>,
    pub updated_at: String,
}

/// One row of `rulebench pages`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageSummary {
    pub id: String,
    pub name: String,
    pub rules: i64,
    pub sources: i64,
    pub targets: i64,
    pub revision: i64,
    pub updated_at: String,
}

/// One persisted assertion result (`assertion_results`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredAssertionResult {
    pub revision: i64,
    pub assertion_id: String,
    pub passed: bool,
    pub message: Option<String>,
    pub actual_samples: Value,
    pub actual_sha256: Option<String>,
    pub truncated: bool,
    pub run_at: String,
}

/// One entry of a page's revision log.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RevisionEntry {
    pub revision: i64,
    pub at: String,
    pub change: String,
    /// The login name of whoever made it (absent for revisions made before rulebench
    /// recorded it, or where the system does not say).
    pub author: Option<String>,
}

/// Which state of a page a read sees: the current one, or one from its history.
#[derive(Debug, Clone, Copy)]
enum At {
    Now,
    Revision(i64),
}

impl At {
    fn revision(self) -> Option<i64> {
        match self {
            At::Now => None,
            At::Revision(n) => Some(n),
        }
    }

    /// The table to read `table` from: itself, or a view of its log holding each item's
    /// latest entry at or before the revision, items gone by then left out.
    fn table(self, table: &str) -> String {
        let At::Revision(n) = self else {
            return table.to_owned();
        };
        let (log, keys, payload): (&str, &[&str], &str) = match table {
            "dataset_rows" => ("row_log", &["side", "ord"], "row_json"),
            "rules" => ("rule_log", &["id"], "logic_json"),
            "overrides" => (
                "override_log",
                &["source_key_hash", "target_key_hash"],
                "value",
            ),
            "assertions" => ("assertion_log", &["id"], "json"),
            _ => unreachable!("no log for {table}"),
        };
        let same: String = keys.iter().map(|k| format!(" AND m.{k} = l.{k}")).collect();
        format!(
            "(SELECT * FROM {log} l WHERE l.{payload} IS NOT NULL AND l.revision = \
             (SELECT MAX(m.revision) FROM {log} m WHERE m.page_id = l.page_id{same} \
              AND m.revision <= {n}))"
        )
    }
}

/// A stored row's key and keyHash.
pub type RowKey = (String, String);

/// A page as stored, with its revision.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPage {
    pub page: Page,
    pub revision: i64,
}

pub struct Store {
    conn: Connection,
    /// The database file.
    path: std::path::PathBuf,
    /// The schema version found when opening (0: a new database).
    pub opened_at_version: i64,
    /// Opened read-only: changes are refused, caches are not written.
    read_only: bool,
    /// Who the revisions made here are by (the login name, when the system says).
    author: Option<String>,
    /// The schema version the database is at (tests keep old ones).
    schema: i64,
    /// The revision the next changes expect their page at (`--if-revision`): a page at
    /// another is refused, inside the change's transaction.
    expected_revision: Option<i64>,
}

/// A path as the path part of an SQLite `file:` URI (`?`, `#` and `%` escaped).
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '?' | '#' | '%' => out.push_str(&format!("%{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Whether page `page_id` is at `revision` now (inside a transaction).
fn at_revision(tx: &Transaction<'_>, page_id: &str, revision: i64) -> Result<bool> {
    Ok(tx
        .query_row("SELECT revision FROM pages WHERE id = ?1", [page_id], |r| {
            r.get::<_, i64>(0)
        })
        .optional()?
        == Some(revision))
}

/// The statement that logs a revision (?5, its author, is stored from schema 5 on).
fn revision_sql(schema: i64) -> &'static str {
    if schema >= 5 {
        "INSERT INTO revisions (page_id, revision, created_at, change, author)
         VALUES (?1, ?2, ?3, ?4, ?5)"
    } else {
        "INSERT INTO revisions (page_id, revision, created_at, change)
         SELECT ?1, ?2, ?3, ?4 WHERE ?5 IS NULL OR TRUE"
    }
}

/// The user's login name, from the environment (`USER`, `LOGNAME` or `USERNAME`).
fn login_name() -> Option<String> {
    ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()))
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn corrupt(what: impl Into<String>) -> impl FnOnce(serde_json::Error) -> StoreError {
    let what = what.into();
    move |source| StoreError::Corrupt { what, source }
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("model types serialize")
}

impl Store {
    /// Opens (creating if needed) and migrates to the latest schema.
    pub fn open(path: &Path) -> Result<Store> {
        Self::open_at(path, MIGRATIONS.len())
    }

    /// Opens and migrates up to `version` (tests use it to build old databases).
    pub fn open_at(path: &Path, version: usize) -> Result<Store> {
        let open_err = |source| StoreError::Open {
            path: path.display().to_string(),
            source,
        };
        let conn = Connection::open(path).map_err(open_err)?;
        // SQLite opens a file this process may not write read-only without a word:
        // that is told here, so the caller can open it read-only on purpose. (Probing
        // the file with an open of our own would drop this process's POSIX locks on
        // it, held by every other connection here: see `App::open_with`.)
        if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
            return Err(StoreError::NotWritable {
                path: path.display().to_string(),
            });
        }
        conn.busy_timeout(Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // 64 MiB of page cache (the default is 2 MiB): replacing 100,000 rows updates the
        // key index in random order, and a small cache re-reads its pages from the file.
        conn.pragma_update(None, "cache_size", -65536)?;
        let mut store = Store {
            conn,
            path: path.to_owned(),
            opened_at_version: 0,
            read_only: false,
            author: login_name(),
            schema: 0,
            expected_revision: None,
        };
        store.opened_at_version = store.user_version()?;
        store.migrate(version)?;
        store.schema = store.user_version()?;
        Ok(store)
    }

    /// Opens an existing database read-only (`SQLITE_OPEN_READ_ONLY`): reads work,
    /// changes are refused with [`StoreError::ReadOnly`], and result caches and
    /// assertion runs are not stored. Nothing is created, migrated or written.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        use rusqlite::OpenFlags;
        let open_err = |source| StoreError::Open {
            path: path.display().to_string(),
            source,
        };
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(path, flags).map_err(open_err)?;
        conn.busy_timeout(Duration::from_secs(5))?;
        if conn
            .query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
            .is_err()
        {
            // A WAL database needs its shared-memory file; where that cannot be created
            // (a directory this process may not write), nobody writes through a WAL
            // here either: the file is read as it stands.
            let uri = format!("file:{}?immutable=1", uri_path(path));
            conn = Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI)
                .map_err(open_err)?;
        }
        let mut store = Store {
            conn,
            path: path.to_owned(),
            opened_at_version: 0,
            read_only: true,
            author: None,
            schema: MIGRATIONS.len() as i64,
            expected_revision: None,
        };
        let found = store.user_version()?;
        store.opened_at_version = found;
        store.schema = found;
        let known = MIGRATIONS.len() as i64;
        if found > known {
            return Err(StoreError::TooNew { found, known });
        }
        // Schema 7 only added the drafts table, which reading does not need: a
        // schema-6 database reads as it is.
        if found < MIN_READ_SCHEMA {
            return Err(StoreError::ReadOnlyOld {
                path: path.display().to_string(),
                found,
                known,
            });
        }
        Ok(store)
    }

    /// Runs `f` inside one read transaction: everything it reads is of one state of the
    /// database (a writer committing meanwhile is seen entirely or not at all). Inside
    /// a transaction already, `f` simply runs in it. `f` must not write: a read
    /// transaction that turns into a write fails at once when another writer is busy.
    pub fn read<T>(&self, f: impl FnOnce(&Store) -> Result<T>) -> Result<T> {
        let _snapshot = self.read_snapshot()?;
        f(self)
    }

    /// Opens a read transaction held until the guard is dropped (`None` inside a
    /// transaction already): the reads made meanwhile see one state of the database.
    /// Nothing may be written while it is held.
    pub fn read_snapshot(&self) -> Result<Option<Transaction<'_>>> {
        if !self.conn.is_autocommit() {
            return Ok(None);
        }
        Ok(Some(self.conn.unchecked_transaction()?))
    }

    /// Makes every later change of a page refuse when the page is not at `revision`
    /// when the change runs (`None`: no expectation). The check is made inside the
    /// change's IMMEDIATE transaction, so no writer can slip in between.
    pub fn expect_revision(&mut self, revision: Option<i64>) {
        self.expected_revision = revision;
    }

    /// The revision later changes expect their page at, if any.
    pub fn expected_revision(&self) -> Option<i64> {
        self.expected_revision
    }

    /// Refuses (inside `tx`) when the expected revision is set and `page_id` is at
    /// another, naming the revisions made since.
    fn check_expected(
        expected: Option<i64>,
        tx: &Transaction<'_>,
        page_id: &str,
        found: i64,
    ) -> Result<()> {
        let Some(expected) = expected else {
            return Ok(());
        };
        if found == expected {
            return Ok(());
        }
        let mut stmt = tx.prepare(
            "SELECT revision, change, author FROM revisions
             WHERE page_id = ?1 AND revision > ?2 ORDER BY revision",
        )?;
        let changes = stmt
            .query_map(params![page_id, expected], |r| {
                let (rev, change, author): (i64, String, Option<String>) =
                    (r.get(0)?, r.get(1)?, r.get(2).unwrap_or(None));
                Ok(match author {
                    Some(a) => format!("{rev} {change} (by {a})"),
                    None => format!("{rev} {change}"),
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Err(StoreError::Moved {
            page: page_id.to_owned(),
            expected,
            found,
            changes: changes
                .into_iter()
                .map(|c| rulebench_core::text::sanitize(&c))
                .collect(),
        })
    }

    /// Whether the database was opened read-only.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    fn refuse_if_read_only(&self, what: &str) -> Result<()> {
        if self.read_only {
            return Err(StoreError::ReadOnly {
                path: self.path.display().to_string(),
                what: what.to_owned(),
            });
        }
        Ok(())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn user_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    fn migrate(&mut self, to: usize) -> Result<()> {
        let from = self.user_version()?;
        if from > MIGRATIONS.len() as i64 {
            return Err(StoreError::TooNew {
                found: from,
                known: MIGRATIONS.len() as i64,
            });
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().take(to).skip(from as usize) {
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            tx.execute_batch(sql)?;
            tx.pragma_update(None, "user_version", (i + 1) as i64)?;
            tx.commit()?;
        }
        Ok(())
    }

    pub fn list_pages(&self) -> Result<Vec<PageSummary>> {
        let mut stmt = self.conn.prepare(
            "SELECT p.id, p.name, p.revision, p.updated_at,
                (SELECT COUNT(*) FROM rules r WHERE r.page_id = p.id),
                (SELECT COUNT(*) FROM dataset_rows d WHERE d.page_id = p.id AND d.side = 'source'),
                (SELECT COUNT(*) FROM dataset_rows d WHERE d.page_id = p.id AND d.side = 'target')
             FROM pages p ORDER BY p.id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(PageSummary {
                id: r.get(0)?,
                name: r.get(1)?,
                revision: r.get(2)?,
                updated_at: r.get(3)?,
                rules: r.get(4)?,
                sources: r.get(5)?,
                targets: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    pub fn page_ids(&self) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare("SELECT id FROM pages ORDER BY id")?;
        let ids = stmt.query_map([], |r| r.get(0))?;
        Ok(ids.collect::<rusqlite::Result<_>>()?)
    }

    pub fn revision(&self, page_id: &str) -> Result<Option<i64>> {
        Ok(self
            .conn
            .query_row("SELECT revision FROM pages WHERE id = ?1", [page_id], |r| {
                r.get(0)
            })
            .optional()?)
    }

    /// Loads a whole page.
    pub fn load(&self, page_id: &str) -> Result<Option<StoredPage>> {
        self.load_but(page_id, None, At::Now)
    }

    /// Loads a page with the rows of `side` left out (a cache hit needs no target rows).
    pub fn load_without(&self, page_id: &str, side: Side) -> Result<Option<StoredPage>> {
        self.load_but(page_id, Some(side), At::Now)
    }

    /// One side's row keys with their keyHashes, in order.
    pub fn row_keys(&self, page_id: &str, side: Side) -> Result<Vec<RowKey>> {
        let mut stmt = self.conn.prepare(
            "SELECT row_key, key_hash FROM dataset_rows WHERE page_id = ?1 AND side = ?2 ORDER BY ord",
        )?;
        let keys = stmt
            .query_map(params![page_id, side.name()], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(keys)
    }

    fn load_but(&self, page_id: &str, without: Option<Side>, at: At) -> Result<Option<StoredPage>> {
        // One read transaction: the page, its rows, rules, overrides and assertions of
        // one state (an export taken during an `import --replace` mixed two).
        self.read(|store| store.load_but_in(page_id, without, at))
    }

    fn load_but_in(
        &self,
        page_id: &str,
        without: Option<Side>,
        at: At,
    ) -> Result<Option<StoredPage>> {
        let sql = match at {
            At::Now => {
                "SELECT name, description, organization_json, source_json, target_json,
                        device_policy_json, selection_policy_json, revision
                 FROM pages WHERE id = ?1 AND ?2 IS NULL"
            }
            At::Revision(_) => {
                "SELECT name, description, organization_json, source_json, target_json,
                        device_policy_json, selection_policy_json, ?2
                 FROM page_log WHERE page_id = ?1 AND revision <= ?2
                 ORDER BY revision DESC LIMIT 1"
            }
        };
        let head = self
            .conn
            .query_row(sql, params![page_id, at.revision()], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, i64>(7)?,
                ))
            })
            .optional()?;
        let Some((name, description, org, source, target, device, selection, revision)) = head
        else {
            return Ok(None);
        };
        let mut source: Dataset = serde_json::from_str(&source).map_err(corrupt("source"))?;
        let mut target: Dataset = serde_json::from_str(&target).map_err(corrupt("target"))?;
        if without != Some(Side::Source) {
            source.rows = self.rows(page_id, Side::Source, at)?;
        }
        if without != Some(Side::Target) {
            target.rows = self.rows(page_id, Side::Target, at)?;
        }
        let page = Page {
            format: PAGE_FORMAT.to_owned(),
            id: page_id.to_owned(),
            name,
            description,
            organization: org
                .map(|o| serde_json::from_str(&o))
                .transpose()
                .map_err(corrupt("organization"))?,
            source,
            target,
            rules: read_rules(&self.conn, page_id, None, at)?,
            device_policy: serde_json::from_str(&device).map_err(corrupt("device policy"))?,
            selection_policy: serde_json::from_str(&selection)
                .map_err(corrupt("selection policy"))?,
            overrides: self.overrides(page_id, at)?,
            assertions: read_assertions(&self.conn, page_id, at)?,
        };
        Ok(Some(StoredPage { page, revision }))
    }

    /// The rows of one side as stored, in order: (key, keyHash, JSON text), for the
    /// engine to parse straight into its own form.
    pub fn stored_rows(&self, page_id: &str, side: Side) -> Result<Vec<(String, String, String)>> {
        let mut stmt = self.conn.prepare(
            "SELECT row_key, key_hash, row_json FROM dataset_rows
             WHERE page_id = ?1 AND side = ?2 ORDER BY ord",
        )?;
        let rows = stmt
            .query_map(params![page_id, side.name()], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// The stored JSON texts of one side's rows, in order.
    pub fn row_texts(&self, page_id: &str, side: Side) -> Result<Vec<String>> {
        self.row_texts_at(page_id, side, At::Now)
    }

    fn row_texts_at(&self, page_id: &str, side: Side, at: At) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT row_json FROM {} WHERE page_id = ?1 AND side = ?2 ORDER BY ord",
            at.table("dataset_rows")
        ))?;
        let texts = stmt
            .query_map(params![page_id, side.name()], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(texts)
    }

    fn rows(&self, page_id: &str, side: Side, at: At) -> Result<Vec<rulebench_core::model::Row>> {
        self.row_texts_at(page_id, side, at)?
            .iter()
            .map(|t| serde_json::from_str(t).map_err(corrupt(format!("{} row", side.name()))))
            .collect()
    }

    fn overrides(&self, page_id: &str, at: At) -> Result<Vec<Override>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT source_key, target_key, source_key_hash, target_key_hash, value, note
             FROM {} WHERE page_id = ?1 ORDER BY ord",
            at.table("overrides")
        ))?;
        let rows = stmt.query_map([page_id], |r| {
            let source_key: Option<String> = r.get(0)?;
            let target_key: Option<String> = r.get(1)?;
            let source_hash: String = r.get(2)?;
            let target_hash: String = r.get(3)?;
            Ok(Override {
                source_key_hash: source_key.is_none().then_some(source_hash),
                target_key_hash: target_key.is_none().then_some(target_hash),
                source_key,
                target_key,
                value: r.get(4)?,
                note: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Stores a new page (or replaces one) in one transaction. A replaced page keeps
    /// counting revisions from where it was.
    pub fn insert_page(&mut self, page: &Page, replace: bool) -> Result<i64> {
        self.insert_page_as(page, replace, None)
    }

    /// [`Store::insert_page`], the revision log saying `what` (else "imported" or
    /// "replaced by import").
    pub fn insert_page_as(
        &mut self,
        page: &Page,
        replace: bool,
        what: Option<&str>,
    ) -> Result<i64> {
        self.refuse_if_read_only("importing a page")?;
        let expected = self.expected_revision;
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let old: Option<i64> = tx
            .query_row(
                "SELECT revision FROM pages WHERE id = ?1",
                [&page.id],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(found) = old {
            Self::check_expected(expected, &tx, &page.id, found)?;
        }
        let revision = old.map_or(1, |r| r + 1);
        if old.is_some() {
            debug_assert!(replace, "the app checks for existing pages");
            // The page keeps its history: its revision moves first, so that the removal
            // of its old content is logged under the new revision.
            tx.execute(
                "UPDATE pages SET revision = ?2 WHERE id = ?1",
                params![page.id, revision],
            )?;
            for table in [
                "dataset_rows",
                "rules",
                "overrides",
                "assertions",
                "compat_results",
                "assertion_results",
            ] {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE page_id = ?1"),
                    [&page.id],
                )?;
            }
        }
        let at = now();
        let meta = |d: &Dataset| to_json(&d.without_rows());
        tx.execute(
            "INSERT INTO pages (id, name, description, organization_json, source_json, target_json,
                device_policy_json, selection_policy_json, revision, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)
             ON CONFLICT (id) DO UPDATE SET name = excluded.name,
                description = excluded.description, organization_json = excluded.organization_json,
                source_json = excluded.source_json, target_json = excluded.target_json,
                device_policy_json = excluded.device_policy_json,
                selection_policy_json = excluded.selection_policy_json,
                revision = excluded.revision, updated_at = excluded.updated_at",
            params![
                page.id,
                page.name,
                page.description,
                page.organization.as_ref().map(to_json),
                meta(&page.source),
                meta(&page.target),
                to_json(&page.device_policy),
                to_json(&page.selection_policy),
                revision,
                at
            ],
        )?;
        for side in [Side::Source, Side::Target] {
            insert_rows(&tx, &page.id, side, page.dataset(side), &mut |_| {})?;
        }
        let org = org_id(page);
        for (ord, rule) in page.rules.iter().enumerate() {
            upsert_rule(&tx, &page.id, &org, rule, ord as i64)?;
            record_rule(&tx, &page.id, &rule.id, revision, Some(rule))?;
        }
        for (ord, o) in page.overrides.iter().enumerate() {
            upsert_override(&tx, &page.id, o, ord as i64)?;
        }
        if !page.assertions.is_empty() {
            ops::set_assertions(&tx, &page.id, &page.assertions)?;
        }
        let what = what.unwrap_or(if old.is_some() {
            "replaced by import"
        } else {
            "imported"
        });
        tx.execute(
            revision_sql(self.schema),
            params![page.id, revision, at, what, self.author],
        )?;
        tx.commit()?;
        Ok(revision)
    }

    /// Applies one change to a page in one transaction and increments its revision.
    /// Returns the new revision.
    pub fn change<F>(&mut self, page_id: &str, what: &str, f: F) -> Result<i64>
    where
        F: FnOnce(&Transaction<'_>, i64) -> Result<()>,
    {
        self.change_checked(page_id, what, f)
    }

    /// [`Store::change`] whose step may refuse with an error of its own: the
    /// transaction is then rolled back (no revision, nothing written). The transaction
    /// is IMMEDIATE: a read-modify-write inside it cannot lose another writer's change.
    pub fn change_checked<F, E>(
        &mut self,
        page_id: &str,
        what: &str,
        f: F,
    ) -> std::result::Result<i64, E>
    where
        F: FnOnce(&Transaction<'_>, i64) -> std::result::Result<(), E>,
        E: From<StoreError>,
    {
        let revision = self.change_if(page_id, what, |tx, rev| f(tx, rev).map(|()| true))?;
        Ok(revision.expect("a step that always changes"))
    }

    /// [`Store::change_checked`] whose step says whether it changed anything: when it
    /// did not (the same policy value, the same override again), the transaction is
    /// rolled back and no revision is made (`None`).
    pub fn change_if<F, E>(
        &mut self,
        page_id: &str,
        what: &str,
        f: F,
    ) -> std::result::Result<Option<i64>, E>
    where
        F: FnOnce(&Transaction<'_>, i64) -> std::result::Result<bool, E>,
        E: From<StoreError>,
    {
        self.refuse_if_read_only(what)?;
        let expected = self.expected_revision;
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(StoreError::from)?;
        let revision: i64 = tx
            .query_row(
                "UPDATE pages SET revision = revision + 1, updated_at = ?2 WHERE id = ?1 RETURNING revision",
                params![page_id, now()],
                |r| r.get(0),
            )
            .optional()
            .map_err(StoreError::from)?
            .ok_or_else(|| StoreError::PageGone {
                page: page_id.to_owned(),
            })?;
        Self::check_expected(expected, &tx, page_id, revision - 1)?;
        if !f(&tx, revision)? {
            // Dropping the transaction rolls it back: the revision stays as it was.
            return Ok(None);
        }
        tx.execute(
            revision_sql(self.schema),
            params![page_id, revision, now(), what, self.author],
        )
        .map_err(StoreError::from)?;
        tx.commit().map_err(StoreError::from)?;
        Ok(Some(revision))
    }

    /// Gives a page a new id, everything it owns (rows, rules, overrides, history,
    /// assertions, cached results) moving with it, as one change: a new revision that
    /// says so. False when there is no page `old`; an error when `new` is taken.
    pub fn rename_page(&mut self, old: &str, new: &str) -> Result<Option<i64>> {
        self.refuse_if_read_only("renaming a page")?;
        let (expected, schema) = (self.expected_revision, self.schema);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if let Some(found) = tx
            .query_row("SELECT revision FROM pages WHERE id = ?1", [old], |r| {
                r.get(0)
            })
            .optional()?
        {
            Self::check_expected(expected, &tx, old, found)?;
        }
        let exists = |id: &str| -> Result<bool> {
            Ok(tx
                .query_row("SELECT 1 FROM pages WHERE id = ?1", [id], |_| Ok(()))
                .optional()?
                .is_some())
        };
        if !exists(old)? {
            return Ok(None);
        }
        if exists(new)? {
            return Err(StoreError::Unreadable {
                what: format!("page {new}"),
                message: "a page with this id exists already".into(),
            });
        }
        // The children follow the page within this transaction; the keys are checked
        // at its end.
        tx.pragma_update(None, "defer_foreign_keys", "ON")?;
        tx.execute("UPDATE pages SET id = ?2 WHERE id = ?1", params![old, new])?;
        for table in PAGE_TABLES {
            tx.execute(
                &format!("UPDATE {table} SET page_id = ?2 WHERE page_id = ?1"),
                params![old, new],
            )?;
        }
        if schema >= 7 {
            // Drafts follow the page (a workbench that follows the rename finds them).
            tx.execute(
                "UPDATE drafts SET page_id = ?2 WHERE page_id = ?1",
                params![old, new],
            )?;
        }
        let revision: i64 = tx.query_row(
            "UPDATE pages SET revision = revision + 1, updated_at = ?2 WHERE id = ?1 RETURNING revision",
            params![new, now()],
            |r| r.get(0),
        )?;
        tx.execute(
            revision_sql(self.schema),
            params![
                new,
                revision,
                now(),
                format!("renamed from {old}"),
                self.author
            ],
        )?;
        tx.commit()?;
        Ok(Some(revision))
    }

    pub fn delete_page(&mut self, page_id: &str) -> Result<bool> {
        self.refuse_if_read_only("deleting a page")?;
        let (expected, schema) = (self.expected_revision, self.schema);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if let Some(found) = tx
            .query_row("SELECT revision FROM pages WHERE id = ?1", [page_id], |r| {
                r.get(0)
            })
            .optional()?
        {
            Self::check_expected(expected, &tx, page_id, found)?;
        }
        let gone = tx.execute("DELETE FROM pages WHERE id = ?1", [page_id])? > 0;
        if schema >= 7 {
            tx.execute("DELETE FROM drafts WHERE page_id = ?1", [page_id])?;
        }
        tx.commit()?;
        Ok(gone)
    }

    /// Row counts of every table (tests compare them to prove nothing changed).
    pub fn fingerprint(&self) -> Result<Vec<(String, i64)>> {
        let tables: Vec<&str> = std::iter::once("pages")
            .chain(PAGE_TABLES.iter().copied())
            .collect();
        let drafts = (self.schema >= 7).then_some("drafts");
        tables
            .iter()
            .copied()
            .chain(drafts)
            .collect::<Vec<_>>()
            .iter()
            .map(|t| {
                let n: i64 =
                    self.conn
                        .query_row(&format!("SELECT COUNT(*) FROM {t}"), [], |r| r.get(0))?;
                Ok((t.to_string(), n))
            })
            .collect()
    }

    /// Who this store's changes and drafts are by (the login name; `""` when the
    /// system does not say).
    pub fn author(&self) -> &str {
        self.author.as_deref().unwrap_or("")
    }

    /// A value of the database's own `meta` table.
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?)
    }

    pub fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        self.refuse_if_read_only("recording a setting")?;
        self.conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
            params![key, value],
        )?;
        Ok(())
    }

    /// Direct access for the change closures' helpers and for tests.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }
}

/// A page's rules in order, or only the one with id `only` (on a connection or inside a
/// transaction).
fn read_rules(conn: &Connection, page_id: &str, only: Option<&str>, at: At) -> Result<Vec<Rule>> {
    // A database older than schema 6 has no `expression` column (tests keep old ones).
    let expression = if schema_of(conn)? >= 6 {
        "expression, warning_json"
    } else {
        "NULL, NULL"
    };
    let mut stmt = conn.prepare(&format!(
        "SELECT id, name, required, weight, category, description, logic_json, {expression}
         FROM {} WHERE page_id = ?1 AND (?2 IS NULL OR id = ?2) ORDER BY ord",
        at.table("rules")
    ))?;
    let raw = stmt
        .query_map(params![page_id, only], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, bool>(2)?,
                r.get::<_, f64>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, Option<String>>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, Option<String>>(7)?,
                r.get::<_, Option<String>>(8)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    raw.into_iter()
        .map(
            |(id, name, required, weight, category, description, logic, expression, warning)| {
                Ok(Rule {
                    expression,
                    warning: warning
                        .map(|w| serde_json::from_str(&w))
                        .transpose()
                        .map_err(corrupt(format!("rule {id}'s warning")))?,
                    logic: serde_json::from_str(&logic).map_err(corrupt(format!("rule {id}")))?,
                    id,
                    name,
                    required,
                    weight,
                    category,
                    description,
                })
            },
        )
        .collect()
}

/// A page's assertions, in order (on a connection or inside a transaction).
fn read_assertions(conn: &Connection, page_id: &str, at: At) -> Result<Vec<Assertion>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT id, json FROM {} WHERE page_id = ?1 ORDER BY ord",
        at.table("assertions")
    ))?;
    let raw = stmt
        .query_map([page_id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    raw.into_iter()
        .map(|(id, json)| serde_json::from_str(&json).map_err(corrupt(format!("assertion {id}"))))
        .collect()
}

fn org_id(page: &Page) -> String {
    page.organization
        .as_ref()
        .map_or_else(|| "local".to_owned(), |o| o.id.clone())
}

fn insert_rows(
    tx: &Transaction<'_>,
    page_id: &str,
    side: Side,
    d: &Dataset,
    on_row: &mut dyn FnMut(usize),
) -> Result<()> {
    let rows = d.rows.iter().map(|row| {
        let key = d.row_key(row);
        StoredRow {
            hash: key_hash(&key),
            key,
            json: serde_json::to_string(row).expect("rows serialize"),
        }
    });
    insert_stored(tx, page_id, side, rows, on_row)
}

/// Writes one side's rows, in their stored form and order, over what is stored: a row
/// that is the same at its place is not written (so a reload that changes one row of
/// 100,000 logs one row in the history, and costs a comparison for the others), a
/// changed or new one is, and the rows past the new end are removed.
fn insert_stored<R: std::borrow::Borrow<StoredRow>>(
    tx: &Transaction<'_>,
    page_id: &str,
    side: Side,
    rows: impl Iterator<Item = R>,
    on_row: &mut dyn FnMut(usize),
) -> Result<()> {
    let mut stmt = tx.prepare(
        "INSERT INTO dataset_rows (page_id, side, ord, row_key, key_hash, row_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (page_id, side, ord) DO UPDATE SET row_key = excluded.row_key,
             key_hash = excluded.key_hash, row_json = excluded.row_json
         WHERE dataset_rows.row_json IS NOT excluded.row_json
            OR dataset_rows.row_key IS NOT excluded.row_key",
    )?;
    let mut n = 0;
    for (ord, row) in rows.enumerate() {
        let row = row.borrow();
        stmt.execute(params![
            page_id,
            side.name(),
            ord as i64,
            row.key,
            row.hash,
            row.json
        ])?;
        n = ord + 1;
        on_row(n);
    }
    tx.execute(
        "DELETE FROM dataset_rows WHERE page_id = ?1 AND side = ?2 AND ord >= ?3",
        params![page_id, side.name(), n as i64],
    )?;
    Ok(())
}

/// Inserts or updates a rule at a position.
/// The schema version of the database `conn` is on.
fn schema_of(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

pub fn upsert_rule(
    tx: &Transaction<'_>,
    page_id: &str,
    org: &str,
    rule: &Rule,
    ord: i64,
) -> Result<()> {
    // A database older than schema 6 (tests keep old ones) has no `expression`.
    let with_expression = schema_of(tx)? >= 6;
    let (col, val, set) = if with_expression {
        (
            ", expression, warning_json",
            ", ?11, ?12",
            ", expression = excluded.expression, warning_json = excluded.warning_json",
        )
    } else {
        ("", "", "")
    };
    let logic = rule.logic.to_string();
    let warning = rule.warning.as_ref().map(to_json);
    let mut values: Vec<&dyn rusqlite::ToSql> = vec![
        &page_id,
        &org,
        &rule.id,
        &ord,
        &rule.name,
        &rule.required,
        &rule.weight,
        &rule.category,
        &rule.description,
        &logic,
    ];
    if with_expression {
        values.push(&rule.expression);
        values.push(&warning);
    }
    tx.execute(
        &format!(
            "INSERT INTO rules (page_id, organization_id, id, ord, name, required, weight, category, description, logic_json{col})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10{val})
             ON CONFLICT (page_id, id) DO UPDATE SET ord = excluded.ord, name = excluded.name,
                required = excluded.required, weight = excluded.weight, category = excluded.category,
                description = excluded.description, logic_json = excluded.logic_json{set}"
        ),
        values.as_slice(),
    )?;
    Ok(())
}

fn record_rule(
    tx: &Transaction<'_>,
    page_id: &str,
    rule_id: &str,
    revision: i64,
    rule: Option<&Rule>,
) -> Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO rule_history (page_id, rule_id, revision, rule_json) VALUES (?1, ?2, ?3, ?4)",
        params![page_id, rule_id, revision, rule.map(to_json)],
    )?;
    Ok(())
}

fn upsert_override(tx: &Transaction<'_>, page_id: &str, o: &Override, ord: i64) -> Result<()> {
    tx.execute(
        "INSERT INTO overrides (page_id, source_key_hash, target_key_hash, source_key, target_key, value, note, ord)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (page_id, source_key_hash, target_key_hash) DO UPDATE SET
            source_key = excluded.source_key, target_key = excluded.target_key,
            value = excluded.value, note = excluded.note",
        params![
            page_id,
            o.source_hash().unwrap_or_default(),
            o.target_hash().unwrap_or_default(),
            o.source_key,
            o.target_key,
            o.value,
            o.note,
            ord
        ],
    )?;
    Ok(())
}

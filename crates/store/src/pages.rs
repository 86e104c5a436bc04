//! The store itself: opening and migrating a database, importing, reading and changing
//! pages in one IMMEDIATE transaction per change.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use rulebench_core::model::{Dataset, HashedOverride, KeyHash, Override, PAGE_FORMAT, Page, Side};

use crate::error::{Result, StoreError};
use crate::ops;
use crate::records::*;
use crate::rows::*;
use crate::schema::*;

/// The page cache of a connection, in KiB as `PRAGMA cache_size` takes it (negative):
/// 64 MiB (the default is 2 MiB): replacing 100,000 rows updates the key index in random
/// order, and a small cache re-reads its pages from the file.
const PAGE_CACHE_KIB: i64 = -65536;

/// The page cache while one row is looked up by a scan ([`Store::row_by_hash`]).
const SCAN_CACHE_KIB: i64 = -2048;

pub struct Store {
    pub(crate) conn: Connection,
    /// The database file.
    pub(crate) path: std::path::PathBuf,
    /// The schema version found when opening (0: a new database).
    pub opened_at_version: i64,
    /// Opened read-only: changes are refused, caches are not written.
    pub(crate) read_only: bool,
    /// Who the revisions made here are by (the login name, when the system says).
    pub(crate) author: Option<String>,
    /// The schema version the database is at (tests keep old ones).
    pub(crate) schema: i64,
    /// The revision the next changes expect their page at (`--if-revision`): a page at
    /// another is refused, inside the change's transaction.
    pub(crate) expected_revision: Option<i64>,
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
        conn.pragma_update(None, "cache_size", PAGE_CACHE_KIB)?;
        // Statement journals (one per row a trigger logs) in memory, not in a temporary
        // file: a 1M-row import wrote 14.5 GB to one.
        conn.pragma_update(None, "temp_store", "MEMORY")?;
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
    pub(crate) fn check_expected(
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

    pub(crate) fn refuse_if_read_only(&self, what: &str) -> Result<()> {
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

    pub(crate) fn migrate(&mut self, to: usize) -> Result<()> {
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
        self.load_but(page_id, &[], At::Now)
    }

    /// Loads a page with the rows of `side` left out (a cache hit needs no target rows).
    pub fn load_without(&self, page_id: &str, side: Side) -> Result<Option<StoredPage>> {
        self.load_but(page_id, &[side], At::Now)
    }

    /// A page without the rows of either side (their counts are still known here), for
    /// work that reads one row ([`Store::row_by_hash`]).
    pub fn load_head(&self, page_id: &str) -> Result<Option<StoredPage>> {
        self.load_but(page_id, &[Side::Source, Side::Target], At::Now)
    }

    /// One side's row whose keyHash is the first of `hashes` (lowercase hex) that a row
    /// has, as stored: (its index, key, keyHash, JSON text). Rows are not indexed by
    /// keyHash (the index doubled the time of writing a large dataset, see migration
    /// 4): this scans the side once for all of them, in a small page cache, so that one
    /// row read does not keep the side's pages.
    pub fn row_by_hash(
        &self,
        page_id: &str,
        side: Side,
        hashes: &[String],
    ) -> Result<Option<(usize, String, String, String)>> {
        if hashes.is_empty() {
            return Ok(None);
        }
        let wanted = vec!["?"; hashes.len()].join(", ");
        let sql = format!(
            "SELECT ord, row_key, key_hash, row_json FROM dataset_rows
             WHERE page_id = ? AND side = ? AND key_hash IN ({wanted}) ORDER BY ord"
        );
        self.conn
            .pragma_update(None, "cache_size", SCAN_CACHE_KIB)?;
        let found = (|| -> rusqlite::Result<Vec<(usize, String, String, String)>> {
            let mut stmt = self.conn.prepare(&sql)?;
            let params = [page_id, side.name()]
                .into_iter()
                .chain(hashes.iter().map(String::as_str));
            stmt.query_map(rusqlite::params_from_iter(params), |r| {
                Ok((
                    r.get::<_, i64>(0)? as usize,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                ))
            })?
            .collect()
        })();
        self.conn
            .pragma_update(None, "cache_size", PAGE_CACHE_KIB)?;
        let found = found?;
        // The first hash asked for wins; among rows of one hash, the first row.
        Ok(hashes
            .iter()
            .find_map(|h| found.iter().find(|(_, _, hash, _)| hash == h).cloned()))
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

    pub(crate) fn load_but(
        &self,
        page_id: &str,
        without: &[Side],
        at: At,
    ) -> Result<Option<StoredPage>> {
        // One read transaction: the page, its rows, rules, overrides and assertions of
        // one state (an export taken during an `import --replace` mixed two).
        self.read(|store| store.load_but_in(page_id, without, at))
    }

    pub(crate) fn load_but_in(
        &self,
        page_id: &str,
        without: &[Side],
        at: At,
    ) -> Result<Option<StoredPage>> {
        self.load_page_in(page_id, without, at, true)
    }

    /// The page without either side's rows and without its overrides (an empty list):
    /// for one selection, whose own overrides [`Store::source_overrides`] reads, and for
    /// every selection, whose overrides [`Store::override_hashes`] reads without their
    /// keys (a page's 100,000 overrides are not loaded as they are written).
    pub fn load_head_without_overrides(&self, page_id: &str) -> Result<Option<StoredPage>> {
        self.read(|store| {
            store.load_page_in(page_id, &[Side::Source, Side::Target], At::Now, false)
        })
    }

    fn load_page_in(
        &self,
        page_id: &str,
        without: &[Side],
        at: At,
        overrides: bool,
    ) -> Result<Option<StoredPage>> {
        // A database before migration 12 (read without migrating) links no tables.
        let tables = if self.schema >= crate::schema::EXPECTATION_TABLES {
            "expectations_json"
        } else {
            "NULL"
        };
        let sql = match at {
            At::Now => format!(
                "SELECT name, description, organization_json, source_json, target_json,
                        device_policy_json, selection_policy_json, revision, {tables}
                 FROM pages WHERE id = ?1 AND ?2 IS NULL"
            ),
            At::Revision(_) => format!(
                "SELECT name, description, organization_json, source_json, target_json,
                        device_policy_json, selection_policy_json, ?2, {tables}
                 FROM page_log WHERE page_id = ?1 AND revision <= ?2
                 ORDER BY revision DESC LIMIT 1"
            ),
        };
        let head = self
            .conn
            .query_row(&sql, params![page_id, at.revision()], |r| {
                Ok((
                    (
                        r.get::<_, String>(0)?,
                        r.get::<_, Option<String>>(1)?,
                        r.get::<_, Option<String>>(2)?,
                    ),
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, i64>(7)?,
                    r.get::<_, Option<String>>(8)?,
                ))
            })
            .optional()?;
        let Some(((name, description, org), source, target, device, selection, revision, tables)) =
            head
        else {
            return Ok(None);
        };
        let mut source: Dataset = serde_json::from_str(&source).map_err(corrupt("source"))?;
        let mut target: Dataset = serde_json::from_str(&target).map_err(corrupt("target"))?;
        if !without.contains(&Side::Source) {
            source.rows = self.rows(page_id, Side::Source, at)?;
        }
        if !without.contains(&Side::Target) {
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
            overrides: if overrides {
                self.overrides(page_id, at)?
            } else {
                vec![]
            },
            assertions: read_assertions(&self.conn, page_id, at)?,
            expectations: tables
                .map(|t| serde_json::from_str(&t))
                .transpose()
                .map_err(corrupt("expectation tables"))?
                .unwrap_or_default(),
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

    pub(crate) fn row_texts_at(&self, page_id: &str, side: Side, at: At) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT row_json FROM {} WHERE page_id = ?1 AND side = ?2 ORDER BY ord",
            at.table_in("dataset_rows", self.schema)
        ))?;
        let texts = stmt
            .query_map(params![page_id, side.name()], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(texts)
    }

    pub(crate) fn rows(
        &self,
        page_id: &str,
        side: Side,
        at: At,
    ) -> Result<Vec<rulebench_core::model::Row>> {
        self.row_texts_at(page_id, side, at)?
            .iter()
            .map(|t| serde_json::from_str(t).map_err(corrupt(format!("{} row", side.name()))))
            .collect()
    }

    pub(crate) fn overrides(&self, page_id: &str, at: At) -> Result<Vec<Override>> {
        self.overrides_where(page_id, at, None)
    }

    /// Every override of the page as it is now, as the matrix places them: by keyHash,
    /// in no order (the table's key makes each pair unique). No key is read.
    pub fn override_hashes(&self, page_id: &str) -> Result<Vec<HashedOverride>> {
        let mut stmt = self.conn.prepare(
            "SELECT source_key_hash, target_key_hash, value, note FROM overrides
             WHERE page_id = ?1",
        )?;
        let rows = stmt
            .query_map([page_id], |r| {
                // Read in place as bytes: no text is allocated per override.
                let hash = |i: usize| -> rusqlite::Result<Option<KeyHash>> {
                    Ok(r.get_ref(i)?.as_str().ok().and_then(KeyHash::from_hex))
                };
                Ok(HashedOverride {
                    source_hash: hash(0)?,
                    target_hash: hash(1)?,
                    value: r.get(2)?,
                    note: r.get(3)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// The overrides of one source of the page as it is now, by the source's keyHash
    /// (lowercase hex), in page order: read through the table's key, not a scan.
    pub fn source_overrides(&self, page_id: &str, source_hash: &str) -> Result<Vec<Override>> {
        self.overrides_where(page_id, At::Now, Some(source_hash))
    }

    fn overrides_where(
        &self,
        page_id: &str,
        at: At,
        source_hash: Option<&str>,
    ) -> Result<Vec<Override>> {
        // One source's: a seek on the table's key (page, source keyHash, target keyHash).
        let one = if source_hash.is_some() {
            "AND source_key_hash = ?2"
        } else {
            "AND ?2 IS NULL"
        };
        let mut stmt = self.conn.prepare(&format!(
            "SELECT source_key, target_key, source_key_hash, target_key_hash, value, note
             FROM {} WHERE page_id = ?1 {one} ORDER BY ord",
            at.table("overrides")
        ))?;
        let rows = stmt.query_map(params![page_id, source_hash], |r| {
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
            // From schema 8 on, the rows are written over (their changes logged by
            // the writer); before, removed and written anew (logged by triggers).
            if self.schema < ROWS_LOGGED_ON_CHANGE {
                tx.execute("DELETE FROM dataset_rows WHERE page_id = ?1", [&page.id])?;
            }
            for table in [
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
        // Before migration 12 (a store opened at an older schema, in tests) a page links
        // no tables.
        let linked = self.schema >= crate::schema::EXPECTATION_TABLES;
        let (column, value, set) = if linked {
            (
                ", expectations_json",
                ", ?11",
                ", expectations_json = excluded.expectations_json",
            )
        } else {
            ("", "", "")
        };
        let sql = format!(
            "INSERT INTO pages (id, name, description, organization_json, source_json, target_json,
                device_policy_json, selection_policy_json, revision, created_at, updated_at
                {column})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10 {value})
             ON CONFLICT (id) DO UPDATE SET name = excluded.name,
                description = excluded.description, organization_json = excluded.organization_json,
                source_json = excluded.source_json, target_json = excluded.target_json,
                device_policy_json = excluded.device_policy_json,
                selection_policy_json = excluded.selection_policy_json{set},
                revision = excluded.revision, updated_at = excluded.updated_at"
        );
        let tables_json = (!page.expectations.is_empty()).then(|| to_json(&page.expectations));
        let mut args: Vec<&dyn rusqlite::ToSql> = Vec::new();
        let (org, source, target, device, selection) = (
            page.organization.as_ref().map(to_json),
            meta(&page.source),
            meta(&page.target),
            to_json(&page.device_policy),
            to_json(&page.selection_policy),
        );
        args.extend([
            &page.id as &dyn rusqlite::ToSql,
            &page.name,
            &page.description,
            &org,
            &source,
            &target,
            &device,
            &selection,
            &revision,
            &at,
        ]);
        if linked {
            args.push(&tables_json);
        }
        tx.execute(&sql, args.as_slice())?;
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
        self.change_logged(page_id, what, false, |tx, rev| {
            Ok(f(tx, rev)?.then(|| what.to_owned()))
        })
    }

    /// [`Store::change_checked`] for a step that writes many rows of the page (a
    /// dataset import), and says what it changed (the revision log's line) once it ran:
    /// a streamed import counts its rows as it writes them. `doing` names the change in
    /// a refusal (a read-only database).
    ///
    /// Foreign keys are not checked in its transaction (`PRAGMA foreign_keys` is off
    /// around it, on again after): every row it writes belongs to the page whose
    /// revision the transaction moved first, so none can lack its page, and a check
    /// per row cost a tenth of a 1M-row import.
    pub fn change_rows<F, E>(
        &mut self,
        page_id: &str,
        doing: &str,
        f: F,
    ) -> std::result::Result<i64, E>
    where
        F: FnOnce(&Transaction<'_>, i64) -> std::result::Result<String, E>,
        E: From<StoreError>,
    {
        let revision = self.change_logged(page_id, doing, true, |tx, rev| f(tx, rev).map(Some))?;
        Ok(revision.expect("a step that always changes"))
    }

    /// One change: the page's revision moves, `f` runs, and the revision is logged
    /// with the line `f` returns (`None`: nothing changed; all is rolled back).
    /// `rows`: foreign keys unchecked in the transaction (see [`Store::change_rows`]).
    fn change_logged<F, E>(
        &mut self,
        page_id: &str,
        doing: &str,
        rows: bool,
        f: F,
    ) -> std::result::Result<Option<i64>, E>
    where
        F: FnOnce(&Transaction<'_>, i64) -> std::result::Result<Option<String>, E>,
        E: From<StoreError>,
    {
        self.refuse_if_read_only(doing)?;
        if !rows {
            return self.change_in_transaction(page_id, f);
        }
        // (A no-op inside a transaction: set around it, and on again however the step
        // ends, a panic included.)
        self.conn
            .pragma_update(None, "foreign_keys", "OFF")
            .map_err(StoreError::from)?;
        let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.change_in_transaction(page_id, f)
        }));
        let on = self.conn.pragma_update(None, "foreign_keys", "ON");
        let done = done.unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        on.map_err(StoreError::from)?;
        Ok(done)
    }

    fn change_in_transaction<F, E>(
        &mut self,
        page_id: &str,
        f: F,
    ) -> std::result::Result<Option<i64>, E>
    where
        F: FnOnce(&Transaction<'_>, i64) -> std::result::Result<Option<String>, E>,
        E: From<StoreError>,
    {
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
        let Some(what) = f(&tx, revision)? else {
            // Dropping the transaction rolls it back: the revision stays as it was.
            return Ok(None);
        };
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
        if schema >= crate::schema::VIEWS {
            // A view left under the new id (a page of that id removed before) goes: the
            // renamed page's own view takes its place.
            tx.execute("DELETE FROM views WHERE page_id = ?1", [new])?;
            tx.execute(
                "UPDATE views SET page_id = ?2 WHERE page_id = ?1",
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
        if schema >= crate::schema::VIEWS {
            tx.execute("DELETE FROM views WHERE page_id = ?1", [page_id])?;
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

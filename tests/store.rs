//! The SQLite store: migrations, pragmas, transactional changes, cascades, the result
//! cache and rule history.

use std::path::{Path, PathBuf};

use rusqlite::params;
use serde_json::{Value, json};
use tempfile::TempDir;

use rulebench_core::model::{Override, Page, Rule};
use rulebench_store::{MIGRATIONS, Store, StoreError, ops};

const LLM_CHAT: &str = include_str!("data/seed-llm-chat-clients.json");
const LOANS: &str = include_str!("../sample-pages/loan-eligibility.json");
const PROVIDERS: &str = include_str!("../sample-pages/provider-capabilities.json");

/// Every table that holds a page's data, keyed by `page_id`.
const PAGE_TABLES: [&str; 7] = [
    "dataset_rows",
    "rules",
    "overrides",
    "revisions",
    "rule_history",
    "compat_results",
    "assertions",
];

fn page(text: &str) -> Page {
    serde_json::from_str(text).expect("sample page parses")
}

fn db() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("rulebench.db");
    (dir, path)
}

fn open(path: &Path) -> Store {
    Store::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()))
}

fn latest() -> i64 {
    MIGRATIONS.len() as i64
}

/// The schema as SQLite records it, for comparing before and after.
fn schema(store: &Store) -> Vec<(String, String, Option<String>)> {
    let conn = store.connection();
    let mut stmt = conn
        .prepare("SELECT type, name, sql FROM sqlite_master ORDER BY type, name")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

fn table_exists(store: &Store, name: &str) -> bool {
    store
        .connection()
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [name],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
        == 1
}

/// How many rows of `table` belong to `page_id`.
fn count_for(store: &Store, table: &str, page_id: &str) -> i64 {
    store
        .connection()
        .query_row(
            &format!("SELECT COUNT(*) FROM {table} WHERE page_id = ?1"),
            [page_id],
            |r| r.get(0),
        )
        .unwrap()
}

fn revisions(store: &Store, page_id: &str) -> Vec<(i64, String)> {
    let conn = store.connection();
    let mut stmt = conn
        .prepare("SELECT revision, change FROM revisions WHERE page_id = ?1 ORDER BY revision")
        .unwrap();
    stmt.query_map([page_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

fn edited(rule: &Rule, logic: Value) -> Rule {
    Rule {
        logic,
        weight: rule.weight + 1.5,
        description: Some("edited".into()),
        ..rule.clone()
    }
}

// --- migrations ---------------------------------------------------------------------

#[test]
fn a_new_database_migrates_to_the_latest_version_and_reopening_is_a_no_op() {
    let (_dir, path) = db();
    let store = open(&path);
    assert_eq!(store.opened_at_version, 0, "a new database starts at 0");
    assert_eq!(store.user_version().unwrap(), latest());
    for table in ["pages", "meta"].iter().chain(PAGE_TABLES.iter()) {
        assert!(table_exists(&store, table), "table {table}");
    }
    store.set_meta("probe", "kept").unwrap();
    let before = schema(&store);
    drop(store);

    let store = open(&path);
    assert_eq!(
        store.opened_at_version,
        latest(),
        "second open finds it migrated"
    );
    assert_eq!(store.user_version().unwrap(), latest());
    assert_eq!(schema(&store), before, "second open changes no schema");
    assert_eq!(store.meta("probe").unwrap().as_deref(), Some("kept"));
    assert!(store.page_ids().unwrap().is_empty());
}

#[test]
fn a_first_schema_database_with_a_page_upgrades_and_the_page_loads_intact() {
    let (_dir, path) = db();
    let mut pages = [page(LLM_CHAT), page(PROVIDERS)];
    // Assertions arrive with migration 3 and rule conditions with migration 9: a
    // first-schema database never held any.
    pages.iter_mut().for_each(|p| {
        p.assertions.clear();
        p.rules.iter_mut().for_each(|r| r.applies_when = None);
    });
    {
        let mut old = Store::open_at(&path, 1).expect("open at the first schema");
        assert_eq!(old.user_version().unwrap(), 1);
        assert!(!table_exists(&old, "meta"), "meta arrives with migration 2");
        for p in &pages {
            assert_eq!(old.insert_page(p, false).unwrap(), 1);
        }
    }
    let store = open(&path);
    assert_eq!(store.opened_at_version, 1);
    assert_eq!(store.user_version().unwrap(), latest());
    assert!(table_exists(&store, "meta"));
    let index: i64 = store
        .connection()
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' \
             AND name = 'compat_results_by_revision'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(index, 1, "migration 2's index");
    // Migration 4: rows clustered by (page, side, order), no index on random keyHashes.
    let (sql, indexes): (String, i64) = store
        .connection()
        .query_row(
            "SELECT sql, (SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' \
             AND tbl_name = 'dataset_rows') FROM sqlite_master WHERE name = 'dataset_rows'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(
        sql.contains("WITHOUT ROWID") && !sql.contains("UNIQUE"),
        "{sql}"
    );
    assert_eq!(indexes, 0, "no index beside the primary key");
    // Migration 13: overrides clustered by (page, source, target), their log triggers
    // remade, and a page's overrides read as one range of the table (no look-up of each
    // through an index).
    let (sql, indexes, triggers): (String, i64, i64) = store
        .connection()
        .query_row(
            "SELECT sql, (SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' \
             AND tbl_name = 'overrides'), (SELECT COUNT(*) FROM sqlite_master \
             WHERE type = 'trigger' AND tbl_name = 'overrides') \
             FROM sqlite_master WHERE name = 'overrides'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert!(sql.contains("WITHOUT ROWID"), "{sql}");
    assert_eq!((indexes, triggers), (0, 3));
    let plan: String = store
        .connection()
        .query_row(
            "EXPLAIN QUERY PLAN SELECT source_key_hash, target_key_hash, value, note \
             FROM overrides WHERE page_id = 'x'",
            [],
            |r| r.get(3),
        )
        .unwrap();
    assert!(plan.contains("USING PRIMARY KEY (page_id=?)"), "{plan}");
    let read = store.override_hashes(&pages[0].id).unwrap();
    assert_eq!(read.len(), pages[0].overrides.len());
    assert!(
        read.iter()
            .all(|o| o.source_hash.is_some() && o.target_hash.is_some())
    );
    let fk_problems: i64 = store
        .connection()
        .query_row("SELECT COUNT(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(fk_problems, 0);
    for p in &pages {
        let stored = store
            .load(&p.id)
            .unwrap()
            .expect("page survives the upgrade");
        assert_eq!(stored.revision, 1);
        assert_eq!(&stored.page, p, "page {} loads intact", p.id);
    }
    let mut ids = store.page_ids().unwrap();
    ids.sort();
    assert_eq!(ids, ["llm-chat-clients", "provider-capabilities"]);
    let summary = store.list_pages().unwrap();
    let chat = summary.iter().find(|s| s.id == "llm-chat-clients").unwrap();
    assert_eq!(
        (chat.rules, chat.sources, chat.targets, chat.revision),
        (
            pages[0].rules.len() as i64,
            pages[0].source.rows.len() as i64,
            pages[0].target.rows.len() as i64,
            1
        )
    );
}

#[test]
fn opening_a_database_newer_than_known_fails_clearly() {
    let (_dir, path) = db();
    {
        let store = open(&path);
        store
            .connection()
            .pragma_update(None, "user_version", 999)
            .unwrap();
    }
    match Store::open(&path) {
        Ok(_) => panic!("a schema newer than this build must not open"),
        Err(e) => {
            assert!(
                matches!(e, StoreError::TooNew { found: 999, known } if known == latest()),
                "{e:?}"
            );
            let message = e.to_string();
            assert!(
                message.contains("999") && message.contains("newer"),
                "a clear message: {message}"
            );
        }
    }
    // Nothing was migrated down or over.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 999);
}

#[test]
fn wal_journal_and_foreign_keys_are_on() {
    let (_dir, path) = db();
    let store = open(&path);
    let conn = store.connection();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode.to_lowercase(), "wal");
    let fk: i64 = conn
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    assert_eq!(fk, 1, "foreign keys");
    let timeout: i64 = conn
        .query_row("PRAGMA busy_timeout", [], |r| r.get(0))
        .unwrap();
    assert!(timeout > 0, "a busy timeout is set");
    // Enforced, not only declared: a row for a page that does not exist is refused.
    let orphan = conn.execute(
        "INSERT INTO revisions (page_id, revision, created_at, change) VALUES ('nope', 1, 'now', 'x')",
        [],
    );
    assert!(orphan.is_err(), "foreign key enforced");
}

// --- changes and revisions ----------------------------------------------------------

/// Regression: one change that removes a rule (moving the rules after it up) and then
/// writes one of the moved rules failed on the rule log's key ("UNIQUE constraint
/// failed: rule_log…"): the write was an upsert, whose conflict handling overrode the
/// log trigger's `OR REPLACE`. A family replaced by fewer members does just that.
#[test]
fn a_change_may_remove_a_rule_and_then_write_one_it_moved() {
    let (_dir, path) = db();
    let mut store = open(&path);
    let p = page(LOANS);
    store.insert_page(&p, false).unwrap();
    let moved = edited(&p.rules[2], json!({"!!": [{"var": "source.age"}]}));
    store
        .change(&p.id, "removed one, changed one", |tx, rev| {
            ops::delete_rule(tx, &p.id, &p.rules[0].id, rev)?;
            ops::put_rule(tx, &p, &moved, 1, rev)
        })
        .unwrap();
    let loaded = store.load(&p.id).unwrap().unwrap().page;
    assert_eq!(loaded.rules.len(), p.rules.len() - 1);
    assert_eq!(loaded.rules[1], moved);
}

#[test]
fn a_change_increments_the_revision_and_records_it() {
    let (_dir, path) = db();
    let mut store = open(&path);
    let p = page(LOANS);
    assert_eq!(store.insert_page(&p, false).unwrap(), 1);
    assert_eq!(revisions(&store, &p.id), [(1, "imported".to_owned())]);

    let rule = edited(&p.rules[0], json!({">=": [{"var": "source.age"}, 21]}));
    let rev = store
        .change(&p.id, "edited minimum-age", |tx, rev| {
            ops::put_rule(tx, &p, &rule, 0, rev)
        })
        .unwrap();
    assert_eq!(rev, 2);
    assert_eq!(store.revision(&p.id).unwrap(), Some(2));
    assert_eq!(
        revisions(&store, &p.id),
        [
            (1, "imported".to_owned()),
            (2, "edited minimum-age".to_owned())
        ]
    );
    let loaded = store.load(&p.id).unwrap().unwrap();
    assert_eq!(loaded.revision, 2);
    assert_eq!(loaded.page.rules[0], rule);
    assert_eq!(loaded.page.rules[1..], p.rules[1..]);

    // A change that touches no table still counts.
    let rev = store.change(&p.id, "no-op", |_, _| Ok(())).unwrap();
    assert_eq!(rev, 3);
    assert_eq!(revisions(&store, &p.id).len(), 3);

    // Replacing the page by import keeps counting.
    assert_eq!(store.insert_page(&p, true).unwrap(), 4);
    assert_eq!(store.load(&p.id).unwrap().unwrap().page, p);
    assert_eq!(revisions(&store, &p.id).last().unwrap().0, 4);
}

#[test]
fn a_failing_change_rolls_back_everything() {
    let (_dir, path) = db();
    let mut store = open(&path);
    let p = page(LLM_CHAT);
    store.insert_page(&p, false).unwrap();
    let before = store.fingerprint().unwrap();
    let rule = edited(&p.rules[2], json!(true));
    let extra = Override {
        source_key: Some("clientType=web|id=t3-chat".into()),
        target_key: Some("id=gpt-4.1".into()),
        source_key_hash: None,
        target_key_hash: None,
        value: false,
        note: None,
    };

    let result = store.change(&p.id, "doomed", |tx, rev| {
        ops::put_rule(tx, &p, &rule, 2, rev)?;
        ops::put_override(tx, &p.id, &extra)?;
        ops::delete_rule(tx, &p.id, &p.rules[0].id, rev)?;
        Err(StoreError::Sql(rusqlite::Error::InvalidQuery))
    });
    assert!(result.is_err(), "the closure's error comes back");
    assert_eq!(
        store.revision(&p.id).unwrap(),
        Some(1),
        "revision unchanged"
    );
    assert_eq!(
        store.fingerprint().unwrap(),
        before,
        "fingerprint unchanged"
    );
    let loaded = store.load(&p.id).unwrap().unwrap();
    assert_eq!(loaded.page, p, "page unchanged");
    assert_eq!(revisions(&store, &p.id).len(), 1);

    // So does one whose own operation fails part way (removing a rule that is not there).
    let result = store.change(&p.id, "doomed too", |tx, rev| {
        ops::put_rule(tx, &p, &rule, 2, rev)?;
        ops::delete_rule(tx, &p.id, "no-such-rule", rev)
    });
    assert!(result.is_err());
    assert_eq!(store.revision(&p.id).unwrap(), Some(1));
    assert_eq!(store.fingerprint().unwrap(), before);
    assert_eq!(store.load(&p.id).unwrap().unwrap().page, p);

    // A change to a page that does not exist fails and changes nothing either.
    let missing = store.change("no-such-page", "x", |_, _| Ok(()));
    assert!(missing.is_err());
    assert_eq!(store.fingerprint().unwrap(), before);

    // The store is still usable after the rollback.
    assert_eq!(store.change(&p.id, "after", |_, _| Ok(())).unwrap(), 2);
}

#[test]
fn deleting_a_page_cascades_to_everything_it_owns() {
    let (_dir, path) = db();
    let mut store = open(&path);
    let doomed = page(LLM_CHAT);
    let kept = page(PROVIDERS);
    store.insert_page(&doomed, false).unwrap();
    store.insert_page(&kept, false).unwrap();
    store
        .change(&doomed.id, "edit", |tx, rev| {
            ops::put_rule(tx, &doomed, &edited(&doomed.rules[0], json!(true)), 0, rev)
        })
        .unwrap();
    for p in [&doomed, &kept] {
        let rev = store.revision(&p.id).unwrap().unwrap();
        store
            .store_result(&p.id, "sel", rev, &[json!({"page": 0}).to_string()])
            .unwrap();
    }
    for table in PAGE_TABLES {
        assert!(
            count_for(&store, table, &doomed.id) > 0,
            "{table} holds rows of the page before the delete"
        );
    }
    let kept_counts: Vec<i64> = PAGE_TABLES
        .iter()
        .map(|t| count_for(&store, t, &kept.id))
        .collect();

    assert!(store.delete_page(&doomed.id).unwrap());
    for table in PAGE_TABLES {
        assert_eq!(count_for(&store, table, &doomed.id), 0, "{table} cascaded");
    }
    assert!(store.load(&doomed.id).unwrap().is_none());
    assert_eq!(store.revision(&doomed.id).unwrap(), None);
    let after: Vec<i64> = PAGE_TABLES
        .iter()
        .map(|t| count_for(&store, t, &kept.id))
        .collect();
    assert_eq!(after, kept_counts, "the other page keeps its rows");
    assert_eq!(store.load(&kept.id).unwrap().unwrap().page, kept);
    assert!(!store.delete_page(&doomed.id).unwrap(), "already gone");
}

// --- the result cache ---------------------------------------------------------------

#[test]
fn results_round_trip_and_stale_revisions_are_pruned() {
    let (_dir, path) = db();
    let mut store = open(&path);
    let p = page(LOANS);
    let other = page(PROVIDERS);
    store.insert_page(&p, false).unwrap();
    store.insert_page(&other, false).unwrap();
    let pages = [
        json!({"selectionKey": "id=app-001", "selectionVerdict": 1, "score": 0.6,
               "targets": [{"id": "us-prime-auto", "verdict": 0, "score": 0.25}]}),
        json!({"targets": [], "features": [{"name": "x", "a": true}], "n": null}),
    ]
    .iter()
    .map(ToString::to_string)
    .collect::<Vec<String>>();
    assert_eq!(store.cached_result(&p.id, "sel-a", 1).unwrap(), None);
    store.store_result(&p.id, "sel-a", 1, &pages).unwrap();
    store.store_result(&p.id, "sel-b", 1, &pages[..1]).unwrap();
    store.store_result(&other.id, "sel-a", 1, &pages).unwrap();
    assert_eq!(
        store.cached_result(&p.id, "sel-a", 1).unwrap(),
        Some(pages.clone()),
        "pages come back in order, values intact"
    );
    assert_eq!(
        store.cached_result(&p.id, "sel-b", 1).unwrap(),
        Some(pages[..1].to_vec())
    );
    assert_eq!(store.cached_result(&p.id, "sel-a", 2).unwrap(), None);
    assert_eq!(store.cached_result(&p.id, "sel-c", 1).unwrap(), None);

    // A result stored at a newer revision drops every older one of that page.
    let rev = store.change(&p.id, "edit", |_, _| Ok(())).unwrap();
    assert_eq!(rev, 2);
    let newer = vec![json!({"selectionVerdict": 2}).to_string()];
    store.store_result(&p.id, "sel-b", rev, &newer).unwrap();
    assert_eq!(store.cached_result(&p.id, "sel-b", 2).unwrap(), Some(newer));
    assert_eq!(
        store.cached_result(&p.id, "sel-a", 1).unwrap(),
        None,
        "pruned"
    );
    assert_eq!(
        store.cached_result(&p.id, "sel-b", 1).unwrap(),
        None,
        "pruned"
    );
    let stale: i64 = store
        .connection()
        .query_row(
            "SELECT COUNT(*) FROM compat_results WHERE page_id = ?1 AND revision_id < ?2",
            params![p.id, rev],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stale, 0);
    // Another page's cache is its own.
    assert_eq!(
        store.cached_result(&other.id, "sel-a", 1).unwrap(),
        Some(pages)
    );
}

// --- rule history -------------------------------------------------------------------

#[test]
fn rule_history_lists_versions_newest_first_and_a_removal_as_none() {
    let (_dir, path) = db();
    let mut store = open(&path);
    let p = page(LOANS);
    store.insert_page(&p, false).unwrap();
    let original = p.rules[1].clone();
    let id = original.id.clone();
    assert_eq!(
        store.rule_history(&p.id, &id).unwrap(),
        [(1, Some(original.clone()))]
    );

    let v2 = edited(
        &original,
        json!({">=": [{"var": "source.credit_score"}, 640]}),
    );
    let rev2 = store
        .change(&p.id, "edit", |tx, rev| ops::put_rule(tx, &p, &v2, 1, rev))
        .unwrap();
    // Another rule's change adds nothing to this rule's history.
    let unrelated = edited(&p.rules[0], json!(true));
    store
        .change(&p.id, "other", |tx, rev| {
            ops::put_rule(tx, &p, &unrelated, 0, rev)
        })
        .unwrap();
    let rev4 = store
        .change(&p.id, "remove", |tx, rev| {
            ops::delete_rule(tx, &p.id, &id, rev)
        })
        .unwrap();
    assert_eq!((rev2, rev4), (2, 4));
    assert_eq!(
        store.rule_history(&p.id, &id).unwrap(),
        [
            (4, None),
            (2, Some(v2.clone())),
            (1, Some(original.clone()))
        ]
    );
    let loaded = store.load(&p.id).unwrap().unwrap().page;
    assert!(loaded.rule(&id).is_none(), "removed from the page");
    assert_eq!(loaded.rules.len(), p.rules.len() - 1);

    // Added back: a new newest version.
    let rev5 = store
        .change(&p.id, "restore", |tx, rev| {
            ops::put_rule(tx, &p, &original, 1, rev)
        })
        .unwrap();
    let history = store.rule_history(&p.id, &id).unwrap();
    assert_eq!(history.len(), 4);
    assert_eq!(history[0], (rev5, Some(original.clone())));
    assert_eq!(history[1], (4, None));
    assert_eq!(store.load(&p.id).unwrap().unwrap().page.rules[1], original);

    assert!(
        store
            .rule_history(&p.id, "never-existed")
            .unwrap()
            .is_empty()
    );
}

/// A database opened read-only serves every read (pages, evaluate, assertion runs)
/// and refuses changes with an error naming the file; the file is not touched, and
/// an older schema is refused rather than migrated.
#[test]
fn a_read_only_database_serves_reads_and_refuses_changes() {
    use rulebench::app::App;
    let dir = TempDir::new().unwrap();
    let db = dir.path().join("ro.db");
    drop(App::open(&db).unwrap());
    let before = std::fs::read(&db).unwrap();
    let mut app = App::open_read_only(&db).unwrap();
    assert_eq!(app.pages().unwrap().len(), 3);
    let result = app.evaluate("llm-chat-clients", "clientType=web|id=t3-chat");
    assert!(result.is_ok(), "{:?}", result.err());
    let report = app.run_assertions("llm-chat-clients").unwrap();
    assert!(!report.results.is_empty());
    let err = app
        .set_policy("llm-chat-clients", &["fullThreshold=0.9".into()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("read-only"), "{err}");
    assert!(err.contains("ro.db"), "the file is named: {err}");
    drop(app);
    assert!(
        std::fs::read(&db).unwrap() == before,
        "the file is untouched"
    );

    // An older schema is not migrated behind a read-only open.
    let old = dir.path().join("old.db");
    drop(Store::open_at(&old, 1).unwrap());
    let err = Store::open_read_only(&old).err().unwrap().to_string();
    assert!(
        err.contains("read-only") && err.contains("upgrade"),
        "{err}"
    );
    assert_eq!(Store::open_at(&old, 1).unwrap().user_version().unwrap(), 1);
}

/// A database of the schema before drafts (6) reads read-only as it is: the drafts
/// table is only needed to write.
#[test]
fn a_read_only_database_one_schema_older_still_reads() {
    let dir = TempDir::new().unwrap();
    let db = dir.path().join("six.db");
    drop(Store::open_at(&db, 6).unwrap());
    let store = Store::open_read_only(&db).unwrap();
    assert_eq!(store.user_version().unwrap(), 6);
    assert!(store.drafts("any").unwrap().is_empty());
    assert!(
        Store::open_read_only(&{
            let old = dir.path().join("five.db");
            drop(Store::open_at(&old, 5).unwrap());
            old
        })
        .is_err()
    );
}

/// A result or assertion run computed for a page that was renamed, removed or changed
/// meanwhile is not cached or recorded — skipped, never an error (`evaluate` failed with
/// `FOREIGN KEY constraint failed` for a page renamed while it computed).
#[test]
fn results_for_a_page_that_moved_are_not_cached() {
    let (_dir, path) = db();
    let mut store = open(&path);
    let p = page(LOANS);
    store.insert_page(&p, false).unwrap();
    let pages = vec![json!({"targets": []}).to_string()];
    // Renamed: the old id is gone.
    store.rename_page(&p.id, "loans-renamed").unwrap();
    store.store_result(&p.id, "hash", 1, &pages).unwrap();
    assert!(store.cached_result(&p.id, "hash", 1).unwrap().is_none());
    // Changed: revision 2 now, a result of revision 1 is not kept.
    store
        .store_result("loans-renamed", "hash", 1, &pages)
        .unwrap();
    assert!(
        store
            .cached_result("loans-renamed", "hash", 1)
            .unwrap()
            .is_none()
    );
    store
        .store_result("loans-renamed", "hash", 2, &pages)
        .unwrap();
    assert!(
        store
            .cached_result("loans-renamed", "hash", 2)
            .unwrap()
            .is_some()
    );
    store
        .store_assertion_results(&p.id, 1, "2026-11-26T00:00:00Z", &[])
        .unwrap();
}

/// Migrations are append-only: a shipped one never changes (its text is pinned here;
/// a new migration adds a line).
#[test]
fn shipped_migrations_never_change() {
    use sha2::Digest;
    let pinned = [
        "5b314b0929f4030df2b1adec8facdbec99fda9588a24190551154a28eba7fd87",
        "ea7f20dcf05b21ec95c2b8147832fe54bb8636eb77350582042fe7c83fd0cdf9",
        "527f8026343db866d6c4d0b535a3d3ffc29f97be25ae72939b824f8c26f56b6c",
        "c1070efa2d603f861c6ed9348d729cab60ca18edaf46647795c864f50fb578df",
        "a64afa445c59a3302683803ce7ab6585826bf60687054d71daaa0e5f48ea5cf5",
        "7dcf0f7198f952599b214e38ca840f5e8950a69d11ad85d0640ffd9a68afa9d7",
        "7226da099942f9f2356630569b318c9122bc47fef7274945378760ed498843d2",
        "66575b02eb87b68901f4be7e08014ed9fd7826a4cddc0e02bb363d87ac03ac9c",
        "3f94bbe9827fede48fa1af93406c6297d83c8c0ef5ee8afde0c9f4f1837d02c7",
        "c5505c0ccaf738f535d5e4afdf5e9c8128c5c17ba893b1955d307dfd47030aed",
        "2f91f19a23d279350c7f4781cac0f3d93a0bcfcc363cfb14ba99e990fe2a0c82",
        "7f26d471398a61400decb071f7b529f9dbc49890dec60082ac00d4a63c5d10c4",
        "96fc479ce4c9f2b7fa9bb0cc7222914d9c7d0b2c2dc28728883c54b812ebf80e",
    ];
    assert_eq!(
        MIGRATIONS.len(),
        pinned.len(),
        "a new migration: pin it here"
    );
    for (i, (sql, hash)) in MIGRATIONS.iter().zip(pinned).enumerate() {
        let got: String = sha2::Sha256::digest(sql.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(got, hash, "migration {} was edited", i + 1);
    }
}

/// One list of the tables that hold a page's data: every table with a `page_id`
/// column is in it (or is `drafts` or `views`, which are not part of a page).
#[test]
fn the_page_table_list_is_every_table_with_a_page_id() {
    let (_dir, path) = db();
    let store = open(&path);
    let conn = store.connection();
    let mut with_page_id: Vec<String> = conn
        .prepare(
            "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c
             WHERE m.type = 'table' AND c.name = 'page_id' ORDER BY m.name",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    with_page_id.retain(|t| t != "drafts" && t != "views");
    let mut listed: Vec<String> = rulebench_store::PAGE_TABLES
        .iter()
        .map(|t| t.to_string())
        .collect();
    listed.sort();
    assert_eq!(with_page_id, listed);
}

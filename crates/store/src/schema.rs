//! The schema: the page tables, the migrations (`.sql` files embedded at build time)
//! and the version a database is at.

use rusqlite::Connection;

use crate::error::Result;

/// Every table that holds a page's data by `page_id`, besides `pages`, `drafts` and `views`: the
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
    // 8: dataset rows are logged when they change, not when they are written. A row
    // carries the revision that wrote it (`revision`), and the row log gets a row's
    // value only when a later change overwrites or removes it (and a mark where a row
    // went): a 1M-row import writes its rows once, not twice, and through no trigger
    // (whose statement journal per row cost more than the row). A row stored before
    // this migration has no revision: its value is in the log already.
    include_str!("migrations/008_rows_logged_on_change.sql"),
    // 9: a rule may carry an `appliesWhen` condition (`applies_when_json`, as written: an
    // infix text as a JSON string, or JSONLogic), in the rules and their log; the rule
    // triggers are remade to carry it.
    include_str!("migrations/009_applies_when.sql"),
    // 10: a rule may be a member of a rule family (a rule written with `each`): each
    // member's row carries the family as written (`family_json`), in the rules and their
    // log, so that the page reads back and exports with the family as written; the rule
    // triggers are remade to carry it.
    include_str!("migrations/010_rule_families.sql"),
    // 11: the workbench's view of a page, per user (the selection, the focused pane,
    // the matrix's order, filters and folds…), restored on the next open. Not part of a
    // page (no revision, no history), like drafts.
    include_str!("migrations/011_views.sql"),
    // 12: a page may link tables of expected outcomes (`expectations_json`: each table's
    // file and how it is read), in the page and its log; the page triggers are remade to
    // carry it.
    include_str!("migrations/012_expectation_tables.sql"),
    // 13: overrides clustered by (page, source keyHash, target keyHash), without a rowid:
    // a page's overrides are one range of the table, read in order, where the rowid
    // table read each through its key's index and then the table (100,000 overrides:
    // 95 ms, 41 ms now). The log triggers are remade on the new table.
    include_str!("migrations/013_overrides_by_source.sql"),
];

/// The first schema whose pages carry their linked expectation tables (migration 12).
pub const EXPECTATION_TABLES: i64 = 12;

/// The first schema that keeps the workbench's views (migration 11).
pub const VIEWS: i64 = 11;

/// The first schema whose rules carry their family (migration 10).
pub const RULE_FAMILIES: i64 = 10;

/// The first schema whose rules carry an `appliesWhen` condition (migration 9).
pub const APPLIES_WHEN: i64 = 9;

/// The first schema whose dataset rows carry their revision and are logged by the
/// writer (see migration 8); before it, triggers log every row written.
pub const ROWS_LOGGED_ON_CHANGE: i64 = 8;

/// Inserts or updates a rule at a position.
/// The schema version of the database `conn` is on.
pub(crate) fn schema_of(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

//! SQLite storage: pages, rows, rules, overrides, revisions and the result cache.
//!
//! Append-only migrations on `PRAGMA user_version`; WAL; foreign keys; a busy timeout;
//! one transaction per change, and every change to a page increments its revision.

mod cache;
mod drafts;
mod error;
mod history;
/// The change operations, for use inside [`Store::change`].
pub mod ops;
mod pages;
mod records;
mod rows;
mod schema;

pub use error::{Result, StoreError};
pub use pages::Store;
pub use records::{
    DraftKind, KeptDraft, PageSummary, RevisionEntry, RowKey, StoredAssertionResult, StoredPage,
};
pub use rows::{RowWriter, upsert_rule};
pub use rusqlite::Transaction;
pub use schema::{MIGRATIONS, MIN_READ_SCHEMA, PAGE_TABLES};

//! What can go wrong in the store.

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

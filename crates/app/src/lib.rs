//! The use cases: open a database, import and export pages, edit rules, overrides and
//! policies, evaluate. The CLI and the TUI call these and nothing below them.

pub mod analysis;
mod app;
pub mod assertions;
pub mod authoring;
pub mod bench;
pub mod conflict;
pub use conflict::{Choice, Conflict, ConflictOn};
pub mod dataset;
pub mod expectations;
pub mod explain;
pub mod export;
pub mod expr;
pub mod history;
pub mod init;
pub mod jobs;
pub mod policy;
pub mod readers;
pub mod sql;
pub use sql::Checked;
pub mod synth;
pub mod text;
pub mod watch;
pub mod workspace;
pub use workspace::Session;
mod changed;
mod error;
pub mod types;
mod workspace_assertions;

pub use app::{
    App, DbInfo, Evaluations, Imported, OpenOptions, Opened, PageRef, Policies, SAMPLE_PAGES,
    completion_word, default_db_path, is_database_file, parse_cell, timestamp,
};
pub use changed::Changed;
pub use error::{AppError, Result, some_of};
pub use rulebench_store::{DraftKind, KeptDraft, PageSummary};

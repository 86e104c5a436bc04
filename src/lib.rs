//! rulebench: a terminal workbench for JSONLogic compatibility rules.
//!
//! The layers are crates: `rulebench-core` is pure (model, engine, validation, verdicts,
//! matrix, SQL); `rulebench-store` is SQLite; `rulebench-app` holds the use cases both
//! fronts call. This crate is the fronts: `cli` is the command line, `tui` the
//! workbench, `print` the printers both use. It depends on the app crate alone, so the
//! fronts cannot reach the core or the store except through a use case.

pub use rulebench_app as app;

pub mod cli;
pub mod print;
pub mod tui;

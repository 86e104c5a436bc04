//! rulebench: a terminal workbench for JSONLogic compatibility rules.
//!
//! `core` is pure (model, engine, validation, verdicts, matrix); `store` is SQLite;
//! `app` holds the use cases both fronts call; `cli` is the command line; `tui` the workbench.

pub mod app;
pub mod cli;
pub mod core;
pub mod print;
pub mod store;
pub mod synth;
pub mod tui;

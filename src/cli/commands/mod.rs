//! One file per command, its arguments beside its code.

pub mod assertion;
pub mod bench;
pub mod bench_workbench;
pub mod check;
pub mod completions;
pub mod config;
pub mod dataset;
pub mod db;
pub mod diff;
pub mod eval;
pub mod evaluate;
pub mod explain;
pub mod export;
pub mod expr;
pub mod import;
pub mod man;
pub mod matrix;
pub mod overrides;
pub mod page;
pub mod pages;
pub mod policy;
pub mod rule;
pub mod schema;
pub mod sql;
pub mod test;
pub mod watch;

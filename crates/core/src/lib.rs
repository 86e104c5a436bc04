//! The pure core: page model, engine, validation, verdicts, the matrix and results.
//! No I/O, no terminal, no SQLite.

pub mod analyze;
pub mod assertions;
pub mod check;
pub mod coverage;
pub mod dataset;
pub mod diag;
pub mod diff;
pub mod engine;
pub mod expect;
pub mod explain;
pub mod family;
pub mod infix;
pub mod jsops;
pub mod lint;
pub mod matrix;
pub mod model;
pub mod predicates;
pub mod priority;
pub mod read;
pub mod result;
pub mod schema;
pub mod sql;
pub mod text;
pub mod validate;
pub mod verdict;
pub mod whatif;

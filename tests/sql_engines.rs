//! `rulebench sql` on the engines it writes for, pair by pair against the engine: DuckDB
//! and PostgreSQL (`.ci/run` installs and starts them: `.ci/sql-engines.sh`) and Spark
//! (opt-in: `.ci/spark.sh`, then
//! `cargo test --test sql_engines spark -- --ignored`). Each test needs its engine, so
//! each is ignored in a plain `cargo test`; `.ci/run` runs the DuckDB and PostgreSQL ones.

mod common;

use common::sql::{differential, parse, random_page, regression_pages, sample_pages};
use rulebench::app::types::Dialect;

fn every_page(dialect: Dialect, generated: u64) -> usize {
    let mut pairs = 0;
    for page in sample_pages().into_iter().chain(regression_pages()) {
        pairs += differential(&page, dialect);
    }
    for seed in 1..=generated {
        pairs += differential(&parse(&random_page(seed, 6, 9, 12)), dialect);
    }
    pairs
}

#[test]
#[ignore = "needs DuckDB's Python package (.ci/sql-engines.sh)"]
fn duckdb_means_what_the_engine_computes() {
    let pairs = every_page(Dialect::Duckdb, 60);
    assert!(pairs > 60 * 54, "{pairs} pairs");
}

#[test]
#[ignore = "needs a PostgreSQL server on 127.0.0.1:54329 (.ci/sql-engines.sh)"]
fn postgres_means_what_the_engine_computes() {
    let pairs = every_page(Dialect::Postgres, 60);
    assert!(pairs > 60 * 54, "{pairs} pairs");
}

#[test]
#[ignore = "needs pyspark and Java 17 (.ci/spark.sh); slow: opt-in"]
fn spark_means_what_the_engine_computes() {
    let pairs = every_page(Dialect::Spark, 8);
    assert!(pairs > 8 * 54, "{pairs} pairs");
}

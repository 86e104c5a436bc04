//! `rulebench sql` on the engines it writes for, pair by pair against the engine: DuckDB
//! and PostgreSQL (`.ci/run` installs and starts them: `.ci/sql-engines.sh`) and Spark
//! (opt-in: `.ci/spark.sh`, then
//! `cargo test --test sql_engines spark -- --ignored`). Each test needs its engine, so
//! each is ignored in a plain `cargo test`; `.ci/run` runs the DuckDB and PostgreSQL ones.

mod common;

use common::sql::{
    differential, differential_retyped, parse, random_page, regression_pages, sample_pages,
};
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

/// Every page on tables typed and named the warehouse way (DECIMAL money, SMALLINT
/// booleans, CHAR strings, narrow integers, snake_case names through `--map`).
fn every_page_retyped(dialect: Dialect, generated: u64) -> usize {
    let mut pairs = 0;
    for page in sample_pages().into_iter().chain(regression_pages()) {
        pairs += differential_retyped(&page, dialect);
    }
    for seed in 1..=generated {
        pairs += differential_retyped(&parse(&random_page(seed, 6, 9, 12)), dialect);
    }
    pairs
}

#[test]
#[ignore = "needs DuckDB's Python package (.ci/sql-engines.sh)"]
fn duckdb_on_warehouse_typed_tables() {
    let pairs = every_page_retyped(Dialect::Duckdb, 40);
    assert!(pairs > 40 * 54, "{pairs} pairs");
}

#[test]
#[ignore = "needs a PostgreSQL server on 127.0.0.1:54329 (.ci/sql-engines.sh)"]
fn postgres_on_warehouse_typed_tables() {
    let pairs = every_page_retyped(Dialect::Postgres, 40);
    assert!(pairs > 40 * 54, "{pairs} pairs");
}

/// `sql --long` on an engine: a row per (source, target, rule), each the rule's outcome
/// of the wide shape on the same engine.
fn long_is_wide(dialect: Dialect) -> usize {
    use rulebench::app::App;
    use rulebench::app::sql::SqlRequest;
    let mut checked = 0;
    for page in sample_pages() {
        let request = SqlRequest::new(dialect);
        let data = App::sql_data_of(&page, &request).unwrap();
        let wide =
            common::sql::run_external(dialect, &data, &App::sql_query_of(&page, &request).unwrap());
        let long_request = SqlRequest {
            long: true,
            ..SqlRequest::new(dialect)
        };
        let long = common::sql::run_external(
            dialect,
            &data,
            &App::sql_query_of(&page, &long_request).unwrap(),
        );
        let at = |name: &str| wide.columns.iter().position(|c| c == name).unwrap();
        let cells: std::collections::HashMap<_, _> = long
            .rows
            .iter()
            .map(|r| {
                (
                    (r[0].to_string(), r[1].to_string(), r[3].to_string()),
                    r[4].clone(),
                )
            })
            .collect();
        assert_eq!(
            long.rows.len(),
            wide.rows.len() * page.rules.len(),
            "{}",
            page.id
        );
        for row in &wide.rows {
            for rule in &page.rules {
                let key = (
                    row[at("source_key")].to_string(),
                    row[at("target_key")].to_string(),
                    serde_json::Value::String(rule.id.clone()).to_string(),
                );
                assert_eq!(
                    cells.get(&key),
                    Some(&row[at(&rule.id)]),
                    "{} {key:?}",
                    page.id
                );
                checked += 1;
            }
        }
    }
    checked
}

#[test]
#[ignore = "needs DuckDB's Python package (.ci/sql-engines.sh)"]
fn duckdb_long_shape_is_the_wide_one() {
    assert!(long_is_wide(Dialect::Duckdb) > 500);
}

#[test]
#[ignore = "needs a PostgreSQL server on 127.0.0.1:54329 (.ci/sql-engines.sh)"]
fn postgres_long_shape_is_the_wide_one() {
    assert!(long_is_wide(Dialect::Postgres) > 500);
}

/// `sql --partial` on an engine: rules left out NULL, verdicts NULL exactly where they
/// could change (see `common::sql::partial_differential`).
fn partial_on(dialect: Dialect, seeds: u64) -> (usize, usize) {
    let (mut pairs, mut open) = (0, 0);
    for seed in 1..=seeds {
        let page = common::sql::page_with_untranslatable(seed);
        let (p, o) = common::sql::partial_differential(&page, dialect);
        pairs += p;
        open += o;
    }
    (pairs, open)
}

#[test]
#[ignore = "needs DuckDB's Python package (.ci/sql-engines.sh)"]
fn duckdb_partial_compilation() {
    let (pairs, open) = partial_on(Dialect::Duckdb, 20);
    assert!(open > 50 && pairs - open > 50, "{open} open of {pairs}");
}

#[test]
#[ignore = "needs a PostgreSQL server on 127.0.0.1:54329 (.ci/sql-engines.sh)"]
fn postgres_partial_compilation() {
    let (pairs, open) = partial_on(Dialect::Postgres, 20);
    assert!(open > 50 && pairs - open > 50, "{open} open of {pairs}");
}

/// Overrides keyed by the rows' key fields (`--override-keys fields`) on an engine.
fn by_key_fields(dialect: Dialect) -> usize {
    use rulebench::app::types::OverrideKeys;
    let by_fields =
        |r: &mut rulebench::app::sql::SqlRequest| r.override_keys = OverrideKeys::Fields;
    let mut pairs = 0;
    for page in sample_pages().into_iter().chain(regression_pages()) {
        pairs += common::sql::differential_with(&page, dialect, by_fields);
    }
    for seed in 1..=15 {
        pairs += common::sql::differential_with(
            &parse(&random_page(seed, 6, 9, 12)),
            dialect,
            by_fields,
        );
    }
    pairs
}

#[test]
#[ignore = "needs DuckDB's Python package (.ci/sql-engines.sh)"]
fn duckdb_overrides_by_key_fields() {
    assert!(by_key_fields(Dialect::Duckdb) > 15 * 54);
}

#[test]
#[ignore = "needs a PostgreSQL server on 127.0.0.1:54329 (.ci/sql-engines.sh)"]
fn postgres_overrides_by_key_fields() {
    assert!(by_key_fields(Dialect::Postgres) > 15 * 54);
}

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

/// Wild rules (every operator over every kind of operand, see `sql_refusals`) on an
/// engine: those that translate mean what the engine computes, the others left out.
fn wild_on(dialect: Dialect, seeds: u64) -> usize {
    use rulebench::app::synth::Rng;
    let mut pairs = 0;
    for seed in 0..seeds {
        let mut rng = Rng::new(seed);
        let rules: Vec<serde_json::Value> =
            (0..60).map(|_| common::sql::wild_rule(&mut rng)).collect();
        let (p, _) = common::sql::partial_differential(&common::sql::wild_page(&rules), dialect);
        pairs += p;
    }
    pairs
}

#[test]
#[ignore = "needs DuckDB's Python package (.ci/sql-engines.sh)"]
fn duckdb_wild_rules() {
    assert!(wild_on(Dialect::Duckdb, 8) >= 120);
}

#[test]
#[ignore = "needs a PostgreSQL server on 127.0.0.1:54329 (.ci/sql-engines.sh)"]
fn postgres_wild_rules() {
    assert!(wild_on(Dialect::Postgres, 4) >= 60);
}

/// Numbers made text (`cat`, `in`, `substr`) across JavaScript's notations: the
/// dialect's shortest digits moved to JavaScript's notation.
fn numbers_as_text(dialect: Dialect) -> usize {
    let page = common::sql::number_text_page();
    assert!(
        rulebench_core::sql::problems(&page, dialect).is_empty(),
        "{:?}",
        rulebench_core::sql::problems(&page, dialect)
    );
    differential(&page, dialect)
}

#[test]
#[ignore = "needs DuckDB's Python package (.ci/sql-engines.sh)"]
fn duckdb_numbers_as_text() {
    assert!(numbers_as_text(Dialect::Duckdb) >= 380);
}

#[test]
#[ignore = "needs a PostgreSQL server on 127.0.0.1:54329 (.ci/sql-engines.sh)"]
fn postgres_numbers_as_text() {
    assert!(numbers_as_text(Dialect::Postgres) >= 380);
}

/// Remainders of doubles equal JavaScript's to the last bit, subnormal to 1e300.
fn remainders(dialect: Dialect) -> usize {
    let mut pairs = 0;
    for seed in 1..=3 {
        let page = common::sql::remainder_page(seed);
        assert!(rulebench_core::sql::problems(&page, dialect).is_empty());
        let engine = common::sql::engine_pairs(&page);
        // Not vacuous: the engine finds every remainder exact.
        assert!(engine.values().all(|p| p.rules[0] == Some(true)));
        pairs += differential(&page, dialect);
    }
    pairs
}

#[test]
#[ignore = "needs DuckDB's Python package (.ci/sql-engines.sh)"]
fn duckdb_remainders_of_doubles() {
    assert!(remainders(Dialect::Duckdb) >= 400);
}

#[test]
#[ignore = "needs a PostgreSQL server on 127.0.0.1:54329 (.ci/sql-engines.sh)"]
fn postgres_remainders_of_doubles() {
    assert!(remainders(Dialect::Postgres) >= 400);
}

/// `--params` on an engine: thresholds bound at run time, exact and not.
fn params_on(dialect: Dialect) -> usize {
    let mut pairs = 0;
    let pages: Vec<_> = sample_pages()
        .into_iter()
        .chain(regression_pages())
        .chain((1..=2).map(|seed| parse(&random_page(seed, 6, 9, 10))))
        .collect();
    for page in &pages {
        for (full, partial) in [(0.9, 0.3), (0.5, 0.1234567891)] {
            pairs += common::sql::differential_params(page, dialect, full, partial);
        }
    }
    pairs
}

#[test]
#[ignore = "needs DuckDB's Python package (.ci/sql-engines.sh)"]
fn duckdb_thresholds_as_parameters() {
    assert!(params_on(Dialect::Duckdb) > 500);
}

#[test]
#[ignore = "needs a PostgreSQL server on 127.0.0.1:54329 (.ci/sql-engines.sh)"]
fn postgres_thresholds_as_parameters() {
    assert!(params_on(Dialect::Postgres) > 500);
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

/// The dbt program: `$RULEBENCH_DBT`, else the one `.ci/sql-engines.sh` installs
/// (`target/dbt-venv`), else `dbt` on the PATH.
fn dbt() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("RULEBENCH_DBT") {
        return p.into();
    }
    let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/dbt-venv/bin/dbt");
    if venv.exists() {
        return venv;
    }
    "dbt".into()
}

/// The README's dbt example on DuckDB: the page's rows loaded, `sql --dbt` writes the
/// model and its properties into the example project, `dbt run` builds it and `dbt
/// test` passes; the model's rows are the engine's, pair by pair. A rule's string
/// constant holding `{{` and `{%` reaches the SQL as it is (escaped for Jinja).
#[test]
#[ignore = "needs dbt-duckdb (.ci/sql-engines.sh installs it in target/dbt-venv)"]
fn duckdb_dbt_model_is_the_engine() {
    use std::process::Command;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rb.db");
    let project = dir.path().join("project");
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/dbt");
    std::fs::create_dir_all(project.join("models")).unwrap();
    for file in ["dbt_project.yml", "profiles.yml", "models/sources.yml"] {
        std::fs::copy(example.join(file), project.join(file)).unwrap();
    }
    common::add_rule(
        &db,
        "loan-eligibility",
        &serde_json::json!({"id": "jinja", "name": "Not {{ jinja }}",
            "logic": {"!=": [{"var": "source.purpose"}, "{{ x }} {% if %} {# c #}"]}}),
    );
    // The rows, as tables `applicants` and `products` in the model's database.
    let (code, tables, err) = common::rb(
        &db,
        &[
            "sql",
            "loan-eligibility",
            "--dialect",
            "duckdb",
            "--data",
            "--source-table",
            "applicants",
            "--target-table",
            "products",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let database = dir.path().join("loans.duckdb");
    let load = |data: &str, query: &str| {
        common::sql::run_sqlrun(Dialect::Duckdb, Some(&database), data, None, query, &[])
    };
    load(&tables, "SELECT 1");
    // The page's model over the source `loans`, with more options.
    let write_model = |more: &[&str]| {
        let models = project.join("models");
        let mut args = vec![
            "sql",
            "loan-eligibility",
            "--dialect",
            "duckdb",
            "--all",
            "--dbt",
            models.to_str().unwrap(),
            "--source-table",
            "loans.applicants",
            "--target-table",
            "loans.products",
        ];
        args.extend_from_slice(more);
        let (code, _, err) = common::rb(&db, &args);
        assert_eq!(code, 0, "{err}");
    };
    write_model(&[]);
    let model =
        std::fs::read_to_string(project.join("models/loan_eligibility_verdicts.sql")).unwrap();
    assert!(
        model.contains("FROM {{ source('loans', 'applicants') }}"),
        "{model}"
    );
    // The thresholds as dbt variables (`--params`), bound by `dbt run --vars`.
    write_model(&["--params", "--dbt-model", "loan_params"]);
    let model = std::fs::read_to_string(project.join("models/loan_params.sql")).unwrap();
    assert!(model.contains("{{ var('full_threshold', 1) }}"), "{model}");
    for step in ["run", "test"] {
        let out = Command::new(dbt())
            .arg(step)
            .arg("--profiles-dir")
            .arg(&project)
            .arg("--project-dir")
            .arg(&project)
            .args(["--vars", "{full_threshold: 0.6, partial_threshold: 0.25}"])
            .env("RULEBENCH_DBT_DATABASE", &database)
            .env("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
            .output()
            .unwrap_or_else(|e| panic!("dbt {step} does not start ({}): {e}", dbt().display()));
        assert!(
            out.status.success(),
            "dbt {step}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let table = load("", "SELECT * FROM loan_eligibility_verdicts");
    let (code, page, _) = common::rb(&db, &["export", "loan-eligibility"]);
    assert_eq!(code, 0);
    let page = parse(&page);
    let got = common::sql::sql_pairs(&page, &table);
    let want = common::sql::engine_pairs(&page);
    assert_eq!(got, want);
    assert!(got.len() > 50, "{}", got.len());
    // The model with the variables bound: the engine's verdicts at those thresholds.
    let table = load("", "SELECT * FROM loan_params");
    let mut v = serde_json::to_value(&page).unwrap();
    v["devicePolicy"]["fullThreshold"] = serde_json::json!(0.6);
    v["devicePolicy"]["partialThreshold"] = serde_json::json!(0.25);
    let bound = parse(&v.to_string());
    let want = common::sql::engine_pairs(&bound);
    assert_ne!(
        want,
        common::sql::engine_pairs(&page),
        "the thresholds move verdicts"
    );
    assert_eq!(common::sql::sql_pairs(&bound, &table), want);
}

/// Every page's tables from the Parquet files of `sql --data-files`, read by its load
/// script (`read_parquet`), pair by pair against the engine.
#[test]
#[ignore = "needs DuckDB's Python package (.ci/sql-engines.sh)"]
fn duckdb_reads_the_data_as_parquet() {
    let mut pairs = 0;
    for page in sample_pages().into_iter().chain(regression_pages()) {
        pairs += common::sql::differential_from_files(&page, Dialect::Duckdb);
    }
    for seed in 1..=20 {
        pairs += common::sql::differential_from_files(
            &parse(&random_page(seed, 6, 9, 12)),
            Dialect::Duckdb,
        );
    }
    assert!(pairs > 20 * 54, "{pairs}");
}

/// String fields made numbers (`Number()`, `parseFloat()`), where the dialect's cast
/// reads every string the page holds as JavaScript does.
fn numeric_text(dialect: Dialect) -> usize {
    (1..=20)
        .map(|seed| differential(&common::sql::numeric_text_page(seed), dialect))
        .sum()
}

#[test]
#[ignore = "needs DuckDB's Python package (.ci/sql-engines.sh)"]
fn duckdb_string_fields_made_numbers() {
    assert!(numeric_text(Dialect::Duckdb) >= 20 * 35);
}

#[test]
#[ignore = "needs a PostgreSQL server on 127.0.0.1:54329 (.ci/sql-engines.sh)"]
fn postgres_string_fields_made_numbers() {
    assert!(numeric_text(Dialect::Postgres) >= 20 * 35);
}

/// The new shapes and readings on Spark, a few pages each (a Spark run is slow):
/// warehouse-typed views, the long shape, partial compilation, overrides by key fields,
/// Parquet data, string fields made numbers.
#[test]
#[ignore = "needs pyspark and Java 17 (.ci/spark.sh); slow: opt-in"]
fn spark_warehouse_features() {
    use rulebench::app::types::OverrideKeys;
    let dialect = Dialect::Spark;
    let pages: Vec<_> = sample_pages()
        .into_iter()
        .chain(regression_pages())
        .chain((1..=2).map(|seed| parse(&random_page(seed, 6, 9, 12))))
        .collect();
    let mut pairs = 0;
    for page in &pages {
        pairs += differential_retyped(page, dialect);
        pairs += common::sql::differential_with(page, dialect, |r| {
            r.override_keys = OverrideKeys::Fields
        });
        pairs += common::sql::differential_from_files(page, dialect);
    }
    for seed in 1..=2 {
        let (p, _) = common::sql::partial_differential(
            &common::sql::page_with_untranslatable(seed),
            dialect,
        );
        pairs += p;
        pairs += differential(&common::sql::numeric_text_page(seed), dialect);
    }
    pairs += wild_on(dialect, 2);
    pairs += differential(&common::sql::remainder_page(1), dialect);
    for page in sample_pages().iter().take(2) {
        pairs += common::sql::differential_params(page, dialect, 0.5, 0.1234567891);
    }
    assert!(long_is_wide(dialect) > 500);
    assert!(pairs > 1000, "{pairs}");
}

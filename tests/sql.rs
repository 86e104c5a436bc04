//! `rulebench sql`: the query means what the engine computes (pair by pair, in SQLite),
//! and what does not translate is refused with a located error.

mod common;

use common::sql::{
    differential, engine_pairs, page_sql, parse, random_page, run_sqlite, sample_pages, sql_pairs,
};
use rulebench::app::App;
use rulebench::app::sql::SqlRequest;
use rulebench::app::types::Dialect;
use serde_json::json;

#[test]
fn every_sample_page_means_the_same_in_sqlite() {
    let mut pairs = 0;
    for page in sample_pages() {
        pairs += differential(&page, Dialect::Sqlite);
    }
    assert!(pairs > 100, "{pairs} pairs");
}

#[test]
fn generated_pages_mean_the_same_in_sqlite() {
    let mut pairs = 0;
    for seed in 1..=150 {
        let page = parse(&random_page(seed, 6, 9, 12));
        pairs += differential(&page, Dialect::Sqlite);
    }
    assert_eq!(pairs, 150 * 6 * 9);
}

//! Criterion benches of the result path around the matrix: the printers (pretty JSON,
//! summary, CSV: what one `selection` call writes, the page's head made before) and the
//! result cache (encode to pages, decode from pages), on one selection of the synthetic
//! 10,000 targets × 100 rules page.

use std::io::Write;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use rulebench::app::synth::{self, Spread};
use rulebench::print::result::{
    CsvBuilder, Format, JsonBuilder, PrinterBuilder, ResultSink, SummaryBuilder,
};
use rulebench_core::matrix::Matrix;
use rulebench_core::result::{Names, SelectionResult};

/// A writer that keeps no byte (the cost of formatting, not of a disk).
struct Sink;

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(std::hint::black_box(buf).len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn result() -> SelectionResult {
    let page = synth::page(10_000, 100, 4, Spread::Realistic, 42);
    let mut m = Matrix::new(&page).expect("compiles");
    let names = Arc::new(Names::of(&page));
    SelectionResult::new(&page, names, m.evaluate(0), 1, "2026-11-23T00:00:00Z")
}

fn printers(c: &mut Criterion) {
    let r = result();
    let mut group = c.benchmark_group("print 10000x100");
    group.sample_size(10);
    // Each printer begins the page once (JSON escapes its ids, CSV writes its header);
    // an iteration prints the selection.
    let mut json = JsonBuilder::new().build(Sink);
    json.begin(&r.names, r.page_id(), "selection")
        .expect("writes");
    group.bench_function("json (pretty, full result)", |b| {
        b.iter(|| json.selection(&r).expect("writes"))
    });
    let mut summary = SummaryBuilder::new().build(Sink);
    summary
        .begin(&r.names, r.page_id(), "selection")
        .expect("writes");
    group.bench_function("summary", |b| {
        b.iter(|| summary.selection(&r).expect("writes"))
    });
    let mut csv = CsvBuilder::new().build(Sink);
    csv.begin(&r.names, r.page_id(), "selection")
        .expect("writes");
    group.bench_function("csv", |b| b.iter(|| csv.selection(&r).expect("writes")));
    csv.finish().expect("writes");
    // Parquet: one selection's 10,000 tidy rows (111 typed columns) appended column by
    // column; a row group is encoded and compressed every 65,536 rows, so an iteration
    // carries a sixth of that cost on average. `evaluate --all --format parquet` on 100
    // sources is 100 of these plus the evaluation (README, Benchmarks).
    let mut parquet = PrinterBuilder::new(Format::Parquet).all(true).build(Sink);
    parquet
        .begin(&r.names, r.page_id(), "selection")
        .expect("writes");
    group.bench_function("parquet (tidy rows)", |b| {
        b.iter(|| parquet.selection(&r).expect("writes"))
    });
    parquet.finish().expect("writes");
    group.finish();
}

fn cache(c: &mut Criterion) {
    let r = result();
    let pages = r.cache_pages();
    let mut group = c.benchmark_group("cache 10000x100");
    group.sample_size(10);
    group.bench_function("encode (100 pages)", |b| b.iter(|| r.cache_pages()));
    group.bench_function("decode (100 pages)", |b| {
        b.iter(|| SelectionResult::from_cache_pages(&pages, 0).expect("decodes"))
    });
    group.finish();
}

criterion_group!(benches, printers, cache);
criterion_main!(benches);

//! Criterion benches of the result path around the matrix: the printers (pretty JSON,
//! summary, CSV) and the result cache (encode to pages, decode from pages), on one
//! selection of the synthetic 10,000 targets × 100 rules page.

use std::io::Write;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use rulebench::app::synth::{self, Spread};
use rulebench::print::result as print;
use rulebench_core::matrix::Matrix;
use rulebench_core::result::{Names, SelectionResult};

/// A writer that counts bytes and keeps none (the cost of formatting, not of a disk).
struct Sink(usize);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
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
    let fragments = print::Fragments::new(&r.names, Some(0));
    group.bench_function("json (pretty, full result)", |b| {
        b.iter(|| {
            let mut w = Sink(0);
            print::json(&mut w, &r, &fragments).expect("writes");
            w.0
        })
    });
    group.bench_function("summary", |b| {
        b.iter(|| {
            let mut w = Sink(0);
            print::summary(&mut w, &r, false).expect("writes");
            w.0
        })
    });
    group.bench_function("csv", |b| {
        b.iter(|| {
            let mut w = csv::Writer::from_writer(Sink(0));
            print::csv_rows(&mut w, &r, true).expect("writes");
            w.into_inner().map(|s| s.0).unwrap_or(0)
        })
    });
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

//! Criterion benches: the matrix (full recompute, one-rule edit) against plain
//! datalogic-rs and jsonlogic-rs loops, on the synthetic page of `rulebench bench`.

use criterion::{Criterion, criterion_group, criterion_main};
use datalogic_rs::bumpalo::Bump;
use rulebench::app::synth::{self, Spread};
use rulebench_core::engine;
use rulebench_core::matrix::Matrix;
use serde_json::{Value, json};

const TARGETS: usize = 10_000;
const RULES: usize = 100;

fn matrix(c: &mut Criterion) {
    let mut group = c.benchmark_group("matrix 10000x100");
    group.sample_size(20);
    for (name, spread) in [("realistic", Spread::Realistic), ("unique", Spread::Unique)] {
        let page = synth::page(TARGETS, RULES, 4, spread, 42);
        let mut m = Matrix::new(&page).expect("compiles");
        m.evaluate(0);
        group.bench_function(format!("full recompute ({name})"), |b| {
            b.iter(|| {
                m.invalidate();
                m.evaluate(0)
            })
        });
        group.bench_function(format!("one-rule recompute ({name})"), |b| {
            b.iter(|| {
                m.replace_rule(RULES / 2, &page.rules[RULES / 2])
                    .expect("compiles");
                m.evaluate(0)
            })
        });
    }
    group.finish();
}

/// Per rule·pair cost of the plain loops, over one rule's column (10,000 pairs).
fn plain_loops(c: &mut Criterion) {
    let page = synth::page(TARGETS, RULES, 4, Spread::Realistic, 42);
    let rule = &page.rules[0];
    let compiled = engine::compile(&rule.logic).expect("compiles");
    let mut group = c.benchmark_group("plain loop, one column of 10000 pairs");
    group.sample_size(10);
    let data = Bump::new();
    let contexts = synth::engine_contexts(&page, &data);
    group.bench_function("datalogic-rs", |b| {
        let mut arena = Bump::new();
        b.iter(|| {
            let n = contexts
                .iter()
                .filter(|ctx| {
                    engine::engine()
                        .evaluate(&compiled.logic, *ctx, &arena)
                        .is_ok_and(engine::truthy)
                })
                .count();
            arena.reset();
            n
        })
    });
    let json_contexts: Vec<Value> = page
        .target
        .rows
        .iter()
        .map(|t| json!({"source": page.source.rows[0], "target": t}))
        .collect();
    group.bench_function("jsonlogic-rs", |b| {
        b.iter(|| {
            json_contexts
                .iter()
                .filter(|d| jsonlogic::apply(&rule.logic, d).is_ok_and(|v| v == Value::Bool(true)))
                .count()
        })
    });
    group.finish();
}

criterion_group!(benches, matrix, plain_loops);
criterion_main!(benches);

//! `rulebench bench`: the matrix against plain engine loops on a synthetic page.

use std::time::{Duration, Instant};

use datalogic_rs::DataValue;
use datalogic_rs::bumpalo::Bump;

use crate::synth::{self, Spread};
use rulebench_core::engine;
use rulebench_core::matrix::Matrix;

/// Best of `runs` timings of `f`.
fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs.max(1) {
        let t0 = Instant::now();
        let out = f();
        best = best.min(t0.elapsed());
        last = Some(out);
    }
    (best, last.expect("ran at least once"))
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn ns(d: Duration, n: usize) -> f64 {
    d.as_secs_f64() * 1e9 / n.max(1) as f64
}

/// The sampled (rule, target) pairs for the plain loops: spread over the whole matrix.
fn sample_pairs(rules: usize, targets: usize, sample: usize) -> Vec<(usize, usize)> {
    let total = rules * targets;
    let step = (total / sample.max(1)).max(1);
    (0..total)
        .step_by(step)
        .take(sample)
        .map(|k| (k % rules, k / rules))
        .collect()
}

/// ns per rule·pair of a plain datalogic-rs loop (rows converted once, contexts prebuilt).
fn datalogic_loop(page: &rulebench_core::model::Page, pairs: &[(usize, usize)]) -> f64 {
    let compiled: Vec<_> = page
        .rules
        .iter()
        .map(|r| engine::compile(&r.logic).expect("valid"))
        .collect();
    let data = Bump::new();
    let contexts = crate::synth::engine_contexts(page, &data);
    let mut arena = Bump::new();
    let (d, _) = best(3, || {
        let mut passed = 0usize;
        for &(r, t) in pairs {
            let context: &DataValue = &contexts[t];
            if let Ok(v) = engine::engine().evaluate(&compiled[r].logic, context, &arena)
                && engine::truthy(v)
            {
                passed += 1;
            }
        }
        arena.reset();
        passed
    });
    ns(d, pairs.len())
}

#[cfg(feature = "baseline")]
fn jsonlogic_loop(page: &rulebench_core::model::Page, pairs: &[(usize, usize)]) -> Option<f64> {
    let contexts: Vec<serde_json::Value> = page
        .target
        .rows
        .iter()
        .map(|t| serde_json::json!({"source": page.source.rows[0], "target": t}))
        .collect();
    let (d, _) = best(1, || {
        pairs
            .iter()
            .filter(|&&(r, t)| {
                jsonlogic::apply(&page.rules[r].logic, &contexts[t])
                    .is_ok_and(|v| v == serde_json::Value::Bool(true))
            })
            .count()
    });
    Some(ns(d, pairs.len()))
}

#[cfg(not(feature = "baseline"))]
fn jsonlogic_loop(_: &rulebench_core::model::Page, _: &[(usize, usize)]) -> Option<f64> {
    None
}

/// Runs the benchmark and returns the report.
pub fn run(targets: usize, rules: usize, sources: usize, sample: usize) -> String {
    let mut out = String::new();
    let threads = rayon::current_num_threads();
    let evals = targets * rules;
    out.push_str(&format!(
        "rulebench bench: {targets} targets × {rules} rules ({evals} rule·pair evaluations per selection), {sources} sources, {threads} threads\n\n"
    ));
    for spread in [Spread::Realistic, Spread::Unique] {
        let page = synth::page(targets, rules, sources, spread, 42);
        let label = match spread {
            Spread::Realistic => "realistic values (small domains, as capability data has)",
            Spread::Unique => "worst case (every rule reads a field unique to each target)",
        };
        out.push_str(&format!("## {label}\n"));
        let (cold, mut matrix) = best(3, || {
            let mut m = Matrix::new(&page).expect("synthetic rules compile");
            m.evaluate(0);
            m
        });
        let (full, eval) = best(5, || {
            matrix.invalidate();
            matrix.evaluate(0)
        });
        let groups: usize = eval.columns.iter().map(|c| c.evaluations).sum();
        let edited = rules / 2;
        let (one, _) = best(20, || {
            matrix
                .replace_rule(edited, &page.rules[edited])
                .expect("compiles");
            matrix.evaluate(0)
        });
        let (switch, _) = best(5, || {
            matrix.evaluate(1 % sources.max(1));
            matrix.evaluate(0)
        });
        let pairs = sample_pairs(rules, targets, sample);
        let datalogic = datalogic_loop(&page, &pairs);
        let jsonlogic = jsonlogic_loop(&page, &pairs);
        let matrix_ns = ns(full, evals);
        out.push_str(&format!(
            "  engine evaluations needed: {groups} of {evals} rule·pairs ({:.1}%)\n",
            groups as f64 * 100.0 / evals.max(1) as f64
        ));
        out.push_str(&format!(
            "  full-matrix recompute (all columns):   {:>12}   {:>9.2} ns per rule·pair\n",
            ms(full),
            matrix_ns
        ));
        out.push_str(&format!(
            "  cold open (encode + group + compute):  {:>12}\n",
            ms(cold)
        ));
        out.push_str(&format!(
            "  one-rule recompute (an edit):          {:>12}\n",
            ms(one)
        ));
        out.push_str(&format!(
            "  selection switch and back (cached):    {:>12}\n",
            ms(switch / 2)
        ));
        out.push_str(&format!("  plain datalogic-rs loop:               {:>12.2} ns per rule·pair  ({:.0}× slower than the matrix)\n", datalogic, datalogic / matrix_ns));
        match jsonlogic {
            Some(j) => out.push_str(&format!(
                "  plain jsonlogic-rs loop:               {:>12.2} ns per rule·pair  ({:.0}× slower than the matrix)\n",
                j,
                j / matrix_ns
            )),
            None => out.push_str("  plain jsonlogic-rs loop:               not built in (cargo run --release --features baseline -- bench)\n"),
        }
        out.push_str(&format!(
            "  (plain loops: {} sampled pairs, one thread)\n\n",
            pairs.len()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_pairs_cover_the_matrix() {
        let pairs = sample_pairs(10, 100, 50);
        assert_eq!(pairs.len(), 50);
        assert!(pairs.iter().all(|&(r, t)| r < 10 && t < 100));
        assert!(pairs.iter().any(|&(_, t)| t > 90));
    }

    #[test]
    fn report_names_every_figure() {
        let report = run(200, 12, 2, 500);
        for needle in [
            "full-matrix recompute",
            "one-rule recompute",
            "plain datalogic-rs loop",
            "worst case",
        ] {
            assert!(report.contains(needle), "{report}");
        }
    }
}

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

/// Verdict counts of a page's every pair: targets at 0, 1, 2, and sources at 0, 1, 2.
type Counts = ([usize; 3], [usize; 3]);

/// `rulebench bench --compare`: every source of one synthetic page evaluated twice in
/// this process — by rulebench (sources grouped, columns per distinct value, verdicts
/// from the columns, both cores) and by a plain datalogic-rs loop over every rule of
/// every pair on one thread (the fastest JSONLogic engine, its rows converted once) —
/// with both verdict counts, whether they are equal, and the ratio of the times.
pub fn compare(targets: usize, rules: usize, sources: usize) -> crate::Result<String> {
    use rulebench_core::verdict::{self, RuleWeight, Scoring, Tally};
    let page = synth::page(targets, rules, sources, Spread::Realistic, 42);
    let pairs = targets * sources;
    let index = |v: verdict::Verdict| usize::from(v.number());
    // rulebench: a fresh matrix, every source, counted from the verdicts.
    let t0 = Instant::now();
    let mut matrix = Matrix::new(&page).map_err(crate::AppError::from)?;
    let mut ours: Counts = ([0; 3], [0; 3]);
    for s in 0..sources {
        // As `evaluate --format counts` does: the verdicts without each target's.
        let eval = matrix.evaluate_verdicts(s);
        for (sum, n) in ours.0.iter_mut().zip(eval.verdict_counts) {
            *sum += n;
        }
        ours.1[index(eval.selection_verdict)] += 1;
    }
    let ours_time = t0.elapsed();
    let computed = matrix.evaluations_computed();
    // The loop: each pair's rule outcomes, its tally and its verdict, as the engine
    // documents them; no grouping, no cache.
    let t0 = Instant::now();
    let compiled: Vec<_> = page
        .rules
        .iter()
        .map(|r| {
            engine::compile_rule(&r.logic, r.applies_when.as_ref().map(|c| &c.logic))
                .expect("synthetic rules compile")
        })
        .collect();
    let weights: Vec<RuleWeight> = page
        .rules
        .iter()
        .map(|r| RuleWeight {
            required: r.required,
            weight: r.weight,
        })
        .collect();
    let scoring = Scoring::new(&page.device_policy, &weights);
    let data = Bump::new();
    let targets_data: Vec<DataValue> = page
        .target
        .rows
        .iter()
        .map(|t| DataValue::from_serde_value_in(&serde_json::Value::Object(t.clone()), &data))
        .collect();
    let mut theirs: Counts = ([0; 3], [0; 3]);
    let mut arena = Bump::new();
    for source in &page.source.rows {
        let source =
            DataValue::from_serde_value_in(&serde_json::Value::Object(source.clone()), &data);
        let mut verdicts = Vec::with_capacity(targets);
        for &target in &targets_data {
            let context = DataValue::Object(data.alloc([("source", source), ("target", target)]));
            let mut tally = Tally::default();
            for (rule, &w) in compiled.iter().zip(&scoring.rules) {
                let holds = |logic| {
                    engine::engine()
                        .evaluate(logic, context, &arena)
                        .map(engine::truthy)
                };
                // Some(passed), or None where the rule does not apply; an engine
                // error fails the rule.
                let outcome = match rule.applies.as_ref().map(holds) {
                    Some(Ok(false)) => None,
                    Some(Err(_)) => Some(false),
                    Some(Ok(true)) | None => Some(holds(&rule.logic).unwrap_or(false)),
                };
                let Some(passed) = outcome else {
                    continue;
                };
                if Tally::scores(&scoring.policy, w) {
                    tally.total_weight += w.weight;
                    if passed {
                        tally.passed_weight += w.weight;
                    }
                }
                tally.required_failed |= w.required && !passed;
            }
            arena.reset();
            let d = verdict::device_verdict(&scoring, &tally, None);
            theirs.0[index(d.verdict)] += 1;
            verdicts.push(d.verdict);
        }
        theirs.1[index(verdict::selection_verdict(
            &page.selection_policy,
            &verdicts,
        ))] += 1;
    }
    let theirs_time = t0.elapsed();
    let counts = |c: &Counts| {
        format!(
            "targets at 2/1/0: {}/{}/{}; sources at 2/1/0: {}/{}/{}",
            c.0[2], c.0[1], c.0[0], c.1[2], c.1[1], c.1[0]
        )
    };
    let mut out = format!(
        "rulebench bench --compare: {sources} sources × {targets} targets × {rules} rules ({} rule·pairs), {} threads\n",
        pairs * rules,
        rayon::current_num_threads()
    );
    out.push_str(&format!(
        "  rulebench, every source:          {:>10.3} s   {}   ({computed} of {sources} sources computed, the rest grouped)\n",
        ours_time.as_secs_f64(),
        counts(&ours)
    ));
    out.push_str(&format!(
        "  datalogic-rs loop, every pair:    {:>10.3} s   {}   (one thread)\n",
        theirs_time.as_secs_f64(),
        counts(&theirs)
    ));
    if ours != theirs {
        return Err(crate::AppError::Usage(format!(
            "{out}bench --compare: the verdict counts differ: the comparison means nothing"
        )));
    }
    out.push_str(&format!(
        "  verdict counts equal; rulebench is {:.0}× the loop\n",
        theirs_time.as_secs_f64() / ours_time.as_secs_f64().max(1e-9)
    ));
    Ok(out)
}

/// `rulebench bench --import ROWS`: ROWS synthetic rows of 8 columns (an id, a name, a
/// provider, two numbers, two booleans and a JSON array) written as CSV and as the same
/// rows in Parquet, each imported into a new dataset of a new scratch database; the
/// report gives each import's wall time (opening the database, the import, closing it)
/// and rows per second. The files and databases live in a scratch directory that is
/// removed afterwards.
pub fn imports(rows: usize) -> crate::Result<String> {
    use crate::dataset::ImportOptions;
    use rulebench_core::model::Side;
    let dir = Scratch::new()?;
    let io = |path: &std::path::Path| {
        let path = path.display().to_string();
        move |source| crate::AppError::Io { path, source }
    };
    let csv = dir.0.join("rows.csv");
    let parquet = dir.0.join("rows.parquet");
    let table = synthetic_rows(rows);
    std::fs::write(&csv, table.csv()).map_err(io(&csv))?;
    std::fs::write(&parquet, table.parquet()).map_err(io(&parquet))?;
    drop(table);
    let page = r#"{"format": "rulebench.page/v1", "id": "bench", "name": "Import bench",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": "m0"}]}}"#;
    let mut out = format!("dataset import of {rows} rows (8 columns) into a new dataset\n");
    for (name, file) in [("csv", &csv), ("parquet", &parquet)] {
        let db = dir.0.join(format!("{name}.db"));
        let options = crate::OpenOptions {
            create_dir: false,
            seed: false,
        };
        crate::App::open_with(&db, options)?
            .app
            .import(page, "<bench>", false)?;
        let size = std::fs::metadata(file).map_err(io(file))?.len();
        let t0 = Instant::now();
        let mut app = crate::App::open_with(&db, options)?.app;
        let done = app.import_dataset(
            "bench",
            Side::Target,
            file,
            &ImportOptions::default(),
            &mut |_| {},
        )?;
        drop(app);
        let took = t0.elapsed();
        out.push_str(&format!(
            "  {name:<8} {:>6.1} MB  {:>7.3} s  {:>9.0} rows/s  ({} rows)\n",
            size as f64 / 1e6,
            took.as_secs_f64(),
            done.rows as f64 / took.as_secs_f64(),
            done.rows
        ));
    }
    Ok(out)
}

/// A scratch directory, removed when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new() -> crate::Result<Scratch> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path =
            std::env::temp_dir().join(format!("rulebench-bench-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&path).map_err(|source| crate::AppError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Ok(Scratch(path))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The import benchmark's rows, column by column (a fixed pseudo-random sequence).
struct SyntheticRows {
    providers: Vec<&'static str>,
    context: Vec<i64>,
    cost: Vec<f64>,
    tools: Vec<bool>,
    vision: Vec<bool>,
    modes: Vec<&'static [&'static str]>,
}

fn synthetic_rows(rows: usize) -> SyntheticRows {
    const PROVIDERS: [&str; 6] = ["openai", "azure", "anthropic", "google", "mistral", "meta"];
    const CONTEXT: [i64; 5] = [4096, 8192, 32768, 128000, 200000];
    const MODES: [&[&str]; 3] = [&["chat"], &["chat", "vision"], &["embedding"]];
    let mut state: u64 = 42;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 33
    };
    let mut t = SyntheticRows {
        providers: Vec::with_capacity(rows),
        context: Vec::with_capacity(rows),
        cost: Vec::with_capacity(rows),
        tools: Vec::with_capacity(rows),
        vision: Vec::with_capacity(rows),
        modes: Vec::with_capacity(rows),
    };
    for _ in 0..rows {
        t.providers
            .push(PROVIDERS[next() as usize % PROVIDERS.len()]);
        t.context.push(CONTEXT[next() as usize % CONTEXT.len()]);
        t.cost.push((next() % 100_000) as f64 / 10_000.0);
        t.tools.push(next() % 2 == 0);
        t.vision.push(next() % 2 == 0);
        t.modes.push(MODES[next() as usize % MODES.len()]);
    }
    t
}

impl SyntheticRows {
    fn csv(&self) -> Vec<u8> {
        use std::fmt::Write;
        let mut out = String::from(
            "id,name,provider,contextWindow,inputCost,supportsTools,supportsVision,modes\n",
        );
        for i in 0..self.context.len() {
            let modes: Vec<String> = self.modes[i]
                .iter()
                .map(|m| format!("\"\"{m}\"\""))
                .collect();
            writeln!(
                out,
                "m{i},Model {i},{},{},{},{},{},\"[{}]\"",
                self.providers[i],
                self.context[i],
                self.cost[i],
                self.tools[i],
                self.vision[i],
                modes.join(",")
            )
            .expect("a String takes any text");
        }
        out.into_bytes()
    }

    fn parquet(&self) -> Vec<u8> {
        use arrow_array::builder::{ListBuilder, StringBuilder};
        use arrow_array::{
            ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray,
        };
        use std::sync::Arc;
        let n = self.context.len();
        let mut modes = ListBuilder::new(StringBuilder::new());
        for m in &self.modes {
            for v in *m {
                modes.values().append_value(v);
            }
            modes.append(true);
        }
        let columns: Vec<(&str, ArrayRef)> = vec![
            (
                "id",
                Arc::new(StringArray::from_iter_values(
                    (0..n).map(|i| format!("m{i}")),
                )),
            ),
            (
                "name",
                Arc::new(StringArray::from_iter_values(
                    (0..n).map(|i| format!("Model {i}")),
                )),
            ),
            (
                "provider",
                Arc::new(StringArray::from_iter_values(self.providers.iter())),
            ),
            (
                "contextWindow",
                Arc::new(Int64Array::from(self.context.clone())),
            ),
            ("inputCost", Arc::new(Float64Array::from(self.cost.clone()))),
            (
                "supportsTools",
                Arc::new(BooleanArray::from(self.tools.clone())),
            ),
            (
                "supportsVision",
                Arc::new(BooleanArray::from(self.vision.clone())),
            ),
            ("modes", Arc::new(modes.finish())),
        ];
        let batch = RecordBatch::try_from_iter(columns).expect("columns of one length");
        let mut out = Vec::new();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_compression(parquet::basic::Compression::SNAPPY)
            .build();
        let mut writer =
            parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), Some(props))
                .expect("an in-memory writer");
        writer.write(&batch).expect("a batch of its schema");
        writer.close().expect("an in-memory writer");
        out
    }
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

    /// The comparison counts the same verdicts both ways (else it refuses to report),
    /// on a page whose sources repeat (40 of them) and on a small one.
    #[test]
    fn the_comparison_counts_equal_verdicts_both_ways() {
        for (targets, rules, sources) in [(300, 12, 40), (50, 3, 7)] {
            let report = compare(targets, rules, sources).unwrap_or_else(|e| panic!("{e}"));
            assert!(report.contains("verdict counts equal"), "{report}");
            let counts: Vec<&str> = report
                .lines()
                .filter_map(|l| l.split("targets at").nth(1))
                .map(|c| c.split("   (").next().unwrap())
                .collect();
            assert_eq!(counts.len(), 2, "{report}");
            assert_eq!(counts[0], counts[1], "{report}");
        }
    }

    /// The import benchmark's CSV and Parquet hold the same rows: both import every row
    /// and read back the same page rows; the report names both, and the scratch
    /// directory is gone afterwards.
    #[test]
    fn the_import_bench_imports_the_same_rows_both_ways() {
        let report = imports(3000).unwrap();
        assert!(
            report.contains("csv") && report.contains("parquet"),
            "{report}"
        );
        assert_eq!(report.matches("(3000 rows)").count(), 2, "{report}");
        let t = synthetic_rows(50);
        let dir = tempfile::tempdir().unwrap();
        let read = |name: &str, bytes: Vec<u8>| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            let read = rulebench_core::model::ReadOptions::default();
            let key = ["id".to_owned()];
            crate::dataset::read_rows(
                crate::dataset::DataInput::File(&path),
                &crate::dataset::Reading {
                    key: &key,
                    key_case: rulebench_core::model::KeyCase::Sensitive,
                    read: &read,
                    skip_bad: false,
                },
                &mut |_| {},
            )
            .unwrap()
            .rows
        };
        let csv = read("rows.csv", t.csv());
        assert_eq!(csv.len(), 50);
        assert_eq!(csv, read("rows.parquet", t.parquet()));
        assert!(csv[3]["modes"].is_array(), "{:?}", csv[3]);
        let scratch = std::env::temp_dir();
        let left = std::fs::read_dir(&scratch)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("rulebench-bench-{}-", std::process::id()))
            })
            .count();
        assert_eq!(left, 0, "the scratch directory is removed");
    }
}

//! Background jobs: every source's selection verdict and the assertions, computed off
//! the key thread on the worker's own copy of the page, tagged with the generation
//! they were computed for; a stale result never surfaces.

use std::time::Duration;

use rulebench::app::jobs::{JobResult, Jobs, Mode};
use rulebench::core::matrix::Matrix;
use rulebench::core::model::Page;
use rulebench::synth::{self, Spread};
use serde_json::json;

fn page() -> Page {
    let mut p = synth::page(2_000, 20, 12, Spread::Realistic, 5);
    p.assertions = synth::assertions(&p, 4);
    p
}

/// What the verdicts of a page are, computed directly.
fn expected(p: &Page) -> Vec<u8> {
    let mut m = Matrix::new(p).unwrap();
    (0..p.source.rows.len())
        .map(|s| m.evaluate(s).selection_verdict)
        .collect()
}

fn verdicts_of(results: &[JobResult]) -> Option<(u64, Vec<u8>)> {
    results.iter().find_map(|r| match r {
        JobResult::Verdicts {
            generation,
            verdicts,
        } => Some((*generation, verdicts.clone())),
        _ => None,
    })
}

/// A rule change that moves verdicts: every rule fails.
fn break_rules(p: &mut Page) {
    for r in &mut p.rules {
        r.logic = json!({"==": [1, 2]});
    }
}

#[test]
fn inline_jobs_answer_at_once_with_what_the_matrix_says() {
    let mut p = page();
    let mut jobs = Jobs::start(Mode::Inline, &p, 1, 0);
    let results = jobs.poll();
    assert_eq!(verdicts_of(&results), Some((1, expected(&p))));
    let report = results.iter().find_map(|r| match r {
        JobResult::Tests { report, .. } => report.clone(),
        _ => None,
    });
    let report = report.expect("the page has assertions").unwrap();
    assert_eq!(report.results.len(), 4);
    assert!(!jobs.pending());

    // Nothing changed: nothing is submitted.
    assert!(!jobs.sync(&p, 1, 0));
    break_rules(&mut p);
    assert!(jobs.sync(&p, 1, 0));
    assert_eq!(jobs.generation(), 2);
    let results = jobs.poll();
    assert_eq!(verdicts_of(&results), Some((2, expected(&p))));
    assert!(expected(&p).iter().all(|&v| v == 0), "every rule fails now");
    // New rows (a reload) travel to the worker.
    p.target.rows.truncate(3);
    assert!(jobs.sync(&p, 1, 7));
    assert_eq!(verdicts_of(&jobs.poll()), Some((3, expected(&p))));
}

#[test]
fn background_jobs_follow_edits_and_rows() {
    let mut p = page();
    let mut jobs = Jobs::start(Mode::Background, &p, 1, 0);
    let first = jobs.settle(Duration::from_secs(20));
    assert_eq!(verdicts_of(&first), Some((1, expected(&p))));
    // A burst of edits: only the newest generation answers.
    p.device_policy.full_threshold = 0.5;
    jobs.submit(&p, 2, false);
    p.rules[3].logic = json!({"==": [{"var": "target.tier"}, "pro"]});
    jobs.submit(&p, 3, false);
    let results = jobs.settle(Duration::from_secs(20));
    assert!(results.iter().all(|r| r.generation() == 3), "{results:?}");
    assert_eq!(verdicts_of(&results), Some((3, expected(&p))));
    // Rows travel when they change.
    p.target.rows.truncate(10);
    jobs.submit(&p, 4, true);
    let results = jobs.settle(Duration::from_secs(20));
    assert_eq!(verdicts_of(&results), Some((4, expected(&p))));
    assert!(!jobs.pending());
}

#[test]
fn a_stale_result_is_dropped() {
    let mut p = page();
    let mut jobs = Jobs::start(Mode::Background, &p, 1, 0);
    // Let generation 1's results arrive in the channel without taking them ...
    std::thread::sleep(Duration::from_millis(1500));
    // ... then change the page: generation 1's results are stale now.
    break_rules(&mut p);
    jobs.submit(&p, 2, false);
    let mut seen = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while jobs.pending() && std::time::Instant::now() < deadline {
        seen.extend(jobs.poll());
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!seen.is_empty());
    assert!(
        seen.iter().all(|r| r.generation() == 2),
        "a generation-1 result surfaced: {seen:?}"
    );
    assert_eq!(verdicts_of(&seen), Some((2, expected(&p))));
}

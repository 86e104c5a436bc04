//! Background jobs: every source's selection verdict and the assertions, computed off
//! the key thread on the worker's own copy of the page, tagged with the generation
//! they were computed for; a stale result never surfaces.

use rulebench_core::verdict::Verdict;
use std::time::Duration;

use rulebench::app::jobs::{JobResult, Jobs, Mode, Stamps};
use rulebench::app::synth::{self, Spread};
use rulebench_core::matrix::Matrix;
use rulebench_core::model::Page;
use serde_json::json;

fn page() -> Page {
    let mut p = synth::page(2_000, 20, 12, Spread::Realistic, 5);
    p.assertions = synth::assertions(&p, 4);
    p
}

/// What the verdicts of a page are, computed directly.
fn expected(p: &Page) -> Vec<Verdict> {
    let mut m = Matrix::new(p).unwrap();
    (0..p.source.rows.len())
        .map(|s| m.evaluate(s).selection_verdict)
        .collect()
}

fn verdicts_of(results: &[JobResult]) -> Option<(u64, Vec<Verdict>)> {
    results.iter().find_map(|r| match r {
        JobResult::Verdicts {
            generation,
            verdicts,
            ..
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
    let mut jobs = Jobs::start(Mode::Inline, &p, 1, Stamps::default());
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
    assert!(!jobs.sync(&p, 1, Stamps::default()));
    break_rules(&mut p);
    assert!(jobs.sync(&p, 1, Stamps::default()));
    assert_eq!(jobs.generation(), 2);
    let results = jobs.poll();
    assert_eq!(verdicts_of(&results), Some((2, expected(&p))));
    assert!(
        expected(&p).iter().all(|&v| v == Verdict::None),
        "every rule fails now"
    );
    // New rows (a reload) travel to the worker.
    p.target.rows.truncate(3);
    let reloaded = Stamps {
        rows: 7,
        overrides: 0,
    };
    assert!(jobs.sync(&p, 1, reloaded));
    assert_eq!(verdicts_of(&jobs.poll()), Some((3, expected(&p))));
}

#[test]
fn background_jobs_follow_edits_and_rows() {
    let mut p = page();
    let mut jobs = Jobs::start(Mode::Background, &p, 1, Stamps::default());
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
    let mut jobs = Jobs::start(Mode::Background, &p, 1, Stamps::default());
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

/// A cell edit rewrites one stored row, recomputes what reads the field, and reaches
/// the background work as that row alone: every selection then agrees with a matrix
/// built from scratch on the edited page, and so do the background verdicts.
#[test]
fn a_cell_edit_is_incremental_and_reaches_the_background() {
    use rulebench::app::App;
    use rulebench::app::workspace::Session;
    use rulebench_core::model::Side;

    let dir = tempfile::tempdir().unwrap();
    let mut app = App::open(&dir.path().join("t.db")).unwrap();
    let p = page();
    app.import(&serde_json::to_string(&p).unwrap(), "p.json", false)
        .unwrap();
    let mut ws = Session::open(&app, &p.id).unwrap();
    let mut jobs = Jobs::start(Mode::Background, &ws.page, ws.revision, ws.stamps());
    jobs.settle(Duration::from_secs(20));
    // Warm every selection's columns, so stale caches would show.
    for s in 0..ws.page.source.rows.len() {
        ws.select(s);
    }
    let stamp = ws.rows_stamp;
    let before = ws.revision;
    ws.set_cell(Side::Target, 5, "tier", json!("enterprise"))
        .unwrap();
    ws.set_cell(Side::Target, 7, "contextWindow", json!(1))
        .unwrap();
    ws.set_cell(Side::Source, 2, "minContext", json!(2_000_000))
        .unwrap();
    ws.set_cell(Side::Source, 3, "provider", json!("meta"))
        .unwrap();
    assert_eq!(ws.revision, before + 4, "one revision per cell");
    assert_eq!(ws.rows_stamp, stamp, "no reload");
    let mut fresh = Matrix::new(&ws.page).unwrap();
    for s in 0..ws.page.source.rows.len() {
        ws.select(s);
        let f = fresh.evaluate(s);
        assert_eq!(ws.eval.devices, f.devices, "source {s}");
        let outcomes = |cols: &[std::sync::Arc<rulebench_core::matrix::Column>]| -> Vec<Vec<rulebench_core::matrix::Outcome>> {
            cols.iter().map(|c| c.outcome.clone()).collect()
        };
        assert_eq!(
            outcomes(&ws.eval.columns),
            outcomes(&f.columns),
            "source {s}"
        );
    }
    // Stored: the page reads back with the edits.
    let (stored, rev) = app.page(&p.id).unwrap();
    assert_eq!(rev, ws.revision);
    assert_eq!(stored.target.rows, ws.page.target.rows);
    assert_eq!(stored.source.rows, ws.page.source.rows);
    // The background work got the rows that changed, not all rows.
    let cells = ws.take_cell_edits();
    assert_eq!(cells.len(), 4);
    assert!(jobs.sync_with(&ws.page, ws.revision, ws.stamps(), cells));
    let results = jobs.settle(Duration::from_secs(20));
    assert_eq!(verdicts_of(&results).map(|v| v.1), Some(expected(&ws.page)));
}

/// Overrides travel to the worker only when they change (a page may have 100,000): the
/// worker keeps the last ones through rule and policy edits, takes new ones when they
/// change, and a burst that changed them and then a rule keeps both.
#[test]
fn overrides_travel_only_when_they_change_and_the_worker_keeps_them() {
    use rulebench_core::model::Override;
    let mut p = page();
    // Every target of the first source forced incompatible: its selection is too.
    let first = p.source.row_key(&p.source.rows[0]);
    p.overrides = p
        .target
        .rows
        .iter()
        .map(|t| Override {
            source_key: Some(first.clone()),
            target_key: Some(p.target.row_key(t)),
            source_key_hash: None,
            target_key_hash: None,
            value: false,
            note: None,
        })
        .collect();
    let all = p.overrides.clone();
    let mut jobs = Jobs::start(Mode::Inline, &p, 1, Stamps::default());
    let verdicts = verdicts_of(&jobs.poll()).expect("verdicts").1;
    assert_eq!(verdicts, expected(&p));
    assert_eq!(verdicts[0], Verdict::None);
    // A rule and a policy edit: the overrides stay, though not sent again.
    let mut stamps = Stamps::default();
    p.rules[3].logic = json!({"==": [{"var": "target.tier"}, "pro"]});
    assert!(jobs.sync(&p, 1, stamps));
    let verdicts = verdicts_of(&jobs.poll()).expect("verdicts").1;
    assert_eq!((verdicts[0], &verdicts), (Verdict::None, &expected(&p)));
    p.device_policy.full_threshold = 0.5;
    assert!(jobs.sync(&p, 1, stamps));
    assert_eq!(verdicts_of(&jobs.poll()).expect("verdicts").1, expected(&p));
    // Half of them gone (their stamp moves): the worker takes the new ones.
    p.overrides.truncate(p.overrides.len() / 2);
    stamps.overrides += 1;
    assert!(jobs.sync(&p, 1, stamps));
    let verdicts = verdicts_of(&jobs.poll()).expect("verdicts").1;
    assert_eq!(verdicts, expected(&p));
    // In the background, a burst: the overrides cleared, then a rule edited.
    p.overrides = all;
    let mut jobs = Jobs::start(Mode::Background, &p, 1, Stamps::default());
    let verdicts = verdicts_of(&jobs.settle(Duration::from_secs(20)))
        .expect("verdicts")
        .1;
    assert_eq!(verdicts[0], Verdict::None);
    p.overrides.clear();
    stamps.overrides += 1;
    assert!(jobs.sync(&p, 2, stamps));
    p.rules[4].logic = json!({"==": [{"var": "target.tier"}, "free"]});
    assert!(jobs.sync(&p, 3, stamps));
    let results = jobs.settle(Duration::from_secs(20));
    let verdicts = verdicts_of(&results).expect("verdicts").1;
    assert_eq!(verdicts, expected(&p));
    assert_ne!(verdicts[0], Verdict::None, "no override left: {verdicts:?}");
}

/// An override set in the workbench reaches the background work: its stamp moves, so
/// the worker is sent the overrides (they are told changed by their stamp, not compared
/// on every keystroke), and the next keystroke that changes nothing sends nothing.
#[test]
fn an_override_set_in_the_workbench_reaches_the_background() {
    use rulebench::app::App;
    use rulebench::app::workspace::Session;

    let dir = tempfile::tempdir().unwrap();
    let mut app = App::open(&dir.path().join("o.db")).unwrap();
    let p = synth::page(30, 8, 4, Spread::Realistic, 11);
    app.import(&serde_json::to_string(&p).unwrap(), "p.json", false)
        .unwrap();
    let mut ws = Session::open(&app, &p.id).unwrap();
    let mut jobs = Jobs::start(Mode::Inline, &ws.page, ws.revision, ws.stamps());
    let first = verdicts_of(&jobs.poll()).expect("verdicts").1;
    assert_ne!(first[0], Verdict::None, "a source with a compatible target");
    // Every target of the first source forced incompatible, one save each.
    let stamp = ws.overrides_stamp;
    for t in 0..ws.page.target.rows.len() {
        ws.set_override_at(0, t, Some((false, None))).unwrap();
    }
    assert!(jobs.sync_with(&ws.page, ws.revision, ws.stamps(), Vec::new()));
    let verdicts = verdicts_of(&jobs.poll()).expect("verdicts").1;
    assert_eq!(verdicts, expected(&ws.page));
    assert_eq!(verdicts[0], Verdict::None);
    assert_ne!(ws.overrides_stamp, stamp);
    assert!(!jobs.sync_with(&ws.page, ws.revision, ws.stamps(), Vec::new()));
    // Cleared again: the worker takes that too.
    for t in 0..ws.page.target.rows.len() {
        ws.set_override_at(0, t, None).unwrap();
    }
    assert!(ws.page.overrides.is_empty());
    assert!(jobs.sync_with(&ws.page, ws.revision, ws.stamps(), Vec::new()));
    assert_eq!(verdicts_of(&jobs.poll()).expect("verdicts").1, first);
}

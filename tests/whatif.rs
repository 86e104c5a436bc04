//! Counterfactuals (`explain … --why-not V`): every claim is checked by evaluating its
//! witness with the engine — a set of rule outcomes by making those rules constant, a
//! threshold by setting it, a recommendation edit by making it — and the sets' size is
//! checked minimal by trying every smaller set from scratch.

mod common;

use rulebench::app::App;
use rulebench::app::types::{Verdict, WhyNotReport};
use rulebench_core::matrix::Matrix;
use rulebench_core::model::{Page, Side};
use rulebench_core::verdict::{RuleWeight, Scoring, device_verdict};
use serde_json::Value;

const PAGES: [&str; 3] = [
    "llm-chat-clients",
    "loan-eligibility",
    "provider-capabilities",
];
const VERDICTS: [Verdict; 3] = [Verdict::None, Verdict::Partial, Verdict::Full];

fn app() -> (tempfile::TempDir, App) {
    let dir = tempfile::tempdir().unwrap();
    let app = App::open(&dir.path().join("w.db")).unwrap();
    (dir, app)
}

/// The target's verdict on `page` for source `s`, by the engine.
fn engine(page: &Page, s: usize, t: usize) -> (Verdict, Option<usize>) {
    let mut m = Matrix::new(page).unwrap();
    let e = m.evaluate(s);
    (e.devices[t].verdict, e.recommended)
}

fn index(page: &Page, side: Side, id: &str) -> usize {
    let d = page.dataset(side);
    d.rows.iter().position(|r| d.row_id(r) == id).unwrap()
}

/// Checks one report's every claim with the engine.
fn check(page: &Page, r: &WhyNotReport) {
    let s = page
        .source
        .rows
        .iter()
        .position(|row| page.source.row_key(row) == r.selection_key)
        .unwrap();
    let t = index(page, Side::Target, &r.target);
    // Without the pair's override: the sets and thresholds are for the rules alone.
    let mut alone = page.clone();
    let (sh, th) = (
        rulebench_core::model::key_hash(&page.source.row_key(&page.source.rows[s])),
        rulebench_core::model::key_hash(&page.target.row_key(&page.target.rows[t])),
    );
    alone.overrides.retain(|o| {
        !(o.source_hash().as_deref() == Some(&sh) && o.target_hash().as_deref() == Some(&th))
    });
    let w = &r.why;
    // Each set: its rules made constant at the outcome it names give the asked verdict.
    for set in &w.sets {
        assert_eq!(set.changes.len(), w.changes_needed.unwrap());
        let mut p = alone.clone();
        for c in &set.changes {
            p.rules[c.index].logic = Value::Bool(c.to == "pass");
            p.rules[c.index].applies_when = None;
        }
        assert_eq!(engine(&p, s, t).0, w.asked, "{}: {set:?}", r.target);
        assert_eq!(set.verdict, w.asked);
    }
    // The size is the smallest: no smaller set of flips (from the engine's outcomes,
    // decided by the public scoring) reaches the asked verdict; and none at all up to 3
    // when none was found.
    let mut m = Matrix::new(&alone).unwrap();
    let eval = m.evaluate(s);
    let outcomes: Vec<Option<bool>> = eval
        .columns
        .iter()
        .map(|c| c.outcome[t].counted())
        .collect();
    let scoring = Scoring::new(&page.device_policy, &RuleWeight::of_rules(&page.rules));
    let flippable: Vec<usize> = (0..outcomes.len())
        .filter(|&i| outcomes[i].is_some())
        .collect();
    let reaches = |flips: &[usize]| {
        let mut o = outcomes.clone();
        for &i in flips {
            o[i] = o[i].map(|b| !b);
        }
        device_verdict(&scoring, &scoring.tally_of(&o), None).verdict == w.asked
    };
    let smaller = w.changes_needed.map_or(3, |k| k.saturating_sub(1));
    let mut subsets: Vec<Vec<usize>> = vec![vec![]];
    for _ in 0..smaller {
        let mut next = Vec::new();
        for sub in &subsets {
            for &i in &flippable {
                if sub.last().is_none_or(|&l| l < i) {
                    let mut n = sub.clone();
                    n.push(i);
                    next.push(n);
                }
            }
        }
        for sub in &next {
            if eval.devices[t].verdict != w.asked {
                assert!(
                    !reaches(sub),
                    "{}: a smaller set {sub:?} reaches {}",
                    r.target,
                    w.asked
                );
            }
        }
        subsets = next;
    }
    // Each threshold value gives the verdict it claims.
    for m in &w.thresholds {
        let mut p = alone.clone();
        // The value as reported (at most nine places), as a user would set it; a page
        // could hold it (partial at most full).
        let value = m.value;
        assert_eq!(value, (value * 1e9).round() / 1e9, "{m:?}");
        match m.threshold {
            "fullThreshold" => p.device_policy.full_threshold = value,
            _ => p.device_policy.partial_threshold = value,
        }
        assert!(p.device_policy.partial_threshold <= p.device_policy.full_threshold);
        assert_eq!(engine(&p, s, t).0, m.verdict, "{m:?}");
    }
    // Each recommendation edit, made on the page, gives the recommendation it claims.
    for m in &r.recommendation_moves {
        let mut p = page.clone();
        match (m.edit, &m.rule) {
            ("without rule", Some(rule)) => {
                let i = p.rules.iter().position(|x| &x.id == rule).unwrap();
                p.rules.remove(i);
                p.assertions.clear();
            }
            ("required" | "optional", Some(rule)) => {
                let i = p.rules.iter().position(|x| &x.id == rule).unwrap();
                p.rules[i].required = m.edit == "required";
            }
            (field, None) => {
                let value = m.value.unwrap();
                match field {
                    "fullThreshold" => p.device_policy.full_threshold = value,
                    _ => p.device_policy.partial_threshold = value,
                }
            }
            other => panic!("unknown edit {other:?}"),
        }
        let (_, recommended) = engine(&p, s, t);
        let id = recommended.map(|i| p.target.row_id(&p.target.rows[i]));
        assert_eq!(id, m.recommended, "{m:?}");
        assert_ne!(id, r.recommended, "{m:?} changes nothing");
    }
}

#[test]
fn every_claim_on_every_sample_pair_holds_by_the_engine() {
    let (_dir, app) = app();
    let mut sets = 0;
    let mut moves = 0;
    for id in PAGES {
        let (page, _) = app.page(id).unwrap();
        for s in &page.source.rows {
            let key = page.source.row_key(s);
            for t in &page.target.rows {
                let target = page.target.row_id(t);
                for asked in VERDICTS {
                    let r = app.why_not(id, &key, &target, asked).unwrap();
                    check(&page, &r);
                    sets += r.why.sets.len();
                    moves += r.recommendation_moves.len();
                }
            }
        }
    }
    // The sample pages hold findings of every kind (not a vacuous pass).
    assert!(sets > 100, "{sets}");
    assert!(moves > 10, "{moves}");
}

#[test]
fn the_command_prints_the_sets_thresholds_and_recommendation_edits() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let (code, out, err) = common::rb(
        &db,
        &[
            "explain",
            "llm-chat-clients",
            "--select",
            "t3-chat",
            "--target",
            "o3",
            "--why-not",
            "full",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "o3 for t3.chat: ◐ 1 (partial), score 0.80; asked: 2\n  \
         the smallest changes: 1 rule outcome (1 way):\n    \
         price-budget (weight 2) fail → pass  ⇒ 2 · score 10/10 = 1.00 ≥ full 1\n  \
         thresholds (this target):\n    \
         fullThreshold ≤ 0.8 (score 8/10) ⇒ 2\n    \
         partialThreshold ≥ 0.800000001 (score 8/10) ⇒ 0\n  \
         the selection's recommendation (gpt-4.1): no single rule edit or threshold changes it\n"
    );
    let (code, out, err) = common::rb(
        &db,
        &[
            "explain",
            "loan-eligibility",
            "--select",
            "app-003",
            "--target",
            "uk-personal",
            "--why-not",
            "0",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["asked"], 0);
    assert!(
        v["recommendationMoves"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["edit"] == "without rule")
    );
    // A verdict that is not one is a usage error.
    let (code, _, err) = common::rb(
        &db,
        &[
            "explain",
            "llm-chat-clients",
            "--select",
            "t3-chat",
            "--target",
            "o3",
            "--why-not",
            "3",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("0, 1 or 2"), "{err}");
}

#[test]
fn threshold_flips_count_what_the_engine_moves() {
    use rulebench_core::model::PolicyField;
    use rulebench_core::whatif::threshold_flips;
    let (_dir, app) = app();
    let mut nonzero = 0;
    for id in PAGES {
        let (page, _) = app.page(id).unwrap();
        let mut m = Matrix::new(&page).unwrap();
        for s in 0..page.source.rows.len() {
            let eval = m.evaluate(s);
            let asked: Vec<(PolicyField, f64)> = [0.0, 0.35, 0.4, 0.45, 0.6, 0.95, 1.0]
                .iter()
                .flat_map(|&v| {
                    [
                        (PolicyField::FullThreshold, v),
                        (PolicyField::PartialThreshold, v),
                    ]
                })
                .collect();
            let counts = threshold_flips(&page, &eval, &asked);
            for (&(field, value), &count) in asked.iter().zip(&counts) {
                let mut p = page.clone();
                match field {
                    PolicyField::FullThreshold => p.device_policy.full_threshold = value,
                    _ => p.device_policy.partial_threshold = value,
                }
                let moved = Matrix::new(&p).unwrap().evaluate(s);
                let engine = (0..eval.devices.len())
                    .filter(|&t| moved.devices[t].verdict != eval.devices[t].verdict)
                    .count();
                assert_eq!(count, engine, "{id} source {s}: {field:?} = {value}");
                nonzero += usize::from(count > 0);
            }
        }
    }
    assert!(nonzero > 20, "{nonzero}");
}

/// A threshold move is decided exactly (0.3 of 0.4 is 0.75, not 0.7500000000000001) and
/// is one the page could hold (partial at most full).
#[test]
fn threshold_moves_are_exact_and_keep_partial_at_most_full() {
    let v = serde_json::json!({
        "format": "rulebench.page/v1", "id": "exact", "name": "Exact",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s1"}]},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": "t1", "a": true, "b": true, "c": false}]},
        "rules": [
            {"id": "a", "name": "A", "weight": 0.1, "logic": {"var": "target.a"}},
            {"id": "b", "name": "B", "weight": 0.2, "logic": {"var": "target.b"}},
            {"id": "c", "name": "C", "weight": 0.1, "logic": {"var": "target.c"}}
        ],
        "devicePolicy": {"requiredMode": "ANY_REQUIRED_FAIL_IS_0", "fullThreshold": 1, "partialThreshold": 0.8}
    });
    let (page, _) = rulebench_core::read::page_all(&v.to_string());
    let page = page.unwrap();
    let mut m = Matrix::new(&page).unwrap();
    let eval = m.evaluate(0);
    assert_eq!(eval.devices[0].verdict, Verdict::None);
    let w = rulebench_core::whatif::why_not(&page, &eval, 0, Verdict::Partial);
    let moves: Vec<(&str, &str, f64, Verdict)> = w
        .thresholds
        .iter()
        .map(|t| (t.threshold, t.comparison, t.value, t.verdict))
        .collect();
    // fullThreshold ≤ 0.75 would put full below partial 0.8: not a move.
    assert_eq!(moves, [("partialThreshold", "<=", 0.75, Verdict::Partial)]);
}

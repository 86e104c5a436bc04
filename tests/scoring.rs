//! Exact scores: weights written as decimals are summed exactly, so that a score equal
//! to a threshold in exact arithmetic meets it (and one just below does not).

use proptest::prelude::*;
use rulebench_core::model::{DevicePolicy, RequiredMode};
use rulebench_core::verdict::{self, Reason, RuleWeight, Scoring};

/// Splits `units` into `parts` positive-or-zero pieces.
fn split(units: u64, cuts: &[u64]) -> Vec<u64> {
    let mut points: Vec<u64> = cuts.iter().map(|c| c % (units + 1)).collect();
    points.push(0);
    points.push(units);
    points.sort_unstable();
    points.windows(2).map(|w| w[1] - w[0]).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Passing weights that sum to exactly `a` hundredths of all the weights (each
    /// written with up to three decimals) meet `partialThreshold a/100`, and miss
    /// `(a+1)/100`.
    #[test]
    fn a_score_equal_to_the_threshold_meets_it(
        a in 1u64..100,
        m in 1u64..200,
        places in 0u32..=3,
        pass_cuts in prop::collection::vec(any::<u64>(), 0..4),
        fail_cuts in prop::collection::vec(any::<u64>(), 0..4),
    ) {
        let passed_units = a * m;
        let failed_units = (100 - a) * m;
        let scale = 10f64.powi(places as i32);
        let weight = |u: u64| (u as f64) / scale;
        let mut rules = Vec::new();
        let mut passed = Vec::new();
        for u in split(passed_units, &pass_cuts) {
            rules.push(RuleWeight { required: false, weight: weight(u) });
            passed.push(true);
        }
        for u in split(failed_units, &fail_cuts) {
            rules.push(RuleWeight { required: false, weight: weight(u) });
            passed.push(false);
        }
        let policy = |partial: f64| DevicePolicy {
            required_mode: RequiredMode::AnyRequiredFailIs0,
            full_threshold: 1.0,
            partial_threshold: partial,
        };
        let at = policy(a as f64 / 100.0);
        let scoring = Scoring::new(&at, &rules);
        prop_assert!(scoring.exact().is_some());
        let tally = scoring.tally(&passed);
        let v = verdict::device_verdict(&scoring, &tally, None);
        prop_assert_eq!((v.verdict, v.reason), (verdict::PARTIAL, Reason::Partial));
        // The score is the nearest number to the exact quotient.
        prop_assert_eq!(v.score, a as f64 / 100.0);
        let above = policy((a + 1) as f64 / 100.0);
        let scoring = Scoring::new(&above, &rules);
        let v = verdict::device_verdict(&scoring, &scoring.tally(&passed), None);
        prop_assert_eq!((v.verdict, v.reason), (verdict::NONE, Reason::LowScore));
    }
}

/// The case: 0.2, 0.6 and 0.7 with only the 0.6 rule passing, end to end
/// through a page (the engine's matrix and its explanation).
#[test]
fn the_page_with_weights_two_six_and_seven_tenths_scores_forty_percent() {
    let page: rulebench_core::model::Page = serde_json::from_value(serde_json::json!({
        "format": "rulebench.page/v1", "id": "p", "name": "P",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": "t"}]},
        "rules": [
            {"id": "a", "name": "A", "weight": 0.2, "logic": false},
            {"id": "b", "name": "B", "weight": 0.6, "logic": true},
            {"id": "c", "name": "C", "weight": 0.7, "logic": false}
        ],
        "devicePolicy": {"requiredMode": "ANY_REQUIRED_FAIL_IS_0", "fullThreshold": 1, "partialThreshold": 0.4}
    }))
    .unwrap();
    let mut matrix = rulebench_core::matrix::Matrix::new(&page).unwrap();
    let eval = matrix.evaluate(0);
    let d = eval.devices[0];
    assert_eq!(
        (d.verdict, d.score, d.reason),
        (verdict::PARTIAL, 0.4, Reason::Partial)
    );
    let why = rulebench_core::explain::target_why(&page, &eval, 0);
    assert!(
        why.text.contains("= 0.6 / 1.5 optional weight"),
        "{}",
        why.text
    );
    assert_eq!((why.passed_weight, why.total_weight), (0.6, 1.5));
}

/// A page whose weights or thresholds are too long to count exactly is warned about,
/// where the long number stands; a page of short decimals is not.
#[test]
fn check_warns_where_scores_cannot_be_exact() {
    let page = |weight: f64, partial: f64| -> rulebench_core::model::Page {
        serde_json::from_value(serde_json::json!({
            "format": "rulebench.page/v1", "id": "p", "name": "P",
            "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
            "target": {"name": "T", "key": ["id"], "rows": [{"id": "t", "n": 1}]},
            "rules": [
                {"id": "a", "name": "A", "weight": 0.5, "logic": {">": [{"var": "target.n"}, 0]}},
                {"id": "b", "name": "B", "weight": weight, "logic": {">": [{"var": "target.n"}, 1]}}
            ],
            "devicePolicy": {"fullThreshold": 1, "partialThreshold": partial}
        }))
        .unwrap()
    };
    let inexact = |p: &rulebench_core::model::Page| -> Vec<String> {
        rulebench_core::check::page(p)
            .into_iter()
            .filter(|d| d.code.as_str() == "inexact-scores")
            .map(|d| d.pointer)
            .collect()
    };
    assert!(inexact(&page(0.25, 0.4)).is_empty());
    assert_eq!(inexact(&page(1.0 / 3.0, 0.4)), ["/rules/1/weight"]);
    assert_eq!(
        inexact(&page(0.25, 0.1234567891)),
        ["/devicePolicy/partialThreshold"]
    );
}

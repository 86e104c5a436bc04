//! The grouped path: sources that read the same values share one evaluation (the
//! matrix's memo), and each source's own overrides are applied after. Checked against
//! the per-source path (a fresh matrix for every selection, nothing shared) on random
//! pages with repeated sources, overrides, and edits between evaluations.

use proptest::prelude::*;
use serde_json::{Value, json};

use rulebench::app::synth::{self, Spread};
use rulebench_core::matrix::{Matrix, SelectionEval};
use rulebench_core::model::{Condition, Override, Page, RequiredMode, Side};

/// The same evaluation, field by field (columns by their outcomes).
fn assert_same(label: &str, grouped: &SelectionEval, alone: &SelectionEval) {
    let outcomes = |e: &SelectionEval| -> Vec<Vec<_>> {
        e.columns.iter().map(|c| c.outcome.clone()).collect()
    };
    assert_eq!(outcomes(grouped), outcomes(alone), "{label}: columns");
    assert_eq!(grouped.devices, alone.devices, "{label}: target verdicts");
    assert_eq!(
        grouped.overrides, alone.overrides,
        "{label}: overrides and notes"
    );
    assert_eq!(
        grouped.selection_verdict, alone.selection_verdict,
        "{label}: selection verdict"
    );
    assert_eq!(
        grouped.recommended, alone.recommended,
        "{label}: recommendation"
    );
}

/// A synthetic page whose sources repeat: every source after the first `distinct` is a
/// copy (under its own id) of an earlier one, so sources group.
fn page(seed: u64, sources: usize, distinct: usize, overrides: usize) -> Page {
    page_of(40, seed, sources, distinct, overrides)
}

/// [`page`] with `targets` targets.
fn page_of(targets: usize, seed: u64, sources: usize, distinct: usize, overrides: usize) -> Page {
    let mut page = synth::page(targets, 12, sources.max(distinct), Spread::Realistic, seed);
    synth::repeat_sources(&mut page, distinct);
    let (ns, nt) = (page.source.rows.len(), page.target.rows.len());
    for k in 0..overrides {
        let s = &page.source.rows[(k * 5 + seed as usize) % ns];
        let t = &page.target.rows[(k * 11 + seed as usize) % nt];
        page.overrides.push(Override {
            source_key: Some(page.source.row_key(s)),
            target_key: Some(page.target.row_key(t)),
            source_key_hash: None,
            target_key_hash: None,
            value: k % 2 == 0,
            note: (k % 3 == 0).then(|| format!("note {k}")),
        });
    }
    page
}

/// Every selection of `page` through one matrix (grouped) and through a fresh matrix
/// each (alone).
fn check_all(label: &str, page: &Page, grouped: &mut Matrix) {
    for s in 0..page.source.rows.len() {
        let alone = Matrix::new(page).expect("compiles").evaluate(s);
        let label = format!("{label}, source {s}");
        // Verdicts alone, before or after the full evaluation: the memo's two tiers
        // are filled in either order.
        let verdicts_first = s % 2 == 0;
        let early = verdicts_first.then(|| grouped.evaluate_verdicts(s));
        let e = grouped.evaluate(s);
        assert_same(&label, &e, &alone);
        assert_decided(&label, page, &e);
        assert_tallied(&label, page, &alone);
        assert_eq!(
            alone.verdict_counts,
            SelectionEval::count_verdicts(&alone.devices),
            "{label}: verdict counts"
        );
        let v = early.unwrap_or_else(|| grouped.evaluate_verdicts(s));
        assert_verdicts(&label, &v, &alone);
    }
}

/// What [`Matrix::evaluate_verdicts`] gives equals the full evaluation's: the
/// selection's verdict, recommendation, verdict counts and columns.
fn assert_verdicts(label: &str, v: &SelectionEval, full: &SelectionEval) {
    assert_eq!(v.verdict_counts, full.verdict_counts, "{label}: counts");
    assert_eq!(
        v.selection_verdict, full.selection_verdict,
        "{label}: verdict"
    );
    assert_eq!(v.recommended, full.recommended, "{label}: recommendation");
    let outcomes = |e: &SelectionEval| -> Vec<Vec<_>> {
        e.columns.iter().map(|c| c.outcome.clone()).collect()
    };
    assert_eq!(outcomes(v), outcomes(full), "{label}: columns");
}

/// Each target's verdict (those without an override) as a running tally of its rules'
/// outcomes gives it, in rule order: what the matrix makes from weighted bit counts.
/// The weights are quarters, so the scoring is exact and the two sums agree to the bit.
fn assert_tallied(label: &str, page: &Page, e: &SelectionEval) {
    use rulebench_core::verdict::{self, RuleWeight, Scoring, Tally};
    let scoring = Scoring::new(&page.device_policy, &RuleWeight::of_rules(&page.rules));
    assert!(
        scoring.exact().is_some(),
        "{label}: quarter weights score exactly"
    );
    for t in 0..e.devices.len() {
        if e.overrides.get(t).is_some() {
            continue;
        }
        let mut tally = Tally::default();
        for (&w, column) in scoring.rules.iter().zip(&e.columns) {
            tally.add(&scoring.policy, w, column.outcome[t].counted());
        }
        let want = verdict::device_verdict(&scoring, &tally, None);
        let got = e.devices[t];
        assert_eq!(
            (got.verdict, got.score.to_bits(), got.reason),
            (want.verdict, want.score.to_bits(), want.reason),
            "{label}, target {t}: verdict from the rules' outcomes"
        );
    }
}

/// The selection's verdict and recommendation decided from its targets' verdicts as
/// the policy says, from scratch (the matrix mends them for a selection's overrides).
fn assert_decided(label: &str, page: &Page, e: &SelectionEval) {
    use rulebench_core::verdict::{self, Candidate};
    let verdicts: Vec<_> = e.devices.iter().map(|d| d.verdict).collect();
    let selection = verdict::selection_verdict(&page.selection_policy, &verdicts);
    assert_eq!(e.selection_verdict, selection, "{label}: selection verdict");
    assert!(
        page.target.priority.is_none(),
        "synthetic pages have no priority"
    );
    let ids: Vec<String> = page
        .target
        .rows
        .iter()
        .map(|r| page.target.row_id(r))
        .collect();
    let candidates: Vec<Candidate> = e
        .devices
        .iter()
        .zip(&ids)
        .map(|(d, id)| Candidate {
            id,
            verdict: d.verdict,
            score: d.score,
            priority: 0.0,
        })
        .collect();
    let recommended = verdict::recommend(selection, &candidates);
    assert_eq!(
        e.recommended.map(|t| ids[t].as_str()),
        recommended,
        "{label}: recommendation"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn grouped_evaluations_equal_per_source_ones(
        seed in 0u64..10_000,
        sources in 2usize..24,
        distinct in 1usize..6,
        overrides in 0usize..12,
        edit in 0usize..12,
        weight in 1u32..9,
        weights in 0usize..3,
        mode in 0usize..3,
        applies in proptest::collection::vec(0usize..12, 0..4),
        // Within a word of 64 targets, a word exactly, just past one, and over two.
        targets in proptest::sample::select(vec![40usize, 64, 65, 130]),
    ) {
        let mut page = page_of(targets, seed, sources, distinct, overrides);
        // Weights all alike (few tallies, decided once each) or in kinds; some rules
        // apply only to some targets; each required mode.
        for (i, rule) in page.rules.iter_mut().enumerate() {
            rule.weight = match weights {
                0 => 1.0,
                1 => 1.0 + (i % 3) as f64,
                _ => [0.25, 1.5, 0.75, 2.0][i % 4],
            };
        }
        for &r in &applies {
            page.rules[r].applies_when =
                Some(Condition::logic(json!({"var": "target.supportsVision"})));
        }
        page.device_policy.required_mode =
            <RequiredMode as strum::VariantArray>::VARIANTS[mode];
        let mut m = Matrix::new(&page).expect("compiles");
        check_all("as built", &page, &mut m);
        // Twice: the second pass is served by the memo.
        check_all("again", &page, &mut m);

        // A weight changes: the memo must not serve the old verdicts.
        let r = edit % page.rules.len();
        page.rules[r].weight = f64::from(weight) / 4.0;
        m.set_rule_weight(r, page.rules[r].required, page.rules[r].weight);
        check_all("after a weight edit", &page, &mut m);

        // A rule's logic changes.
        page.rules[r].logic = json!({"!": page.rules[r].logic.clone()});
        m.replace_rule(r, &page.rules[r]).expect("compiles");
        check_all("after a rule edit", &page, &mut m);

        // A source row's read field changes (its group with it).
        let s = edit % page.source.rows.len();
        let before = page.source.rows[s].get("minContext").cloned().unwrap_or(Value::Null);
        page.source.rows[s].insert("minContext".into(), json!(before.as_i64().unwrap_or(0) + 1));
        let row = page.source.rows[s].clone();
        m.replace_row(Side::Source, s, &page.source, &row, &["minContext".to_owned()]);
        check_all("after a source edit", &page, &mut m);

        // A target row changes.
        let t = edit % page.target.rows.len();
        page.target.rows[t].insert("supportsVision".into(), json!(edit % 2 == 0));
        let row = page.target.rows[t].clone();
        m.replace_row(Side::Target, t, &page.target, &row, &["supportsVision".to_owned()]);
        check_all("after a target edit", &page, &mut m);

        // The policy changes.
        page.device_policy.full_threshold = 0.5;
        page.device_policy.partial_threshold = 0.25;
        m.set_policies(&page.device_policy, &page.selection_policy);
        check_all("after a policy edit", &page, &mut m);

        // An override is put on a source that shares its group with others.
        let (s, t) = (page.source.rows.len() - 1, edit % page.target.rows.len());
        page.overrides.push(Override {
            source_key: Some(page.source.row_key(&page.source.rows[s])),
            target_key: Some(page.target.row_key(&page.target.rows[t])),
            source_key_hash: None,
            target_key_hash: None,
            value: true,
            note: Some("late".into()),
        });
        m.put_override(s, t, Some((true, Some("late".into()))));
        check_all("after an override", &page, &mut m);
    }
}

/// Every target's verdict is what a running tally of its rules' outcomes gives, on pages
/// across the words of 64 targets the counts are kept in: with one weight (each distinct
/// tally a key, decided once, when the tallies are few) and with three (each target's
/// tally decided), in every required mode, with and without rules (one of them required)
/// that apply only to some targets.
#[test]
fn verdicts_across_words_of_targets_are_each_targets_tally() {
    let cases = [63, 64, 65, 130, 300]
        .into_iter()
        .flat_map(|t| [(t, 0.0), (t, 1.0)])
        .flat_map(|(t, w)| [(t, w, false), (t, w, true)]);
    for (targets, weights, applies) in cases {
        for mode in <RequiredMode as strum::VariantArray>::VARIANTS {
            let mut page = page_of(targets, 3, 6, 3, 4);
            for (i, rule) in page.rules.iter_mut().enumerate() {
                rule.weight = 1.0 + weights * (i % 3) as f64;
            }
            for r in [2, 10].into_iter().filter(|_| applies) {
                page.rules[r].applies_when =
                    Some(Condition::logic(json!({"var": "target.supportsVision"})));
            }
            {
                page.device_policy.required_mode = *mode;
                let mut m = Matrix::new(&page).expect("compiles");
                check_all(
                    &format!("{targets} targets, weights {weights}, n/a {applies}, {mode:?}"),
                    &page,
                    &mut m,
                );
            }
        }
    }
}

/// Sources that read the same values are evaluated once: a page of 200 sources that
/// are copies of three computes three evaluations, and a source with an override still
/// shares its group's.
#[test]
fn repeated_sources_are_evaluated_once_per_group() {
    let page = page(7, 200, 3, 4);
    let mut m = Matrix::new(&page).expect("compiles");
    for s in 0..200 {
        m.evaluate(s);
    }
    assert!(
        (1..=3).contains(&m.evaluations_computed()),
        "{} evaluations for 3 groups",
        m.evaluations_computed()
    );
    check_all("grouped", &page, &mut m);
    // An edit empties the memo: the groups are computed again, once each.
    m.invalidate();
    let before = m.evaluations_computed();
    for s in 0..200 {
        m.evaluate(s);
    }
    assert!((1..=3).contains(&(m.evaluations_computed() - before)));
}

/// A target whose id is edited is ranked by its new id: the recommendation breaks ties
/// by id, as a fresh matrix of the edited page does.
#[test]
fn an_edited_target_id_breaks_ties_by_the_new_id() {
    let mut page: Page = serde_json::from_value(json!({
        "format": "rulebench.page/v1", "id": "ties", "name": "Ties",
        "source": {"name": "S", "key": ["id"], "rows": [{"id": "s"}]},
        "target": {"name": "T", "key": ["id"], "rows": [{"id": "a", "x": 1}, {"id": "b", "x": 1}]},
        "rules": [{"id": "r", "name": "R", "logic": {"==": [{"var": "target.x"}, 1]}}]
    }))
    .unwrap();
    let mut m = Matrix::new(&page).unwrap();
    assert_eq!(m.evaluate(0).recommended, Some(0), "a before b");
    page.target.rows[0].insert("id".into(), json!("z"));
    let row = page.target.rows[0].clone();
    m.replace_row(Side::Target, 0, &page.target, &row, &["id".to_owned()]);
    let fresh = Matrix::new(&page).unwrap().evaluate(0);
    assert_eq!(fresh.recommended, Some(1), "b before z");
    assert_eq!(m.evaluate(0).recommended, fresh.recommended);
}

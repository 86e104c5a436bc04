//! Counterfactuals (`rulebench explain … --why-not V`): what would move a target to
//! another verdict, and what would change a selection's recommendation.
//!
//! - **Rule outcomes.** The smallest sets of rule outcomes whose change moves the target
//!   to the asked verdict, found by trying every set of 1, then 2, then 3 changes (a
//!   pass that fails, a failure that passes; a rule that does not apply to the pair
//!   stays so — making it apply is an edit of its `appliesWhen`). Each set is decided by the page's own scoring (exact units, the
//!   thresholds, the required mode) and checked again from scratch.
//! - **Thresholds.** The value of `fullThreshold` and of `partialThreshold` past which
//!   this target's verdict changes: its score, as a fraction of weights.
//! - **The recommendation.** Which single rule edit (the rule left out, made required
//!   or optional) or threshold value (the nearest on each side of the current one)
//!   changes the selection's recommended target — decided on the matrix's columns, so
//!   no rule is evaluated again.

use serde::Serialize;

use crate::expect::RuleExpect;

use crate::matrix::{Matrix, SelectionEval};
use crate::model::{DevicePolicy, Page, PolicyField, RequiredMode};
use crate::verdict::{DeviceVerdict, Reason, RuleWeight, Scoring, Tally, Verdict, device_verdict};

/// The most rule outcomes a set changes.
pub const MAX_CHANGES: usize = 3;
/// The most sets listed (the others are counted).
pub const MAX_SETS: usize = 12;
/// The most sets tried before the search stops (a page of many rules).
const BUDGET: usize = 4_000_000;
/// The most threshold values tried on each side of the current one.
const MAX_STEPS: usize = 256;

/// One rule outcome changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// The rule's index in the page, and its id.
    pub index: usize,
    pub rule: String,
    /// The rule's weight and whether it is required.
    pub weight: f64,
    pub required: bool,
    /// `pass`, `fail` or `n/a`.
    pub from: &'static str,
    pub to: &'static str,
    #[serde(skip)]
    pub to_outcome: Option<bool>,
}

/// A set of changes and what the target gets with them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FlipSet {
    pub changes: Vec<Change>,
    pub verdict: Verdict,
    pub score: f64,
    pub reason: Reason,
    /// `score 6/6 = 1.00 ≥ full 1`, or why the required mode decides.
    pub arithmetic: String,
}

/// A threshold value past which the target's verdict changes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThresholdMove {
    /// `fullThreshold` or `partialThreshold`.
    pub threshold: &'static str,
    /// `<=` (the threshold at most `value`) or `>=` (at least `value`).
    pub comparison: &'static str,
    pub value: f64,
    /// The value as a fraction of weights (`4/6`).
    pub exact: String,
    pub verdict: Verdict,
}

/// What would move one target to the asked verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WhyNot {
    pub asked: Verdict,
    pub verdict: Verdict,
    pub score: f64,
    pub reason: Reason,
    /// The pair's override: rule outcomes move the target only once it is removed (the
    /// sets below are for the pair without it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overridden: Option<bool>,
    /// With an override: the verdict the rules alone give.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub without_override: Option<Verdict>,
    /// The size of the smallest sets (none found within [`MAX_CHANGES`]: `null`).
    pub changes_needed: Option<usize>,
    /// The smallest sets, the first [`MAX_SETS`].
    pub sets: Vec<FlipSet>,
    /// Sets of that size not listed.
    pub more_sets: usize,
    /// Whether the search stopped at its budget before trying every set of its size.
    pub incomplete: bool,
    /// The threshold values past which this target's verdict changes.
    pub thresholds: Vec<ThresholdMove>,
}

/// A tally's passed weight, total weight and count of failed required rules (how a
/// change moves them, or where they are).
type Sums = (f64, f64, i64);

/// One rule outcome's change: the rule, the outcome it changes to, its effect.
type Move = (usize, Option<bool>, Sums);

fn scored_tally(scoring: &Scoring, outcomes: &[Option<bool>]) -> Tally {
    scoring.tally_of(outcomes)
}

/// `6/6`: passed over total weight, in the page's words.
fn fraction(scoring: &Scoring, tally: &Tally) -> String {
    format!(
        "{}/{}",
        scoring.weight_text(tally.passed_weight),
        scoring.weight_text(tally.total_weight)
    )
}

fn arithmetic(scoring: &Scoring, tally: &Tally, d: &DeviceVerdict) -> String {
    let p = &scoring.policy;
    let score = if tally.total_weight > 0.0 {
        format!("score {} = {:.2}", fraction(scoring, tally), d.score)
    } else {
        "score 1 (no weight to score)".to_owned()
    };
    let against = if scoring.meets_full(tally) {
        format!("≥ full {}", p.full_threshold)
    } else if scoring.meets_partial(tally) {
        format!(
            "< full {}, ≥ partial {}",
            p.full_threshold, p.partial_threshold
        )
    } else {
        format!("< partial {}", p.partial_threshold)
    };
    match (tally.required_failed, p.required_mode) {
        (true, RequiredMode::AnyRequiredFailIs0) => "a required rule fails: 0".to_owned(),
        (true, RequiredMode::AnyRequiredFailCapsAtPartial) => {
            format!("a required rule fails: at most partial · {score} {against}")
        }
        _ => format!("{score} {against}"),
    }
}

/// The outcome a rule's could change to: the other of pass and fail. A rule that does
/// not apply to the pair stays so (making it apply is an edit of its `appliesWhen`).
fn alternative(now: Option<bool>) -> Option<Option<bool>> {
    now.map(|b| Some(!b))
}

/// What would move target `target` of `eval` (an evaluation of `page`) to `asked`.
pub fn why_not(page: &Page, eval: &SelectionEval, target: usize, asked: Verdict) -> WhyNot {
    let weights = RuleWeight::of_rules(&page.rules);
    let scoring = Scoring::new(&page.device_policy, &weights);
    let outcomes: Vec<Option<bool>> = eval
        .columns
        .iter()
        .map(|c| c.outcome[target].counted())
        .collect();
    let now = eval.devices[target];
    let overridden = eval.overrides.value(target);
    let alone = device_verdict(&scoring, &scored_tally(&scoring, &outcomes), None);
    // Each possible change as its effect on the tally (exact units add exactly).
    let policy = &scoring.policy;
    let effect = |i: usize, o: Option<bool>| -> (f64, f64, i64) {
        let w = scoring.rules[i];
        let scored = Tally::scores(policy, w);
        let weight = if scored { w.weight } else { 0.0 };
        (
            if o == Some(true) { weight } else { 0.0 },
            if o.is_some() { weight } else { 0.0 },
            i64::from(w.required && o == Some(false)),
        )
    };
    let mut base = (0.0, 0.0, 0i64);
    for (i, &o) in outcomes.iter().enumerate() {
        let (p, t, r) = effect(i, o);
        base = (base.0 + p, base.1 + t, base.2 + r);
    }
    let mut moves: Vec<Move> = Vec::new();
    for (i, &o) in outcomes.iter().enumerate() {
        if let Some(alt) = alternative(o) {
            let (p0, t0, r0) = effect(i, o);
            let (p1, t1, r1) = effect(i, alt);
            moves.push((i, alt, (p1 - p0, t1 - t0, r1 - r0)));
        }
    }
    let verdict_of = |(p, t, r): (f64, f64, i64)| {
        device_verdict(
            &scoring,
            &Tally {
                passed_weight: p,
                total_weight: t,
                required_failed: r > 0,
            },
            None,
        )
        .verdict
    };
    let mut found: Vec<Vec<usize>> = Vec::new();
    let mut more = 0;
    let mut tried = 0usize;
    let mut incomplete = false;
    let mut needed = None;
    if alone.verdict == asked {
        // The rules alone give it (only an override, if any, stands between).
        needed = Some(0);
    } else {
        for k in 1..=MAX_CHANGES.min(outcomes.len()) {
            let mut chosen = Vec::with_capacity(k);
            search(&moves, k, 0, base, &mut chosen, &mut |set, sums| {
                tried += 1;
                if verdict_of(sums) == asked {
                    if found.len() < MAX_SETS {
                        found.push(set.to_vec());
                    } else {
                        more += 1;
                    }
                }
                tried < BUDGET
            });
            if tried >= BUDGET {
                incomplete = true;
            }
            if !found.is_empty() || incomplete {
                needed = (!found.is_empty()).then_some(k);
                break;
            }
        }
    }
    // Every set is checked again from scratch: its outcomes, tallied anew.
    let sets = found
        .into_iter()
        .map(|set| {
            let mut changed = outcomes.clone();
            let changes = set
                .iter()
                .map(|&m| {
                    let (i, to, _) = moves[m];
                    changed[i] = to;
                    Change {
                        index: i,
                        rule: page.rules[i].id.clone(),
                        weight: page.rules[i].weight,
                        required: page.rules[i].required,
                        from: RuleExpect::of(outcomes[i]).word(),
                        to: RuleExpect::of(to).word(),
                        to_outcome: to,
                    }
                })
                .collect();
            let tally = scored_tally(&scoring, &changed);
            let d = device_verdict(&scoring, &tally, None);
            debug_assert_eq!(d.verdict, asked, "a set found by sums holds from scratch");
            FlipSet {
                changes,
                verdict: d.verdict,
                score: d.score,
                reason: d.reason,
                arithmetic: arithmetic(&scoring, &tally, &d),
            }
        })
        .filter(|s| s.verdict == asked)
        .collect();
    WhyNot {
        asked,
        verdict: now.verdict,
        score: now.score,
        reason: now.reason,
        overridden,
        without_override: overridden.map(|_| alone.verdict),
        changes_needed: needed,
        sets,
        more_sets: more,
        incomplete,
        thresholds: threshold_moves(page, &weights, &outcomes, alone.verdict),
    }
}

/// Tries every set of `k` moves on distinct rules from `from` on; `visit` is told each
/// set's tally sums and says whether to go on.
fn search(
    moves: &[Move],
    k: usize,
    from: usize,
    sums: Sums,
    chosen: &mut Vec<usize>,
    visit: &mut dyn FnMut(&[usize], Sums) -> bool,
) -> bool {
    if chosen.len() == k {
        return visit(chosen, sums);
    }
    for m in from..moves.len() {
        let (rule, _, (p, t, r)) = moves[m];
        if chosen.last().is_some_and(|&c| moves[c].0 == rule) {
            continue;
        }
        chosen.push(m);
        let go_on = search(
            moves,
            k,
            m + 1,
            (sums.0 + p, sums.1 + t, sums.2 + r),
            chosen,
            visit,
        );
        chosen.pop();
        if !go_on {
            return false;
        }
    }
    true
}

/// The smallest threshold above `x` (for "the threshold above this score").
fn just_above(x: f64) -> f64 {
    if x >= 0.0 {
        f64::from_bits(x.to_bits() + 1)
    } else {
        x
    }
}

/// The thresholds on each side of a tally's score a user can set: the largest value of
/// at most nine decimal places the score meets, and the next one above (which it does
/// not). Exact in the scoring's units; in double precision (a page whose weights are
/// not decimals of nine places) the score itself and the next double.
fn bounds(scoring: &Scoring, tally: &Tally) -> (f64, f64) {
    const PLACES: f64 = 1e9;
    if scoring.exact().is_none() || tally.total_weight <= 0.0 {
        let score = tally.score();
        return (score, just_above(score));
    }
    let (p, q) = (tally.passed_weight as u128, tally.total_weight as u128);
    let n = p * PLACES as u128 / q;
    (n as f64 / PLACES, (n + 1) as f64 / PLACES)
}

/// Whether a device policy keeps `partialThreshold ≤ fullThreshold` (what validation
/// asks of a page).
fn valid(policy: &DevicePolicy) -> bool {
    policy.partial_threshold <= policy.full_threshold
        && (0.0..=1.0).contains(&policy.full_threshold)
        && (0.0..=1.0).contains(&policy.partial_threshold)
}

fn with_threshold(policy: &DevicePolicy, field: PolicyField, value: f64) -> DevicePolicy {
    let mut p = policy.clone();
    match field {
        PolicyField::FullThreshold => p.full_threshold = value,
        _ => p.partial_threshold = value,
    }
    p
}

fn field_name(field: PolicyField) -> &'static str {
    match field {
        PolicyField::FullThreshold => "fullThreshold",
        _ => "partialThreshold",
    }
}

/// The value of each threshold past which a target with these outcomes gets another
/// verdict (without an override): its score, at most or just above.
fn threshold_moves(
    page: &Page,
    weights: &[RuleWeight],
    outcomes: &[Option<bool>],
    now: Verdict,
) -> Vec<ThresholdMove> {
    let policy = &page.device_policy;
    let scoring = Scoring::new(policy, weights);
    let tally = scoring.tally_of(outcomes);
    let exact = fraction(&scoring, &tally);
    let (at_most, above) = bounds(&scoring, &tally);
    let mut out = Vec::new();
    for field in [PolicyField::FullThreshold, PolicyField::PartialThreshold] {
        for (comparison, value) in [("<=", at_most), (">=", above)] {
            let p = with_threshold(policy, field, value);
            // A move the page could not hold (partial above full) is not one.
            if !valid(&p) {
                continue;
            }
            let s = Scoring::new(&p, weights);
            let v = device_verdict(&s, &s.tally_of(outcomes), None).verdict;
            if v != now {
                out.push(ThresholdMove {
                    threshold: field_name(field),
                    comparison,
                    value,
                    exact: exact.clone(),
                    verdict: v,
                });
            }
        }
    }
    out
}

/// One edit and the recommendation it gives.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecommendationMove {
    /// `without rule`, `required`, `optional`, `fullThreshold`, `partialThreshold`.
    pub edit: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// For a threshold: `<=` or `>=` and the value (at most nine decimal places).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// The recommended target's index and id with the edit (none: no recommendation).
    #[serde(skip)]
    pub recommended_index: Option<usize>,
    pub recommended: Option<String>,
    pub selection_verdict: Verdict,
}

/// Which single rule edit or threshold value changes the recommendation of
/// `selection`. The matrix is left as it was.
pub fn recommendation_moves(
    page: &Page,
    matrix: &mut Matrix,
    selection: usize,
) -> Vec<RecommendationMove> {
    let columns = matrix.columns(selection);
    let base = matrix.verdicts(selection, columns.clone());
    let mut out = Vec::new();
    for (i, rule) in page.rules.iter().enumerate() {
        for (edit, required, weight) in [
            ("without rule", false, 0.0),
            (
                if rule.required {
                    "optional"
                } else {
                    "required"
                },
                !rule.required,
                rule.weight,
            ),
        ] {
            matrix.set_rule_weight(i, required, weight);
            let e = matrix.verdicts(selection, columns.clone());
            if e.recommended != base.recommended {
                out.push(RecommendationMove {
                    edit,
                    rule: Some(rule.id.clone()),
                    comparison: None,
                    value: None,
                    recommended_index: e.recommended,
                    recommended: None,
                    selection_verdict: e.selection_verdict,
                });
            }
        }
        matrix.set_rule_weight(i, rule.required, rule.weight);
    }
    // The thresholds: the target scores are where verdicts change; the nearest value on
    // each side of the current threshold that changes the recommendation.
    // The thresholds a user can set on each side of every target's score (exact).
    let policy = page.device_policy.clone();
    let scoring = Scoring::new(&policy, &RuleWeight::of_rules(&page.rules));
    let mut at_most: Vec<f64> = Vec::new();
    let mut above_all: Vec<f64> = Vec::new();
    for t in 0..base.devices.len() {
        let outcomes: Vec<Option<bool>> = base
            .columns
            .iter()
            .map(|c| c.outcome[t].counted())
            .collect();
        let (lo, hi) = bounds(&scoring, &scoring.tally_of(&outcomes));
        at_most.push(lo);
        above_all.push(hi);
    }
    for v in [&mut at_most, &mut above_all] {
        v.sort_by(f64::total_cmp);
        v.dedup();
    }
    for field in [PolicyField::FullThreshold, PolicyField::PartialThreshold] {
        let current = match field {
            PolicyField::FullThreshold => policy.full_threshold,
            _ => policy.partial_threshold,
        };
        let below = at_most
            .iter()
            .rev()
            .filter(|&&s| s < current)
            .map(|&s| ("<=", s));
        let above = above_all
            .iter()
            .filter(|&&s| s > current)
            .map(|&s| (">=", s));
        for side in [
            below.take(MAX_STEPS).collect::<Vec<_>>(),
            above.take(MAX_STEPS).collect(),
        ] {
            for (comparison, value) in side {
                let moved = with_threshold(&policy, field, value);
                if !valid(&moved) {
                    break;
                }
                let shown = value;
                matrix.set_policies(&moved, &page.selection_policy);
                let e = matrix.verdicts(selection, columns.clone());
                if e.recommended != base.recommended {
                    out.push(RecommendationMove {
                        edit: field_name(field),
                        rule: None,
                        comparison: Some(comparison),
                        value: Some(shown),
                        recommended_index: e.recommended,
                        recommended: None,
                        selection_verdict: e.selection_verdict,
                    });
                    break;
                }
            }
        }
    }
    matrix.set_policies(&policy, &page.selection_policy);
    for m in &mut out {
        m.recommended = m.recommended_index.map(|t| matrix.target_ids()[t].clone());
    }
    out
}

/// A target's counterfactuals with their names: what would move it to the asked
/// verdict, and what would change its selection's recommendation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WhyNotReport {
    pub page_id: String,
    pub revision: i64,
    pub selection_key: String,
    pub selection_label: String,
    pub target: String,
    pub target_label: String,
    #[serde(flatten)]
    pub why: WhyNot,
    /// The selection's recommended target now.
    pub recommended: Option<String>,
    /// The single edits that change it.
    pub recommendation_moves: Vec<RecommendationMove>,
}

/// How many targets of `eval` (an evaluation of `page`) change verdict when a
/// threshold takes another value, for each `(threshold, value)` asked (overridden
/// targets never do). The targets are tallied once, column by column; a value that
/// changes the scoring's units (more decimal places) tallies them again.
pub fn threshold_flips(
    page: &Page,
    eval: &SelectionEval,
    asked: &[(PolicyField, f64)],
) -> Vec<usize> {
    let weights = RuleWeight::of_rules(&page.rules);
    let targets = eval.devices.len();
    // Column by column and branch-free (they vectorize), each rule's weight in the
    // scoring's units where it is scored: the sums of `Tally::add`, in its order (adding
    // 0 changes no sum).
    let tallies = |scoring: &Scoring| {
        use crate::matrix::{NOT_APPLICABLE, PASS};
        let mut passed = vec![0.0f64; targets];
        let mut total = vec![0.0f64; targets];
        let mut required_failed = vec![false; targets];
        for (&w, c) in scoring.rules.iter().zip(&eval.columns) {
            let weight = if Tally::scores(&scoring.policy, w) {
                w.weight
            } else {
                0.0
            };
            for ((p, o), t) in passed.iter_mut().zip(&c.outcome).zip(total.iter_mut()) {
                *p += weight * f64::from(u8::from(*o == PASS));
                *t += weight * f64::from(u8::from(*o != NOT_APPLICABLE));
            }
            if w.required {
                for (f, o) in required_failed.iter_mut().zip(&c.outcome) {
                    *f |= *o != PASS && *o != NOT_APPLICABLE;
                }
            }
        }
        (0..targets)
            .map(|t| Tally {
                passed_weight: passed[t],
                total_weight: total[t],
                required_failed: required_failed[t],
            })
            .collect::<Vec<_>>()
    };
    // Tallied once per distinct units of the scorings asked.
    let mut by_units: Vec<(Option<crate::verdict::Exact>, Vec<Tally>)> = Vec::new();
    asked
        .iter()
        .map(|&(field, value)| {
            let s = Scoring::new(&with_threshold(&page.device_policy, field, value), &weights);
            let at = match by_units.iter().position(|(u, _)| *u == s.exact()) {
                Some(i) => i,
                None => {
                    by_units.push((s.exact(), tallies(&s)));
                    by_units.len() - 1
                }
            };
            let these = &by_units[at].1;
            (0..targets)
                .filter(|&t| {
                    eval.overrides.get(t).is_none()
                        && device_verdict(&s, &these[t], None).verdict != eval.devices[t].verdict
                })
                .count()
        })
        .collect()
}

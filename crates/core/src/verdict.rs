//! Verdicts: one per target (device policy), one per selection (selection policy),
//! and the recommended target.

use serde::Serialize;

use super::model::{AggregateMode, DevicePolicy, ElseMode, RequiredMode, SelectionPolicy};

/// How compatible a target is with a selection (or a selection with its targets):
/// 0 incompatible, 1 partial, 2 fully compatible; ordered, and written as its number.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde_repr::Serialize_repr,
    serde_repr::Deserialize_repr,
    strum::VariantArray,
)]
#[repr(u8)]
pub enum Verdict {
    /// Incompatible (0).
    #[default]
    None = 0,
    /// Partially compatible (1).
    Partial = 1,
    /// Fully compatible (2).
    Full = 2,
}

impl Verdict {
    /// Its number: 0, 1 or 2 (the result JSON, the cache, SQL).
    pub fn number(self) -> u8 {
        self as u8
    }

    /// The verdict of a number, when it is one.
    pub fn from_number(n: u64) -> Option<Verdict> {
        match n {
            0 => Some(Verdict::None),
            1 => Some(Verdict::Partial),
            2 => Some(Verdict::Full),
            _ => None,
        }
    }
}

impl std::fmt::Display for Verdict {
    /// The number, as tables and the result JSON show it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.number())
    }
}

impl From<Verdict> for u8 {
    fn from(v: Verdict) -> Self {
        v.number()
    }
}

impl From<Verdict> for u64 {
    fn from(v: Verdict) -> Self {
        u64::from(v.number())
    }
}

impl From<Verdict> for i64 {
    fn from(v: Verdict) -> Self {
        i64::from(v.number())
    }
}

impl From<Verdict> for serde_json::Value {
    fn from(v: Verdict) -> Self {
        serde_json::Value::from(v.number())
    }
}

pub const NONE: Verdict = Verdict::None;
pub const PARTIAL: Verdict = Verdict::Partial;
pub const FULL: Verdict = Verdict::Full;

/// Why a target got its verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// An override decided it.
    Override,
    /// A required rule failed.
    RequiredFail,
    /// The score reached the full threshold.
    Full,
    /// The score reached the partial threshold only.
    Partial,
    /// The score is below the partial threshold.
    LowScore,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Override => "override",
            Reason::RequiredFail => "required-fail",
            Reason::Full => "full",
            Reason::Partial => "partial",
            Reason::LowScore => "low-score",
        }
    }

    /// The reason named by [`Reason::as_str`].
    pub fn parse(text: &str) -> Option<Reason> {
        [
            Reason::Override,
            Reason::RequiredFail,
            Reason::Full,
            Reason::Partial,
            Reason::LowScore,
        ]
        .into_iter()
        .find(|r| r.as_str() == text)
    }
}

/// What the device policy needs to know of one rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RuleWeight {
    pub required: bool,
    pub weight: f64,
}

impl RuleWeight {
    /// What the device policy needs of each of a page's rules, in rule order.
    pub fn of_rules(rules: &[super::model::Rule]) -> Vec<RuleWeight> {
        rules
            .iter()
            .map(|r| RuleWeight {
                required: r.required,
                weight: r.weight,
            })
            .collect()
    }
}

/// A target's verdict with its score and reason.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeviceVerdict {
    pub verdict: Verdict,
    pub score: f64,
    pub reason: Reason,
}

/// What the device policy reads of a target's rule outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tally {
    /// Weight of the scored rules that pass (in the [`Scoring`]'s units).
    pub passed_weight: f64,
    /// Weight of the scored rules that apply (optional ones; all under
    /// `IGNORE_REQUIRED`), in the same units.
    pub total_weight: f64,
    /// Some required rule failed.
    pub required_failed: bool,
}

impl Tally {
    /// Whether a rule's weight counts in the score under a policy.
    pub fn scores(policy: &DevicePolicy, rule: RuleWeight) -> bool {
        match policy.required_mode {
            RequiredMode::IgnoreRequired => true,
            RequiredMode::AnyRequiredFailIs0 | RequiredMode::AnyRequiredFailCapsAtPartial => {
                !rule.required
            }
        }
    }

    /// Counts one rule's outcome: `Some(passed)`, or `None` where the rule does not
    /// apply (left out of both weights, never a required failure). `rule.weight` is in
    /// the [`Scoring`]'s units.
    pub fn add(&mut self, policy: &DevicePolicy, rule: RuleWeight, outcome: Option<bool>) {
        let Some(passed) = outcome else {
            return;
        };
        if rule.required && !passed {
            self.required_failed = true;
        }
        if Self::scores(policy, rule) {
            self.total_weight += rule.weight;
            if passed {
                self.passed_weight += rule.weight;
            }
        }
    }

    /// Passed weight / total weight of the scored rules that apply; 1.0 when there is
    /// none. In exact units, the nearest number to the exact quotient.
    #[inline]
    pub fn score(&self) -> f64 {
        if self.total_weight > 0.0 {
            self.passed_weight / self.total_weight
        } else {
            1.0
        }
    }
}

/// The most decimal places a weight or a threshold may have for scores to be exact.
pub const EXACT_PLACES: u32 = 9;

/// Sums below this are exact in a double, and so is the quotient's rounding.
pub const EXACT_BOUND: f64 = 9_007_199_254_740_992.0; // 2^53

/// How a page's scores are summed and held against its thresholds. When every scored
/// weight and both thresholds are decimals of at most [`EXACT_PLACES`] places (every
/// page people write) and the sums stay below 2^53 units, weights are summed as whole
/// units of their decimals and a score meets a threshold by exact integer comparison
/// (`passed × 10^t ≥ total × threshold units`): optional weights 0.2, 0.6 and 0.7 with
/// only the 0.6 rule passing score exactly 40% and meet `partialThreshold 0.4`. Other
/// pages are summed and compared in double precision, and `check` says so. The SQL of
/// `rulebench sql` computes the same.
#[derive(Debug, Clone, PartialEq)]
pub struct Scoring {
    pub policy: DevicePolicy,
    /// Per rule, the weight as it is summed: whole units of `10^-places` when exact, the
    /// weight itself otherwise.
    pub rules: Vec<RuleWeight>,
    exact: Option<Exact>,
}

/// The units of an exact [`Scoring`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Exact {
    /// Weights are counted in units of `10^-places`.
    pub places: u32,
    /// `10^t`, `t` being the thresholds' decimal places.
    pub scale: f64,
    /// `fullThreshold × 10^t`.
    pub full: f64,
    /// `partialThreshold × 10^t`.
    pub partial: f64,
}

/// A number's shortest decimal as (digits, places): 0.25 is (25, 2). `None` when it is
/// not finite, negative, or longer than a `u64`.
fn decimal(x: f64) -> Option<(u64, u32)> {
    if !x.is_finite() || x < 0.0 {
        return None;
    }
    // `Display` of a float is its shortest round-trip decimal, never in exponent form.
    let text = x.to_string();
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let digits = format!("{int}{frac}").parse::<u64>().ok()?;
    Some((digits, u32::try_from(frac.len()).ok()?))
}

/// How many decimal places a weight or threshold is written with (its shortest
/// decimal); `None` when it is not a finite number from 0 up.
pub fn decimal_places(x: f64) -> Option<u32> {
    decimal(x).map(|(_, places)| places)
}

impl Scoring {
    /// The scoring of a page's rules (required flag and weight, in rule order) under
    /// its device policy.
    pub fn new(policy: &DevicePolicy, rules: &[RuleWeight]) -> Scoring {
        let exact = Self::exact_units(policy, rules);
        let rules = match &exact {
            Some((_, units)) => rules
                .iter()
                .zip(units)
                .map(|(r, &u)| RuleWeight {
                    required: r.required,
                    weight: u,
                })
                .collect(),
            None => rules.to_vec(),
        };
        Scoring {
            policy: policy.clone(),
            rules,
            exact: exact.map(|(e, _)| e),
        }
    }

    fn exact_units(policy: &DevicePolicy, rules: &[RuleWeight]) -> Option<(Exact, Vec<f64>)> {
        let (places, units, total) = Self::weight_units(policy, rules)?;
        let (full, full_places) = decimal(policy.full_threshold)?;
        let (partial, partial_places) = decimal(policy.partial_threshold)?;
        let t = full_places.max(partial_places);
        if t > EXACT_PLACES {
            return None;
        }
        let scale = 10f64.powi(t as i32);
        let full = full as f64 * 10f64.powi((t - full_places) as i32);
        let partial = partial as f64 * 10f64.powi((t - partial_places) as i32);
        // Both sides of `passed × scale ≥ total × threshold` stay exact.
        if total * scale.max(full).max(partial) >= EXACT_BOUND {
            return None;
        }
        Some((
            Exact {
                places,
                scale,
                full,
                partial,
            },
            units,
        ))
    }

    /// The weights' side of exact scoring, whatever the thresholds: the places of the
    /// scored weights, every rule's weight in units of `10^-places`, and the scored
    /// rules' total units; `None` when the weights sum in double precision. (A query
    /// whose thresholds are bound at run time decides the rest there.)
    pub fn weight_units(
        policy: &DevicePolicy,
        rules: &[RuleWeight],
    ) -> Option<(u32, Vec<f64>, f64)> {
        let scored: Vec<(u64, u32)> = rules
            .iter()
            .filter(|r| Tally::scores(policy, **r))
            .map(|r| decimal(r.weight))
            .collect::<Option<_>>()?;
        let places = scored.iter().map(|&(_, p)| p).max().unwrap_or(0);
        if places > EXACT_PLACES {
            return None;
        }
        let units = |w: f64| -> Option<f64> {
            let (digits, p) = decimal(w)?;
            let u = if p > places {
                // A weight with more places than the scored ones (a required rule's)
                // is not summed; rounding it keeps a unit count.
                (w * 10f64.powi(places as i32)).round()
            } else {
                digits.checked_mul(10u64.pow(places - p))? as f64
            };
            (u < EXACT_BOUND).then_some(u)
        };
        let units: Vec<f64> = rules
            .iter()
            .map(|r| units(r.weight))
            .collect::<Option<_>>()?;
        let total: f64 = rules
            .iter()
            .zip(&units)
            .filter(|(r, _)| Tally::scores(policy, **r))
            .map(|(_, u)| u)
            .sum();
        Some((places, units, total))
    }

    /// The units when the scores are exact; `None` when they are summed and compared in
    /// double precision.
    pub fn exact(&self) -> Option<Exact> {
        self.exact
    }

    /// Tallies a target's outcomes, `outcomes[i]` being rule `i`'s (`None`: it does not
    /// apply).
    pub fn tally_of(&self, outcomes: &[Option<bool>]) -> Tally {
        let mut t = Tally::default();
        for (&rule, &o) in self.rules.iter().zip(outcomes) {
            t.add(&self.policy, rule, o);
        }
        t
    }

    /// Tallies a target's outcomes where every rule applies.
    pub fn tally(&self, passed: &[bool]) -> Tally {
        let outcomes: Vec<Option<bool>> = passed.iter().map(|&p| Some(p)).collect();
        self.tally_of(&outcomes)
    }

    /// Whether a tally's score reaches the full threshold.
    #[inline]
    pub fn meets_full(&self, tally: &Tally) -> bool {
        let units = self.exact.map_or(0.0, |e| e.full);
        self.meets(tally, units, self.policy.full_threshold)
    }

    /// Whether a tally's score reaches the partial threshold.
    #[inline]
    pub fn meets_partial(&self, tally: &Tally) -> bool {
        let units = self.exact.map_or(0.0, |e| e.partial);
        self.meets(tally, units, self.policy.partial_threshold)
    }

    /// Exact: `passed × 10^t ≥ total × threshold units` (0 ≥ 0 when nothing is
    /// scored, as a score of 1 meets any threshold); else the score against it.
    #[inline]
    fn meets(&self, tally: &Tally, units: f64, threshold: f64) -> bool {
        match &self.exact {
            Some(e) => tally.passed_weight * e.scale >= tally.total_weight * units,
            None => tally.score() >= threshold,
        }
    }

    /// A summed weight in the page's own terms (units back to weights).
    pub fn weight_of(&self, summed: f64) -> f64 {
        match self.exact {
            Some(e) => summed / 10f64.powi(e.places as i32),
            None => summed,
        }
    }

    /// A summed weight as a person reads it (units back to the page's decimals).
    pub fn weight_text(&self, summed: f64) -> String {
        match self.exact {
            Some(e) if e.places > 0 => {
                let digits = format!("{:0>width$}", summed as u64, width = e.places as usize + 1);
                let (int, frac) = digits.split_at(digits.len() - e.places as usize);
                let frac = frac.trim_end_matches('0');
                if frac.is_empty() {
                    int.to_owned()
                } else {
                    format!("{int}.{frac}")
                }
            }
            _ => summed.to_string(),
        }
    }
}

/// A target's verdict under a page's scoring from its tallied rule outcomes and the
/// pair's override, if any.
#[inline]
pub fn device_verdict(scoring: &Scoring, tally: &Tally, overridden: Option<bool>) -> DeviceVerdict {
    let policy = &scoring.policy;
    let score = tally.score();
    let by_score = || {
        if scoring.meets_full(tally) {
            (FULL, Reason::Full)
        } else if scoring.meets_partial(tally) {
            (PARTIAL, Reason::Partial)
        } else {
            (NONE, Reason::LowScore)
        }
    };
    let (verdict, reason) = match (overridden, tally.required_failed) {
        // An override decides before any rule: true forces 2, false forces 0.
        (Some(true), _) => (FULL, Reason::Override),
        (Some(false), _) => (NONE, Reason::Override),
        // Every required rule passes: the weighted score against the thresholds
        // decides.
        (None, false) => by_score(),
        // A required rule failed: what that does is the mode's (every mode says).
        (None, true) => match policy.required_mode {
            // The target is incompatible.
            RequiredMode::AnyRequiredFailIs0 => (NONE, Reason::RequiredFail),
            // Extension: capped at partial; a low score still gives 0, and the reason
            // names the required failure.
            RequiredMode::AnyRequiredFailCapsAtPartial => match by_score() {
                (NONE, reason) => (NONE, reason),
                _ => (PARTIAL, Reason::RequiredFail),
            },
            // Extension: required rules are weighted in like the others.
            RequiredMode::IgnoreRequired => by_score(),
        },
    };
    DeviceVerdict {
        verdict,
        score,
        reason,
    }
}

/// The selection policy's aggregate: one verdict for the selection from its targets'.
pub fn selection_verdict(policy: &SelectionPolicy, verdicts: &[Verdict]) -> Verdict {
    let mut counts = [0usize; 3];
    for v in verdicts {
        counts[usize::from(v.number())] += 1;
    }
    selection_verdict_of(policy, counts)
}

/// [`selection_verdict`] from how many targets are at each verdict (by its number):
/// the aggregate reads no more than that.
pub fn selection_verdict_of(policy: &SelectionPolicy, counts: [usize; 3]) -> Verdict {
    let any = |v: Verdict| counts[usize::from(v.number())] > 0;
    let full = match policy.aggregate.mode {
        AggregateMode::AnyDeviceFullIsCompatible => any(FULL),
        AggregateMode::AllDevicesFullIsCompatible => any(FULL) && !any(PARTIAL) && !any(NONE),
    };
    let partial = match policy.aggregate.else_mode {
        ElseMode::AnyDevicePartialIsPartial => any(PARTIAL) || any(FULL),
        ElseMode::None => false,
    };
    match (full, partial) {
        (true, _) => FULL,
        (false, true) => PARTIAL,
        (false, false) => NONE,
    }
}

/// One candidate for the recommendation.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    pub id: &'a str,
    pub verdict: Verdict,
    pub score: f64,
    pub priority: f64,
}

/// `HIGHEST_VERDICT_THEN_SCORE`: highest verdict, then highest score, then highest
/// priority (extension; 0 when a page declares none), then the smallest id — a
/// total order. No recommendation when the selection verdict is 0.
pub fn recommend<'a>(selection: Verdict, candidates: &[Candidate<'a>]) -> Option<&'a str> {
    recommend_at(selection, candidates).map(|i| candidates[i].id)
}

/// [`recommend`], as the index of the recommended candidate.
pub fn recommend_at(selection: Verdict, candidates: &[Candidate<'_>]) -> Option<usize> {
    if selection == NONE {
        return None;
    }
    best_at(candidates)
}

/// The candidate a recommendation would name, whatever the selection's verdict: the
/// first in [`rank`] order among those above 0.
pub fn best_at(candidates: &[Candidate<'_>]) -> Option<usize> {
    candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| c.verdict > NONE)
        .min_by(|(_, a), (_, b)| rank(a, b))
        .map(|(i, _)| i)
}

/// The recommendation's order: `Less` when `a` comes before `b` (higher verdict, then
/// higher score, then higher priority, then the smaller id).
pub fn rank(a: &Candidate<'_>, b: &Candidate<'_>) -> std::cmp::Ordering {
    b.verdict
        .cmp(&a.verdict)
        .then(b.score.total_cmp(&a.score))
        .then(b.priority.total_cmp(&a.priority))
        .then(a.id.cmp(b.id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_ordered_and_written_as_their_number() {
        use strum::VariantArray;
        assert_eq!(Verdict::VARIANTS, [NONE, PARTIAL, FULL]);
        assert!(NONE < PARTIAL && PARTIAL < FULL);
        for v in Verdict::VARIANTS {
            let text = serde_json::to_string(v).unwrap();
            assert_eq!(text, v.number().to_string());
            assert_eq!(serde_json::from_str::<Verdict>(&text).unwrap(), *v);
            assert_eq!(Verdict::from_number(u64::from(v.number())), Some(*v));
        }
        assert_eq!(Verdict::from_number(3), None);
        assert!(serde_json::from_str::<Verdict>("3").is_err());
    }

    fn w(required: bool, weight: f64) -> RuleWeight {
        RuleWeight { required, weight }
    }

    fn tally(p: &DevicePolicy, rules: &[RuleWeight], passed: &[bool]) -> (Scoring, Tally) {
        let s = Scoring::new(p, rules);
        let t = s.tally(passed);
        (s, t)
    }

    fn verdict_of(p: &DevicePolicy, rules: &[RuleWeight], passed: &[bool]) -> DeviceVerdict {
        let (s, t) = tally(p, rules, passed);
        device_verdict(&s, &t, None)
    }

    #[test]
    fn no_optional_rules_scores_one() {
        let p = DevicePolicy::default();
        assert_eq!(tally(&p, &[w(true, 1.0)], &[true]).1.score(), 1.0);
        assert_eq!(tally(&p, &[], &[]).1.score(), 1.0);
    }

    /// Optional weights 0.2, 0.6 and 0.7 with only the 0.6 rule passing: exactly 40%,
    /// which meets `partialThreshold 0.4` (in doubles 0.6 / 1.5 summed in rule order is
    /// 0.39999999999999997, a low score).
    #[test]
    fn a_score_of_exactly_the_threshold_meets_it() {
        let p = DevicePolicy {
            full_threshold: 1.0,
            partial_threshold: 0.4,
            ..DevicePolicy::default()
        };
        let rules = [w(false, 0.2), w(false, 0.6), w(false, 0.7)];
        let v = verdict_of(&p, &rules, &[false, true, false]);
        assert_eq!(
            (v.verdict, v.reason, v.score),
            (PARTIAL, Reason::Partial, 0.4)
        );
        let s = Scoring::new(&p, &rules);
        assert_eq!(s.exact().map(|e| e.places), Some(1));
        let t = s.tally(&[false, true, false]);
        assert_eq!(
            (
                s.weight_text(t.passed_weight),
                s.weight_text(t.total_weight)
            ),
            ("0.6".to_owned(), "1.5".to_owned())
        );
    }

    #[test]
    fn long_decimals_fall_back_to_doubles() {
        let p = DevicePolicy::default();
        let s = Scoring::new(&p, &[w(false, 1.0 / 3.0), w(false, 1.0)]);
        assert_eq!(s.exact(), None);
        let t = s.tally(&[true, true]);
        assert_eq!(t.score(), 1.0);
        assert_eq!(device_verdict(&s, &t, None).verdict, FULL);
        // A threshold of more than nine places, too.
        let p = DevicePolicy {
            partial_threshold: 0.1234567891,
            ..DevicePolicy::default()
        };
        assert_eq!(Scoring::new(&p, &[w(false, 1.0)]).exact(), None);
        // Required rules' weights are not summed: they do not make scores inexact.
        let p = DevicePolicy::default();
        let s = Scoring::new(&p, &[w(true, 1.0 / 3.0), w(false, 0.5)]);
        assert_eq!(s.exact().map(|e| e.places), Some(1));
        assert_eq!(s.weight_text(s.tally(&[true, true]).total_weight), "0.5");
    }

    #[test]
    fn caps_at_partial_mode() {
        let p = DevicePolicy {
            required_mode: RequiredMode::AnyRequiredFailCapsAtPartial,
            ..DevicePolicy::default()
        };
        let rules = [w(true, 1.0), w(false, 1.0)];
        let v = verdict_of(&p, &rules, &[false, true]);
        assert_eq!((v.verdict, v.reason), (PARTIAL, Reason::RequiredFail));
        let v = verdict_of(&p, &rules, &[false, false]);
        assert_eq!((v.verdict, v.reason), (NONE, Reason::LowScore));
    }

    #[test]
    fn ignore_required_weights_required_rules_in() {
        let p = DevicePolicy {
            required_mode: RequiredMode::IgnoreRequired,
            ..DevicePolicy::default()
        };
        let rules = [w(true, 1.0), w(false, 1.0)];
        let v = verdict_of(&p, &rules, &[false, true]);
        assert_eq!((v.verdict, v.score), (PARTIAL, 0.5));
    }

    #[test]
    fn all_devices_full_mode() {
        let mut p = SelectionPolicy::default();
        p.aggregate.mode = AggregateMode::AllDevicesFullIsCompatible;
        assert_eq!(selection_verdict(&p, &[FULL, FULL]), FULL);
        assert_eq!(selection_verdict(&p, &[FULL, NONE]), PARTIAL);
        p.aggregate.else_mode = ElseMode::None;
        assert_eq!(selection_verdict(&p, &[FULL, NONE]), NONE);
        assert_eq!(selection_verdict(&p, &[]), NONE);
    }

    #[test]
    fn recommendation_order_is_total() {
        let c = |id, verdict, score, priority| Candidate {
            id,
            verdict,
            score,
            priority,
        };
        let cands = [
            c("b", FULL, 1.0, 0.0),
            c("a", FULL, 1.0, 0.0),
            c("z", FULL, 1.0, 5.0),
            c("y", PARTIAL, 1.0, 9.0),
        ];
        assert_eq!(recommend(FULL, &cands), Some("z"));
        assert_eq!(recommend(FULL, &cands[..2]), Some("a"));
        assert_eq!(recommend(NONE, &cands), None);
    }
}

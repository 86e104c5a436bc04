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
    /// Weight of the scored rules that pass.
    pub passed_weight: f64,
    /// Weight of all scored rules (optional ones; all under `IGNORE_REQUIRED`).
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

    /// Counts one rule's outcome.
    pub fn add(&mut self, policy: &DevicePolicy, rule: RuleWeight, passed: bool) {
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

    /// Tallies a target's outcomes, `passed[i]` being rule `i`'s.
    pub fn of(policy: &DevicePolicy, rules: &[RuleWeight], passed: &[bool]) -> Tally {
        let mut t = Tally::default();
        for (&rule, &p) in rules.iter().zip(passed) {
            t.add(policy, rule, p);
        }
        t
    }

    /// Passed weight / total weight of the scored rules; 1.0 when there is none.
    pub fn score(&self) -> f64 {
        if self.total_weight > 0.0 {
            self.passed_weight / self.total_weight
        } else {
            1.0
        }
    }
}

/// The device policy: one target's verdict from its tallied rule outcomes and the
/// pair's override, if any.
pub fn device_verdict(
    policy: &DevicePolicy,
    tally: &Tally,
    overridden: Option<bool>,
) -> DeviceVerdict {
    let score = tally.score();
    let by_score = |s: f64| {
        if s >= policy.full_threshold {
            (FULL, Reason::Full)
        } else if s >= policy.partial_threshold {
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
        (None, false) => by_score(score),
        // A required rule failed: what that does is the mode's (every mode says).
        (None, true) => match policy.required_mode {
            // The target is incompatible.
            RequiredMode::AnyRequiredFailIs0 => (NONE, Reason::RequiredFail),
            // Extension: capped at partial; a low score still gives 0, and the reason
            // names the required failure.
            RequiredMode::AnyRequiredFailCapsAtPartial => match by_score(score) {
                (NONE, reason) => (NONE, reason),
                _ => (PARTIAL, Reason::RequiredFail),
            },
            // Extension: required rules are weighted in like the others.
            RequiredMode::IgnoreRequired => by_score(score),
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
    let any = |v: Verdict| verdicts.contains(&v);
    let full = match policy.aggregate.mode {
        AggregateMode::AnyDeviceFullIsCompatible => any(FULL),
        AggregateMode::AllDevicesFullIsCompatible => {
            !verdicts.is_empty() && verdicts.iter().all(|&v| v == FULL)
        }
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
    if selection == NONE {
        return None;
    }
    candidates
        .iter()
        .filter(|c| c.verdict > NONE)
        .min_by(|a, b| {
            b.verdict
                .cmp(&a.verdict)
                .then(b.score.total_cmp(&a.score))
                .then(b.priority.total_cmp(&a.priority))
                .then(a.id.cmp(b.id))
        })
        .map(|c| c.id)
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

    #[test]
    fn no_optional_rules_scores_one() {
        let p = DevicePolicy::default();
        assert_eq!(Tally::of(&p, &[w(true, 1.0)], &[true]).score(), 1.0);
        assert_eq!(Tally::of(&p, &[], &[]).score(), 1.0);
    }

    #[test]
    fn caps_at_partial_mode() {
        let p = DevicePolicy {
            required_mode: RequiredMode::AnyRequiredFailCapsAtPartial,
            ..DevicePolicy::default()
        };
        let rules = [w(true, 1.0), w(false, 1.0)];
        let v = device_verdict(&p, &Tally::of(&p, &rules, &[false, true]), None);
        assert_eq!((v.verdict, v.reason), (PARTIAL, Reason::RequiredFail));
        let v = device_verdict(&p, &Tally::of(&p, &rules, &[false, false]), None);
        assert_eq!((v.verdict, v.reason), (NONE, Reason::LowScore));
    }

    #[test]
    fn ignore_required_weights_required_rules_in() {
        let p = DevicePolicy {
            required_mode: RequiredMode::IgnoreRequired,
            ..DevicePolicy::default()
        };
        let rules = [w(true, 1.0), w(false, 1.0)];
        let v = device_verdict(&p, &Tally::of(&p, &rules, &[false, true]), None);
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

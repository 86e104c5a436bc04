//! A rule's outcome for one pair: pass, fail, error or n/a, one byte in a column.

use datalogic_rs::DataValue;
use datalogic_rs::bumpalo::Bump;

use crate::engine::{self, CompiledRule};

/// A rule's outcome for one target: one byte in a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, strum::VariantArray)]
#[repr(u8)]
pub enum Outcome {
    /// The rule's logic is falsy for the pair.
    #[default]
    Fail = 0,
    /// The rule's logic is truthy for the pair.
    Pass = 1,
    /// The engine raised an error (the rule fails).
    Error = 2,
    /// The rule's `appliesWhen` is falsy for the pair: it does not apply (left out of
    /// the score, never a required failure).
    NotApplicable = 3,
}

impl Outcome {
    /// Its word: `pass`, `fail`, `error`, `n/a`.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Error => "error",
            Outcome::NotApplicable => "n/a",
        }
    }

    /// Whether it counts as a failure (`counted() == Some(false)`: fail or error),
    /// read off one bit so that loops over columns stay branch-free.
    pub const fn fails(self) -> bool {
        // Fail (0) and Error (2) are the outcomes whose low bit is clear.
        const _: () = assert!(
            FAIL as u8 & 1 == 0
                && ERROR as u8 & 1 == 0
                && PASS as u8 & 1 == 1
                && NOT_APPLICABLE as u8 & 1 == 1
        );
        self as u8 & 1 == 0
    }

    /// As the policy counts it: `Some(passed)`, `None` where the rule does not apply.
    pub fn counted(self) -> Option<bool> {
        match self {
            Outcome::Pass => Some(true),
            Outcome::Fail | Outcome::Error => Some(false),
            Outcome::NotApplicable => None,
        }
    }

    /// The outcome of one pair under a compiled rule: its condition first (falsy: n/a),
    /// then its logic; an engine error in either is [`Outcome::Error`].
    pub fn of_pair<'a>(
        rule: &'a CompiledRule,
        source: DataValue<'a>,
        target: DataValue<'a>,
        arena: &'a Bump,
    ) -> Outcome {
        if let Some(applies) = &rule.applies {
            match engine::eval_pair(applies, source, target, arena) {
                Ok(v) if engine::truthy(v) => {}
                Ok(_) => return NOT_APPLICABLE,
                Err(_) => return ERROR,
            }
        }
        match engine::eval_pair(&rule.logic, source, target, arena) {
            Ok(v) if engine::truthy(v) => PASS,
            Ok(_) => FAIL,
            Err(_) => ERROR,
        }
    }
}

pub const FAIL: Outcome = Outcome::Fail;
pub const PASS: Outcome = Outcome::Pass;
/// The engine raised an error (the rule fails).
pub const ERROR: Outcome = Outcome::Error;
/// The rule does not apply to the pair.
pub const NOT_APPLICABLE: Outcome = Outcome::NotApplicable;

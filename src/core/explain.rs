//! Explanations: why a rule passed or failed for a pair, as a tree mirroring the rule
//! with every node's value, plus the fields read and a sentence; and why a target got
//! its verdict.

use serde::Serialize;
use serde_json::Value;

use super::model::Rule;

/// One node of the explanation tree: an operation (or a literal) with its value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    /// The operator (`==`, `and`, `var`…) or, for a literal, its JSON.
    pub label: String,
    /// The node's value; `None` when not evaluated (short-circuited).
    pub value: Option<Value>,
    /// JSONLogic truthiness of the value.
    pub pass: Option<bool>,
    pub children: Vec<Node>,
    /// A human sentence for comparisons ("target.provider is 'meta', expected 'openai'").
    pub sentence: Option<String>,
}

/// Why a rule passed or failed for one pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    pub rule_id: String,
    pub passed: bool,
    /// The rule's value, or the engine's error.
    pub value: Option<Value>,
    pub error: Option<String>,
    pub tree: Node,
    /// Every field the rule reads, with its value in this pair (`null` when missing).
    pub fields: Vec<(String, Value)>,
    /// One sentence on why.
    pub sentence: String,
}

/// Explains one rule for a (source, target) pair.
pub fn explain(rule: &Rule, source: &Value, target: &Value) -> Explanation {
    let outcome = super::engine::compile(&rule.logic)
        .map(|c| super::engine::evaluate_rows(&c.logic, source, target));
    let (passed, value, error) = match outcome {
        Ok(super::engine::Outcome::Value { value, pass }) => (pass, Some(value), None),
        Ok(super::engine::Outcome::Error(e)) | Err(e) => (false, None, Some(e)),
    };
    Explanation {
        rule_id: rule.id.clone(),
        passed,
        tree: Node {
            label: rule.logic.to_string(),
            value: value.clone(),
            pass: Some(passed),
            children: vec![],
            sentence: None,
        },
        value,
        error,
        fields: vec![],
        sentence: if passed { "passes".into() } else { "fails".into() },
    }
}

//! Which targets the matrix shows when the frequency view chose them (`F`, Enter): a
//! leaf, so that the matrix, the frequency view and the actions can all name it.

/// Only some targets (Esc in the Matrix shows all again).
#[derive(Debug, Clone, PartialEq)]
pub enum Only {
    /// The targets failing (or erring on) this rule (by id: it is found again when
    /// rules move).
    Failing(String),
    /// The targets whose field has this value (`null`: absent too).
    Value(String, serde_json::Value),
}

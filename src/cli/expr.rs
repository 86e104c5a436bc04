//! `rulebench expr`: infix → JSONLogic, and `--to-infix` back.

use serde_json::Value;

use super::{Failure, usage};
use crate::app::types::infix::{self, Fields};
use crate::app::types::parse_json;

/// Converts one expression; `fields` (a page's) enables unknown-field hints.
pub fn run(text: &str, to_infix: bool, fields: &Fields) -> Result<String, Failure> {
    if to_infix {
        let logic: Value = parse_json(text).map_err(|d| usage(format!("--to-infix: {d}")))?;
        // Logic outside the infix grammar is bad input for this command: exit 2.
        return infix::print(&logic)
            .map(|s| format!("{s}\n"))
            .map_err(|e| usage(e.to_string()));
    }
    let logic = infix::parse(text, fields).map_err(|e| usage(e.render(text)))?;
    Ok(format!("{logic}\n"))
}

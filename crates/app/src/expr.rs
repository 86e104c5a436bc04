//! Expressions on their own: plain JSONLogic applied to data, infix text to JSONLogic
//! and back, and JSON read with located errors (`rulebench eval`, `rulebench expr`, the
//! workbench's JSON dialogs).

use serde_json::Value;

use rulebench_core::model::Page;

pub use rulebench_core::diag::Diagnostic;
pub use rulebench_core::infix::{Fields, NoInfix, ParseError};

/// Applies `logic` to `data` with the workbench's engine and json-logic-js semantics.
pub fn eval(logic: &Value, data: &Value) -> Result<Value, String> {
    rulebench_core::engine::apply(logic, data)
}

/// Reads a JSON text (a byte-order mark skipped; nesting and integer limits checked
/// before parsing), or says what is wrong and where.
pub fn read_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, Box<Diagnostic>> {
    rulebench_core::diag::parse_json(text)
}

/// An infix expression as JSONLogic; `fields` (a page's) give unknown-field hints.
pub fn to_logic(text: &str, fields: &Fields) -> Result<Value, ParseError> {
    rulebench_core::infix::parse(text, fields)
}

/// JSONLogic as infix, when the infix grammar can say it.
pub fn to_infix(logic: &Value) -> Result<String, NoInfix> {
    rulebench_core::infix::print(logic)
}

/// The fields a page's datasets hold, for [`to_logic`]'s hints.
pub fn fields_of(page: &Page) -> Fields {
    rulebench_core::infix::fields_of(page)
}

/// A row filter (`evaluate --where`): an infix expression (or JSONLogic, when the text
/// is a JSON object) over a row's columns, compiled once.
pub struct Filter {
    test: rulebench_core::engine::Test,
    /// The expression as given.
    pub text: String,
}

impl Filter {
    /// Reads `text`: JSONLogic when it starts with `{`, else infix.
    pub fn parse(text: &str) -> Result<Filter, String> {
        let logic: Value = if text.trim_start().starts_with('{') {
            read_json(text).map_err(|d| d.to_string())?
        } else {
            to_logic(text, &Fields::default()).map_err(|e| e.to_string())?
        };
        let test = rulebench_core::engine::Test::new(&logic)?;
        Ok(Filter {
            test,
            text: text.to_owned(),
        })
    }

    /// Whether a row (as a JSON object) passes.
    pub fn matches(&self, row: &Value) -> bool {
        self.test.passes(row)
    }
}

impl std::fmt::Debug for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filter").field("text", &self.text).finish()
    }
}

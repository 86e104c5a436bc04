//! A dataset's priority (`priority` in the page file): what breaks recommendation ties
//! after verdict and score (higher wins). Either a numeric field of the target row
//! (`input_cost_per_token`), or an infix expression over it (`0 -
//! target.input_cost_per_token`: the cheapest wins) — computed once per target, not
//! stored in the data. A row whose priority is not a number counts as 0.

use datalogic_rs::DataValue;
use datalogic_rs::bumpalo::Bump;
use serde_json::Value;

use super::engine::{self, CompiledRule};
use super::infix::{self, Fields, ParseError};
use super::model::Row;

/// How a priority reads a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Priority {
    /// A field of the row, by name.
    Field(String),
    /// JSONLogic over `{target: row}`, from the infix text.
    Expression(Value),
}

/// Whether `text` names a field (letters, digits, `_ $ . -`, not `target.…`): anything
/// else is an expression.
fn is_field(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.' | '-'))
        && !text.starts_with("target.")
        && !text.starts_with("source.")
        && !matches!(
            text.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "not"
        )
}

/// Reads a priority; `fields` (the target's, as `target.x`; may be empty) give
/// unknown-field errors with a did-you-mean.
pub fn read(text: &str, fields: &Fields) -> Result<Priority, ParseError> {
    if is_field(text) {
        return Ok(Priority::Field(text.to_owned()));
    }
    infix::parse(text, fields).map(Priority::Expression)
}

/// A priority made ready to compute over many rows.
pub struct Compiled {
    how: How,
}

enum How {
    None,
    Field(String),
    Expression(CompiledRule),
    /// An expression that does not read or compile (validation reports it): 0.
    Broken,
}

impl Compiled {
    pub fn new(text: Option<&str>) -> Compiled {
        let how = match text.map(|t| read(t, &Fields::default())) {
            None => How::None,
            Some(Ok(Priority::Field(f))) => How::Field(f),
            Some(Ok(Priority::Expression(logic))) => match engine::compile(&logic) {
                Ok(c) => How::Expression(c),
                Err(_) => How::Broken,
            },
            Some(Err(_)) => How::Broken,
        };
        Compiled { how }
    }

    /// Whether a change to `changed` fields may move a row's priority.
    pub fn reads_any(&self, changed: &[String]) -> bool {
        match &self.how {
            How::None | How::Broken => false,
            How::Field(f) => changed.contains(f),
            How::Expression(c) => match &c.reads.target {
                None => true,
                Some(paths) => paths
                    .iter()
                    .any(|p| p.is_empty() || changed.iter().any(|f| p[0] == *f)),
            },
        }
    }

    /// The priority of a row in the engine's form.
    pub fn of(&self, row: &DataValue<'_>) -> f64 {
        match &self.how {
            How::None | How::Broken => 0.0,
            How::Field(f) => row
                .get(f.as_str())
                .and_then(DataValue::as_f64)
                .unwrap_or(0.0),
            How::Expression(c) => {
                let arena = Bump::new();
                match engine::eval_pair(&c.logic, DataValue::Null, *row, &arena) {
                    Ok(v) => v.as_f64().filter(|f| f.is_finite()).unwrap_or(0.0),
                    Err(_) => 0.0,
                }
            }
        }
    }

    /// The priority of a row as JSON (a row as rules see it: defaults and patch applied).
    pub fn of_row(&self, row: &Row) -> f64 {
        let arena = Bump::new();
        let value = Value::Object(row.clone());
        let row = DataValue::from_serde_value_in(&value, &arena);
        self.of(&row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_name_is_a_field_and_anything_else_an_expression() {
        let f = Fields::default();
        assert_eq!(read("cost", &f), Ok(Priority::Field("cost".into())));
        assert_eq!(
            read("gpt-4.score", &f),
            Ok(Priority::Field("gpt-4.score".into()))
        );
        assert_eq!(
            read("target.cost", &f),
            Ok(Priority::Expression(json!({"var": "target.cost"})))
        );
        assert_eq!(
            read("0 - target.cost", &f),
            Ok(Priority::Expression(
                json!({"-": [0, {"var": "target.cost"}]})
            ))
        );
        assert!(read("0 -", &f).is_err());
    }

    #[test]
    fn an_expression_computes_over_the_row_and_non_numbers_are_zero() {
        let cheap = Compiled::new(Some("0 - target.cost * 2"));
        let row = |v: serde_json::Value| v.as_object().unwrap().clone();
        assert_eq!(cheap.of_row(&row(json!({"cost": 1.5}))), -3.0);
        assert_eq!(cheap.of_row(&row(json!({"cost": "n/a"}))), 0.0);
        assert!(cheap.reads_any(&["cost".into()]));
        assert!(!cheap.reads_any(&["name".into()]));
        let field = Compiled::new(Some("cost"));
        assert_eq!(field.of_row(&row(json!({"cost": 7}))), 7.0);
        assert_eq!(Compiled::new(None).of_row(&row(json!({"cost": 7}))), 0.0);
    }
}
